// Predefined types are mostly dense, but pair types such as MPI_SHORT_INT have a gap whose
// position is the implementation's business. Rather than hard-coding C struct layouts, ask the
// MPI: pack one element whose bytes hold their own offsets, and read the typemap back.
#include <mpi.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "plan/decode.hpp"

namespace strider::decode {
namespace {

ir::Node discover(MPI_Datatype type) {
  const Bounds b = bounds_of(type);
  if (b.size == 0) return ir::Node::empty();
  if (b.size == b.true_extent) return ir::Node::dense(b.true_lb, b.size);
  // Offsets are identified by byte value, so the span must stay below 256 bytes.
  if (b.true_lb < 0 || b.true_lb + b.true_extent > 255 || b.size > 255) {
    throw Unsupported("predefined type with holes spanning more than 255 bytes");
  }
  std::vector<unsigned char> element(static_cast<std::size_t>(b.true_lb + b.true_extent));
  for (std::size_t i = 0; i < element.size(); ++i) element[i] = static_cast<unsigned char>(i);
  std::vector<unsigned char> packed(static_cast<std::size_t>(b.size));
  int position = 0;
  if (PMPI_Pack(element.data(), 1, type, packed.data(), static_cast<int>(packed.size()), &position,
                MPI_COMM_SELF) != MPI_SUCCESS ||
      position != b.size) {
    throw Unsupported("MPI_Pack of a predefined type failed");
  }
  std::vector<ir::Node> blocks;
  for (unsigned char offset : packed) {
    if (!blocks.empty() && blocks.back().offset + blocks.back().bytes == offset) {
      ++blocks.back().bytes;
    } else {
      blocks.push_back(ir::Node::dense(offset, 1));
    }
  }
  return blocks.size() == 1 ? blocks.front() : ir::Node::list(std::move(blocks));
}

}  // namespace

ir::Node named_layout(MPI_Datatype type) {
  // Named handles live for the whole MPI session, so one discovery per handle suffices.
  // Leaked: MPI calls may come from an atexit handler (runtime/config.cpp).
  static std::mutex mutex;
  static auto* known = new std::unordered_map<MPI_Datatype, ir::Node>;
  {
    std::lock_guard lock(mutex);
    if (auto it = known->find(type); it != known->end()) return it->second;
  }
  ir::Node layout = discover(type);
  std::lock_guard lock(mutex);
  return known->emplace(type, std::move(layout)).first->second;
}

}  // namespace strider::decode
