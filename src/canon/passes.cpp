#include "canon/passes.hpp"

#include <array>

namespace strider::canon {

using ir::Kind;
using ir::Node;

namespace {

bool is_empty(const Node& n) { return n.is_list() && n.children.empty(); }

// Applies `local` to every node, children first; returns whether anything changed.
bool bottom_up(Node& node, bool (*local)(Node&)) {
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
  Node* unit;
};

Run as_run(Node& item) {
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

// The run as one stream. Its unit is moved out of the list item it came from, which the caller
// overwrites next, so a long unit is never copied.
Node to_node(const Run& run) {
  Node unit = std::move(*run.unit);
  unit.offset = 0;
  return Node::stream(run.offset, run.count, run.stride, std::move(unit));
}

}  // namespace

// The rules at one node. Each is linear in the node's own items and allocates nothing unless it
// changes them, so a canonicalization costs O(nodes) per round, not O(nodes) per copy.

bool drop_empty_at(Node& n) {
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
}

bool hoist_offsets_at(Node& n) {
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
}

bool elide_streams_at(Node& n) {
  if (!n.is_stream() || n.count != 1) return false;
  const std::int64_t off = n.offset;
  replace(n, std::move(n.child()), off);
  return true;
}

bool fold_dense_at(Node& n) {
  if (!n.is_stream() || !n.child().is_dense() || n.stride != n.child().bytes) return false;
  n = Node::dense(n.offset + n.child().offset, n.count * n.child().bytes);
  return true;
}

bool flatten_streams_at(Node& n) {
  if (!n.is_stream() || !n.child().is_stream()) return false;
  const Node& inner = n.child();
  if (n.stride != inner.count * inner.stride) return false;
  Node grandchild = std::move(n.child().child());
  n = Node::stream(n.offset + inner.offset, n.count * inner.count, inner.stride,
                   std::move(grandchild));
  return true;
}

bool splice_lists_at(Node& n) {
  if (!n.is_list()) return false;
  if (n.children.size() == 1) {
    const std::int64_t off = n.offset;
    replace(n, std::move(n.children.front()), off);
    return true;
  }
  std::size_t total = 0;
  bool nested = false;
  for (const Node& item : n.children) {
    nested |= item.is_list();
    total += item.is_list() ? item.children.size() : 1;
  }
  if (!nested) return false;
  std::vector<Node> flat;
  flat.reserve(total);
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
}

// In place: item r is merged into the last kept item w or moved down to w + 1.
bool merge_blocks_at(Node& n) {
  if (!n.is_list() || n.children.size() < 2) return false;
  std::vector<Node>& items = n.children;
  std::size_t w = 0;
  for (std::size_t r = 1; r < items.size(); ++r) {
    Node& last = items[w];
    if (last.is_dense() && items[r].is_dense() && items[r].offset == last.offset + last.bytes) {
      last.bytes += items[r].bytes;
      continue;
    }
    if (++w != r) items[w] = std::move(items[r]);
  }
  if (w + 1 == items.size()) return false;
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(w + 1), items.end());
  return true;
}

// In place, like merge_blocks_at: each maximal run of items i..j-1 is written at w.
bool detect_runs_at(Node& n) {
  if (!n.is_list() || n.children.size() < 2) return false;
  std::vector<Node>& items = n.children;
  bool changed = false;
  std::size_t w = 0, i = 0;
  while (i < items.size()) {
    Run run = as_run(items[i]);
    std::size_t j = i + 1;
    while (j < items.size() && extend(run, as_run(items[j]))) ++j;
    if (j - i >= 2) {
      items[w] = to_node(run);
      changed = true;
    } else if (w != i) {
      items[w] = std::move(items[i]);
    }
    ++w;
    i = j;
  }
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(w), items.end());
  return changed;
}

bool list_is_settled(Node& n) {
  if (!n.is_list()) return false;
  std::vector<Node>& items = n.children;
  if (items.empty()) return n.offset == 0;
  if (n.offset != 0 || items.size() == 1) return false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Node& item = items[i];
    if (item.is_list()) return false;  // empty (drop) or nested (splice)
    if (i == 0) continue;
    const Node& prev = items[i - 1];
    if (prev.is_dense() && item.is_dense() && item.offset == prev.offset + prev.bytes) return false;
    Run run = as_run(items[i - 1]);
    if (extend(run, as_run(items[i]))) return false;
  }
  return true;
}

bool drop_empty(Node& root) { return bottom_up(root, &drop_empty_at); }
bool hoist_offsets(Node& root) { return bottom_up(root, &hoist_offsets_at); }
bool elide_streams(Node& root) { return bottom_up(root, &elide_streams_at); }
bool fold_dense(Node& root) { return bottom_up(root, &fold_dense_at); }
bool flatten_streams(Node& root) { return bottom_up(root, &flatten_streams_at); }
bool splice_lists(Node& root) { return bottom_up(root, &splice_lists_at); }
bool merge_blocks(Node& root) { return bottom_up(root, &merge_blocks_at); }
bool detect_runs(Node& root) { return bottom_up(root, &detect_runs_at); }

std::span<const Pass> all_passes() {
  static constexpr std::array<Pass, 8> kPasses{{
      {"drop-empty", &drop_empty, &drop_empty_at},
      {"hoist-offsets", &hoist_offsets, &hoist_offsets_at},
      {"stream-elision", &elide_streams, &elide_streams_at},
      {"dense-folding", &fold_dense, &fold_dense_at},
      {"stream-flattening", &flatten_streams, &flatten_streams_at},
      {"list-splicing", &splice_lists, &splice_lists_at},
      {"block-merging", &merge_blocks, &merge_blocks_at},
      {"run-detection", &detect_runs, &detect_runs_at},
  }};
  return kPasses;
}

}  // namespace strider::canon
