#include "canon/passes.hpp"

#include <array>

namespace strider::canon {

using ir::Kind;
using ir::Node;

namespace {

bool is_empty(const Node& n) { return n.is_list() && n.children.empty(); }

// Applies `local` to every node, children first; returns whether anything changed.
template <class Local>
bool bottom_up(Node& node, Local&& local) {
  bool changed = false;
  for (Node& c : node.children) changed |= bottom_up(c, local);
  changed |= local(node);
  return changed;
}

// Replaces `node` by `replacement`, adding `extra_offset` to the replacement's offset.
void replace(Node& node, Node replacement, std::int64_t extra_offset) {
  replacement.offset += extra_offset;
  node = std::move(replacement);
}

// Structural equality of two nodes, their own offsets ignored (children are compared fully).
bool same_shape(const Node& a, const Node& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.count == b.count && a.stride == b.stride &&
         a.children == b.children;
}

// A list item seen as `count` copies of `*unit` (its own offset ignored) at offset + i*stride.
struct Run {
  std::int64_t offset;
  std::int64_t count;
  std::int64_t stride;
  const Node* unit;
};

Run as_run(const Node& item) {
  if (item.is_stream() && item.count >= 1) {
    return {item.offset + item.child().offset, item.count, item.stride, &item.child()};
  }
  return {item.offset, 1, 0, &item};
}

// Extends `run` by `next` if `next` continues its progression.
bool extend(Run& run, const Run& next) {
  if (!same_shape(*run.unit, *next.unit)) return false;
  const std::int64_t delta = next.offset - run.offset;
  if (run.count >= 2 && next.count >= 2) {
    if (next.stride != run.stride || delta != run.count * run.stride) return false;
  } else if (run.count >= 2) {
    if (delta != run.count * run.stride) return false;
  } else if (next.count >= 2) {
    if (delta != next.stride) return false;
    run.stride = next.stride;
  } else {
    run.stride = delta;
  }
  run.count += next.count;
  return true;
}

Node to_node(const Run& run) {
  Node unit = *run.unit;
  unit.offset = 0;
  return Node::stream(run.offset, run.count, run.stride, std::move(unit));
}

}  // namespace

bool drop_empty(Node& root) {
  return bottom_up(root, [](Node& n) {
    switch (n.kind) {
      case Kind::Dense:
        if (n.bytes > 0) return false;
        break;
      case Kind::Stream:
        if (n.count > 0 && !is_empty(n.child())) return false;
        break;
      case Kind::List: {
        const auto before = n.children.size();
        std::erase_if(n.children, is_empty);
        if (n.children.empty() && n.offset != 0) break;
        return n.children.size() != before;
      }
    }
    n = Node::empty();
    return true;
  });
}

bool hoist_offsets(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (n.is_stream() && n.child().offset != 0) {
      n.offset += n.child().offset;
      n.child().offset = 0;
      return true;
    }
    if (n.is_list() && n.offset != 0 && !n.children.empty()) {
      for (Node& item : n.children) item.offset += n.offset;
      n.offset = 0;
      return true;
    }
    return false;
  });
}

bool elide_streams(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_stream() || n.count != 1) return false;
    const std::int64_t off = n.offset;
    replace(n, std::move(n.child()), off);
    return true;
  });
}

bool fold_dense(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_stream() || !n.child().is_dense() || n.stride != n.child().bytes) return false;
    n = Node::dense(n.offset + n.child().offset, n.count * n.child().bytes);
    return true;
  });
}

bool flatten_streams(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_stream() || !n.child().is_stream()) return false;
    const Node& inner = n.child();
    if (n.stride != inner.count * inner.stride) return false;
    Node grandchild = std::move(n.child().child());
    n = Node::stream(n.offset + inner.offset, n.count * inner.count, inner.stride,
                     std::move(grandchild));
    return true;
  });
}

bool splice_lists(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_list()) return false;
    if (n.children.size() == 1) {
      const std::int64_t off = n.offset;
      replace(n, std::move(n.children.front()), off);
      return true;
    }
    bool nested = false;
    for (const Node& item : n.children) nested |= item.is_list();
    if (!nested) return false;
    std::vector<Node> flat;
    for (Node& item : n.children) {
      if (!item.is_list()) {
        flat.push_back(std::move(item));
        continue;
      }
      for (Node& inner : item.children) {
        inner.offset += item.offset;
        flat.push_back(std::move(inner));
      }
    }
    n.children = std::move(flat);
    return true;
  });
}

bool merge_blocks(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_list() || n.children.size() < 2) return false;
    std::vector<Node> merged;
    merged.reserve(n.children.size());
    for (Node& item : n.children) {
      if (!merged.empty() && merged.back().is_dense() && item.is_dense() &&
          item.offset == merged.back().offset + merged.back().bytes) {
        merged.back().bytes += item.bytes;
        continue;
      }
      merged.push_back(std::move(item));
    }
    const bool changed = merged.size() != n.children.size();
    n.children = std::move(merged);
    return changed;
  });
}

bool detect_runs(Node& root) {
  return bottom_up(root, [](Node& n) {
    if (!n.is_list() || n.children.size() < 2) return false;
    std::vector<Node> out;
    bool changed = false;
    std::size_t i = 0;
    while (i < n.children.size()) {
      Run run = as_run(n.children[i]);
      std::size_t j = i + 1;
      while (j < n.children.size() && extend(run, as_run(n.children[j]))) ++j;
      if (j - i >= 2) {
        out.push_back(to_node(run));
        changed = true;
      } else {
        out.push_back(std::move(n.children[i]));
      }
      i = j;
    }
    n.children = std::move(out);
    return changed;
  });
}

std::span<const Pass> all_passes() {
  static constexpr std::array<Pass, 8> kPasses{{
      {"drop-empty", &drop_empty},
      {"hoist-offsets", &hoist_offsets},
      {"stream-elision", &elide_streams},
      {"dense-folding", &fold_dense},
      {"stream-flattening", &flatten_streams},
      {"list-splicing", &splice_lists},
      {"block-merging", &merge_blocks},
      {"run-detection", &detect_runs},
  }};
  return kPasses;
}

}  // namespace strider::canon
