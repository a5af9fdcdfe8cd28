#include "canon/canonicalize.hpp"

#include <algorithm>
#include <stdexcept>

#include "canon/passes.hpp"

namespace strider::canon {

namespace {

// Bound on rewriting one node: every rule strictly shrinks or normalizes, so a fixed point comes
// quickly; the bound only turns a bug into an exception.
constexpr int kMaxRounds = 10000;

// Records the whole tree after each rewrite, for tools and debug logs. Snapshots cost O(tree)
// each, so only the first kMaxSteps are kept, then one last step with the result.
class Tracer {
 public:
  Tracer(const ir::Node& root, std::vector<Step>& steps) : root_(root), steps_(steps) {}
  void record(const char* pass) {
    if (recorded_ < kMaxSteps) {
      steps_.push_back({pass, root_});
      ++recorded_;
    } else {
      ++skipped_;
    }
  }
  void finish() {
    if (skipped_ > 0) {
      steps_.push_back({"(" + std::to_string(skipped_) + " more steps)", root_});
    }
  }

 private:
  static constexpr std::size_t kMaxSteps = 256;
  const ir::Node& root_;
  std::vector<Step>& steps_;
  std::size_t recorded_ = 0;
  std::size_t skipped_ = 0;
};

// Rewrites `n`, whose children are canonical, until no rule applies at it. Run detection is the
// only rule that makes new children (streams over a moved unit); they are settled in turn.
void settle(ir::Node& n, Tracer* tracer) {
  for (int round = 0; round < kMaxRounds; ++round) {
    // A non-empty dense block is canonical: the common leaf costs one test. A list is checked by
    // one scan rather than by running each rule over its items.
    if ((n.is_dense() && n.bytes > 0) || list_is_settled(n)) return;
    bool changed = false;
    for (const Pass& pass : all_passes()) {
      if (!pass.at(n)) continue;
      changed = true;
      if (tracer) tracer->record(pass.name);
      if (pass.at == &detect_runs_at) {
        for (ir::Node& c : n.children) settle(c, tracer);
      }
    }
    if (!changed) return;
  }
  throw std::logic_error("canonicalization did not reach a fixed point");
}

// One walk, children first: each node is visited once plus its own rewrites, so the cost is
// linear in the tree, where sweeping every pass over the whole tree to a fixed point re-walked
// (and re-copied) every node once per pass per sweep.
void canonicalize_in_place(ir::Node& n, Tracer* tracer) {
  for (ir::Node& c : n.children) canonicalize_in_place(c, tracer);
  settle(n, tracer);
}

}  // namespace

ir::Node canonicalize(ir::Node node, std::vector<Step>* trace) {
  if (trace) {
    Tracer tracer(node, *trace);
    canonicalize_in_place(node, &tracer);
    tracer.finish();
  } else {
    canonicalize_in_place(node, nullptr);
  }
  return node;
}

namespace {

class Lowering {
 public:
  explicit Lowering(std::size_t max_pieces) : max_pieces_(max_pieces) {}

