#include "canon/canonicalize.hpp"

#include <stdexcept>

#include "canon/passes.hpp"

namespace strider::canon {

ir::Node canonicalize(ir::Node node, std::vector<Step>* trace) {
  // Every pass strictly shrinks or normalizes the tree, so a fixed point comes quickly; the
  // bound only turns a bug into an exception instead of a hang.
  constexpr int kMaxSweeps = 10000;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    for (const Pass& pass : all_passes()) {
      if (pass.apply(node)) {
        changed = true;
        if (trace) trace->push_back({pass.name, node});
      }
    }
    if (!changed) return node;
  }
  throw std::logic_error("canonicalization did not reach a fixed point");
}

namespace {

class Lowering {
 public:
  explicit Lowering(std::size_t max_pieces) : max_pieces_(max_pieces) {}

  // Appends the pieces of `node` placed at `base`; false when over budget.
  bool emit(const ir::Node& node, std::int64_t base, std::vector<StridedBlock>& out) {
    const std::int64_t origin = base + node.offset;
    switch (node.kind) {
      case ir::Kind::Dense:
        return push(StridedBlock{origin, node.bytes, {}}, out);
      case ir::Kind::Stream: {
        std::vector<StridedBlock> inner;
        if (!emit(node.child(), 0, inner)) return false;
        if (inner.size() == 1) {
          StridedBlock sb = std::move(inner.front());
          sb.offset += origin;
          sb.dims.push_back(Dim{node.count, node.stride});
          return push(std::move(sb), out);
        }
        for (std::int64_t i = 0; i < node.count; ++i) {
          for (const StridedBlock& piece : inner) {
            StridedBlock sb = piece;
            sb.offset += origin + i * node.stride;
            if (!push(std::move(sb), out)) return false;
          }
        }
        return true;
      }
      case ir::Kind::List:
        for (const ir::Node& item : node.children) {
          if (!emit(item, origin, out)) return false;
        }
        return true;
    }
    return false;
  }

 private:
  bool push(StridedBlock sb, std::vector<StridedBlock>& out) {
    // Unrolling is bounded by the work done, not only by the pieces kept, since pieces that
    // merge into their predecessor cost time but no memory.
    if (++pushes_ > 4 * max_pieces_) return false;
    sb = normalized(std::move(sb));
    if (sb.empty()) return true;
    if (out.empty() || !try_append(out.back(), sb)) {
      if (out.size() >= max_pieces_) return false;
      out.push_back(std::move(sb));
      return true;
    }
    // The grown last piece may now continue the one before it.
    while (out.size() >= 2 && try_append(out[out.size() - 2], out.back())) out.pop_back();
    return true;
  }

  std::size_t max_pieces_;
  std::size_t pushes_ = 0;
};

}  // namespace

std::optional<CanonicalForm> lower(const ir::Node& node, std::size_t max_pieces) {
  CanonicalForm form;
  Lowering lowering(max_pieces);
  if (!lowering.emit(node, 0, form.pieces)) return std::nullopt;
  for (const StridedBlock& sb : form.pieces) form.size += sb.packed_bytes();
  return form;
}

std::optional<CanonicalForm> canonical_form(const ir::Node& node, std::size_t max_pieces) {
  return lower(canonicalize(node), max_pieces);
}

}  // namespace strider::canon
