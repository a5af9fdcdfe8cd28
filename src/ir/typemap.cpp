#include "ir/typemap.hpp"

#include <stdexcept>

namespace strider::ir {
namespace {

void emit(const Node& node, std::int64_t base, std::vector<std::int64_t>& out, std::size_t limit) {
  const std::int64_t origin = base + node.offset;
  switch (node.kind) {
    case Kind::Dense:
      if (out.size() + static_cast<std::size_t>(node.bytes) > limit) {
        throw std::length_error("typemap larger than the enumeration limit");
      }
      for (std::int64_t b = 0; b < node.bytes; ++b) out.push_back(origin + b);
      return;
    case Kind::Stream:
      for (std::int64_t i = 0; i < node.count; ++i) {
        emit(node.child(), origin + i * node.stride, out, limit);
      }
      return;
    case Kind::List:
      for (const Node& item : node.children) emit(item, origin, out, limit);
      return;
  }
}

}  // namespace

std::vector<std::int64_t> byte_offsets(const Node& node, std::size_t limit) {
  std::vector<std::int64_t> out;
  emit(node, 0, out, limit);
  return out;
}

}  // namespace strider::ir