  // Appends the pieces of `node` placed at `base`; false when over budget.
  bool emit(const ir::Node& node, std::int64_t base, std::vector<StridedBlock>& out) {
    const std::int64_t origin = base + node.offset;
    switch (node.kind) {
      case ir::Kind::Dense:  // a block without dims is already normalized
        return push_normalized(
            node.bytes > 0 ? StridedBlock{origin, node.bytes, {}} : StridedBlock{}, out);
      case ir::Kind::Stream: {
        // A stream of one dense block (what run detection makes) is one piece: no scratch list.
        if (const ir::Node& c = node.child(); c.is_dense()) {
          if (c.bytes <= 0) return true;
          return push(StridedBlock{origin + c.offset, c.bytes, {Dim{node.count, node.stride}}},
                      out);
        }
        std::vector<StridedBlock> inner;
        if (!emit(node.child(), 0, inner)) return false;
        if (inner.size() == 1) {
          StridedBlock sb = std::move(inner.front());
          sb.offset += origin;
          sb.dims.push_back(Dim{node.count, node.stride});
          return push(std::move(sb), out);
        }
        // Copies of the child are shifted by the stride. Its pieces are already normalized and
        // merged, so only the junction between copies could merge; when the first junction does
        // not, none does (they are translates of each other) and the copies are appended as they
        // are, which keeps unrolling cheap.
        const auto total = static_cast<std::size_t>(node.count) * inner.size();
        out.reserve(out.size() + std::min(total, max_pieces_));
        StridedBlock last = inner.back(), first = inner.front();
        first.offset += node.stride;
        if (try_append(last, first)) {
          for (std::int64_t i = 0; i < node.count; ++i) {
            for (const StridedBlock& piece : inner) {
              StridedBlock sb = piece;
              sb.offset += origin + i * node.stride;
              if (!push_normalized(sb, out)) return false;
            }
          }
          return true;
        }
        if (out.size() + total > max_pieces_ || (pushes_ += total) > 4 * max_pieces_) return false;
        for (std::int64_t i = 0; i < node.count; ++i) {
          for (std::size_t j = 0; j < inner.size(); ++j) {
            StridedBlock sb = inner[j];
            sb.offset += origin + i * node.stride;
            // The very first piece may still continue what came before this stream.
            if (i == 0 && j == 0) {
              if (!push_normalized(sb, out)) return false;
            } else {
              out.push_back(sb);
            }
          }
        }
        return true;
      }
      case ir::Kind::List:
        // Room for one piece per item at least, growing geometrically as push_back would.
        if (out.capacity() - out.size() < node.children.size()) {
          out.reserve(std::min(max_pieces_,
                               std::max(2 * out.capacity(), out.size() + node.children.size())));
        }
        for (const ir::Node& item : node.children) {
          if (!emit(item, origin, out)) return false;
        }
        return true;
    }
    return false;
  }

 private:
  bool push(StridedBlock sb, std::vector<StridedBlock>& out) {
    return push_normalized(normalized(sb), out);
  }

  // Appends a normalized piece, merging it into the last one where it continues it.
  bool push_normalized(const StridedBlock& sb, std::vector<StridedBlock>& out) {
    // Unrolling is bounded by the work done, not only by the pieces kept, since pieces that
    // merge into their predecessor cost time but no memory.
    if (++pushes_ > 4 * max_pieces_) return false;
    if (sb.empty()) return true;
    if (out.empty() || !try_append(out.back(), sb)) {
      if (out.size() >= max_pieces_) return false;
      out.push_back(sb);
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
  try {
    // Streams at the root over a non-strided part become the form's repetition instead of
    // being unrolled: a vector of structs stays the struct's few pieces.
    DimList outer;  // outermost first while peeling
    std::int64_t base = 0;
    const ir::Node* inner = &node;
    while (inner->is_stream() && outer.size() < kMaxDims) {
      outer.push_back(Dim{inner->count, inner->stride});
      base += inner->offset;
      inner = &inner->child();
    }
    std::vector<StridedBlock> pieces;
    if (!outer.empty() && Lowering(max_pieces).emit(*inner, base, pieces) && pieces.size() > 1) {
      form.pieces = std::move(pieces);
      for (std::size_t k = outer.size(); k-- > 0;) {
        const Dim d = outer[k];
        if (d.count == 1) continue;
        if (!form.repeat.empty() &&
            d.stride == form.repeat.back().count * form.repeat.back().stride) {
          form.repeat.back().count *= d.count;
        } else {
          form.repeat.push_back(d);
        }
      }
    } else if (!Lowering(max_pieces).emit(node, 0, form.pieces)) {
      return std::nullopt;
    }
  } catch (const std::length_error&) {
    return std::nullopt;  // more irreducible dims than a strided block holds
  }
  derive_summaries(form);
  if (form.size == 0) form = CanonicalForm{};
  return form;
}

std::optional<CanonicalForm> canonical_form(const ir::Node& node, std::size_t max_pieces) {
  return lower(canonicalize(node), max_pieces);
}

}  // namespace strider::canon
