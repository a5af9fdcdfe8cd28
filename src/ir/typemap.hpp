// Reference semantics of the IR: the ordered byte offsets a node describes.
// Used by tests as the oracle for every rewrite and for the pack engines.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/node.hpp"

namespace strider::ir {

// Byte offsets in packed order. Throws std::length_error if there would be more than `limit`.
std::vector<std::int64_t> byte_offsets(const Node& node, std::size_t limit = 1u << 24);

}  // namespace strider::ir
