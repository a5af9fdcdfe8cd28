// The bytes a canonical form describes, in packed order: the form rebuilt as an IR tree (its
// pieces listed, the list repeated) and enumerated, to compare with the typemap it came from.
#pragma once

#include <cstdint>
#include <vector>

#include "canon/strided_block.hpp"
#include "ir/node.hpp"
#include "ir/typemap.hpp"

namespace strider::testing {

inline std::vector<std::int64_t> form_offsets(const canon::CanonicalForm& form) {
  using ir::Node;
  std::vector<Node> items;
  for (const canon::StridedBlock& sb : form.pieces) {
    Node n = Node::dense(sb.offset, sb.block);
    for (const canon::Dim& d : sb.dims) n = Node::stream(0, d.count, d.stride, std::move(n));
    items.push_back(std::move(n));
  }
  Node all = Node::list(std::move(items));
  for (const canon::Dim& d : form.repeat) all = Node::stream(0, d.count, d.stride, std::move(all));
  return ir::byte_offsets(all);
}

}  // namespace strider::testing
