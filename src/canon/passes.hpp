// Rewrite passes over the IR. Each pass rewrites a tree in place, bottom-up, and reports whether
// it changed anything. None changes the ordered byte sequence the tree describes (the typemap);
// tests check this for every pass on random trees.
#pragma once

#include <span>

#include "ir/node.hpp"

namespace strider::canon {

struct Pass {
  const char* name;
  bool (*apply)(ir::Node&);  // the rule at every node of a tree, children first
  bool (*at)(ir::Node&);     // the rule at one node only (its children untouched)
};

// Empty streams, zero-byte blocks and empty list items disappear.
bool drop_empty(ir::Node& node);
// Offsets move outward: a stream's child and a list sit at offset 0.
bool hoist_offsets(ir::Node& node);
// A stream of count 1 is replaced by its child, the stream's offset kept.
bool elide_streams(ir::Node& node);
// A stream whose stride equals its dense child's size becomes one dense block.
bool fold_dense(ir::Node& node);
// stream(n, s, stream(m, t, c)) with s == m*t becomes stream(n*m, t, c).
bool flatten_streams(ir::Node& node);
// Lists inside lists are spliced; a list of one item becomes that item.
bool splice_lists(ir::Node& node);
// Adjacent dense blocks of a list that touch are merged.
bool merge_blocks(ir::Node& node);
// Adjacent list items that are shifted copies of one unit become (or extend) a stream.
bool detect_runs(ir::Node& node);

// The same rules at one node; the passes above apply them at every node, children first.
bool drop_empty_at(ir::Node& node);
bool hoist_offsets_at(ir::Node& node);
bool elide_streams_at(ir::Node& node);
bool fold_dense_at(ir::Node& node);
bool flatten_streams_at(ir::Node& node);
bool splice_lists_at(ir::Node& node);
bool merge_blocks_at(ir::Node& node);
bool detect_runs_at(ir::Node& node);

// Whether `node` is a list at which none of the rules above would change anything: one scan that
// stops at the first item a rule would rewrite.
bool list_is_settled(ir::Node& node);

// The passes in the order the canonicalizer applies them.
std::span<const Pass> all_passes();

}  // namespace strider::canon
