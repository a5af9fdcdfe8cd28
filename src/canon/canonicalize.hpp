// Drives the rewrite passes to a fixed point and lowers the result to the canonical form.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "canon/strided_block.hpp"
#include "ir/node.hpp"

namespace strider::canon {

// One step of a canonicalization, for tools and debug logs.
struct Step {
  std::string pass;
  ir::Node result;
};

// Rewrites the tree until no pass changes it: one walk, children first, each node rewritten by the
// passes' rules until none applies (linear in the tree). Records the tree after each change in
// `trace` if given (the first 256, then the result).
ir::Node canonicalize(ir::Node node, std::vector<Step>* trace = nullptr);

// Default bound on the pieces of a non-strided form; larger types are left to the system MPI.
constexpr std::size_t kMaxPieces = std::size_t{1} << 20;

// Lowers a (canonical) tree to pieces in typemap order, merging pieces that continue each
// other. Streams over non-strided children are unrolled; std::nullopt if that would exceed
// `max_pieces`.
std::optional<CanonicalForm> lower(const ir::Node& node, std::size_t max_pieces = kMaxPieces);

// canonicalize + lower.
std::optional<CanonicalForm> canonical_form(const ir::Node& node,
                                            std::size_t max_pieces = kMaxPieces);

}  // namespace strider::canon
