#include "ir/constructors.hpp"

#include <algorithm>
#include <stdexcept>

namespace strider::ir {
namespace {

Node block_of(std::int64_t blocklength, const Child& child) {
  return Node::stream(0, blocklength, child.extent, child.layout);
}

// A block of a block list. One element is the element and a block of a contiguous element is one
// dense run: built directly (what stream elision and dense folding would make of block_of), so a
// long list allocates no stream node per entry. The result sits at the child's own offset.
Node list_block_of(std::int64_t blocklength, const Child& child) {
  const Node& c = child.layout;
  if (blocklength == 1) return c;
  if (c.is_dense() && c.bytes == child.extent) return Node::dense(c.offset, blocklength * c.bytes);
  return block_of(blocklength, child);
}

Node blocks_at(std::span<const std::int64_t> blocklengths, std::span<const std::int64_t> disps,
               std::int64_t unit, const Child& child) {
  if (blocklengths.size() != disps.size()) {
    throw std::invalid_argument("block lengths and displacements differ in number");
  }
  std::vector<Node> items;
  items.reserve(disps.size());
  for (std::size_t i = 0; i < disps.size(); ++i) {
    Node block = list_block_of(blocklengths[i], child);
    block.offset += disps[i] * unit;
    items.push_back(std::move(block));
  }
  return Node::list(std::move(items));
}

// Element strides of an n-dimensional array of `sizes`, and the dimensions listed from the
// fastest-varying to the slowest (the order in which nested streams are built).
struct ArrayGeometry {
  std::vector<std::int64_t> stride;
  std::vector<std::size_t> fastest_first;
};

ArrayGeometry geometry(Order order, std::span<const std::int64_t> sizes, std::int64_t extent) {
  const std::size_t n = sizes.size();
  ArrayGeometry g;
  g.stride.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) g.fastest_first.push_back(order == Order::C ? n - 1 - k : k);
  std::int64_t step = extent;
  for (std::size_t d : g.fastest_first) {
    g.stride[d] = step;
    step *= sizes[d];
  }
  return g;
}

}  // namespace

Node contiguous(std::int64_t count, const Child& child) {
  return Node::stream(0, count, child.extent, child.layout);
}

Node vector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_elements,
            const Child& child) {
  return hvector(count, blocklength, stride_elements * child.extent, child);
}

Node hvector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_bytes,
             const Child& child) {
  return Node::stream(0, count, stride_bytes, block_of(blocklength, child));
}

Node indexed(std::span<const std::int64_t> blocklengths,
             std::span<const std::int64_t> displacements_elements, const Child& child) {
  return blocks_at(blocklengths, displacements_elements, child.extent, child);
}

Node hindexed(std::span<const std::int64_t> blocklengths,
              std::span<const std::int64_t> displacements_bytes, const Child& child) {
  return blocks_at(blocklengths, displacements_bytes, 1, child);
}

Node indexed_block(std::int64_t blocklength, std::span<const std::int64_t> displacements_elements,
                   const Child& child) {
  const std::vector<std::int64_t> lengths(displacements_elements.size(), blocklength);
  return blocks_at(lengths, displacements_elements, child.extent, child);
}

Node hindexed_block(std::int64_t blocklength, std::span<const std::int64_t> displacements_bytes,
                    const Child& child) {
  const std::vector<std::int64_t> lengths(displacements_bytes.size(), blocklength);
  return blocks_at(lengths, displacements_bytes, 1, child);
}

Node structure(std::span<const std::int64_t> blocklengths,
               std::span<const std::int64_t> displacements_bytes, std::span<const Child> children) {
  if (blocklengths.size() != displacements_bytes.size() || blocklengths.size() != children.size()) {
    throw std::invalid_argument("struct argument lists differ in length");
  }
  std::vector<Node> items;
  items.reserve(children.size());
  for (std::size_t i = 0; i < children.size(); ++i) {
    Node block = list_block_of(blocklengths[i], children[i]);
    block.offset += displacements_bytes[i];
    items.push_back(std::move(block));
  }
  return Node::list(std::move(items));
}

Node subarray(Order order, std::span<const std::int64_t> sizes,
              std::span<const std::int64_t> subsizes, std::span<const std::int64_t> starts,
              const Child& element) {
  if (sizes.size() != subsizes.size() || sizes.size() != starts.size() || sizes.empty()) {
    throw std::invalid_argument("subarray argument lists differ in length or are empty");
  }
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (subsizes[d] < 1 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d]) {
      throw std::invalid_argument("subarray dimension out of range");
    }
  }
  const ArrayGeometry g = geometry(order, sizes, element.extent);
  Node node = element.layout;
  // The start offset of every dimension is kept, a subsize of 1 included.
  for (std::size_t d : g.fastest_first) {
    node = Node::stream(starts[d] * g.stride[d], subsizes[d], g.stride[d], std::move(node));
  }
  return node;
}

namespace {

// The indices of one darray dimension owned by process coordinate `coord`, as nested streams
// over `inner`, in increasing index order.
Node owned_indices(std::int64_t gsize, Distribution distrib, std::int64_t darg, std::int64_t psize,
                   std::int64_t coord, std::int64_t stride, Node inner) {
  if (distrib == Distribution::None) {
    if (psize != 1) throw std::invalid_argument("darray: DISTRIBUTE_NONE needs psize 1");
    return Node::stream(0, gsize, stride, std::move(inner));
  }
  if (distrib == Distribution::Block) {
    const std::int64_t b = darg == kDefaultDistributionArg ? (gsize + psize - 1) / psize : darg;
    if (b <= 0 || b * psize < gsize) throw std::invalid_argument("darray: block too small");
    const std::int64_t first = coord * b;
    const std::int64_t count = std::max<std::int64_t>(0, std::min(gsize, first + b) - first);
    return Node::stream(first * stride, count, stride, std::move(inner));
  }
  const std::int64_t b = darg == kDefaultDistributionArg ? 1 : darg;
  if (b <= 0) throw std::invalid_argument("darray: cyclic argument must be positive");
  const std::int64_t first = coord * b;
  const std::int64_t period = b * psize;
  if (first >= gsize) return Node::empty();
  const std::int64_t full = (gsize - first) / period;  // whole blocks b at first + k*period
  const std::int64_t tail_start = first + full * period;
  const std::int64_t tail = std::min(b, std::max<std::int64_t>(0, gsize - tail_start));
  std::vector<Node> items;
  items.push_back(
      Node::stream(first * stride, full, period * stride, Node::stream(0, b, stride, inner)));
  items.push_back(Node::stream(tail_start * stride, tail, stride, std::move(inner)));
  return Node::list(std::move(items));
}

}  // namespace

Node darray(std::int64_t size, std::int64_t rank, Order order, std::span<const std::int64_t> gsizes,
            std::span<const Distribution> distribs, std::span<const std::int64_t> dargs,
            std::span<const std::int64_t> psizes, const Child& element) {
  const std::size_t n = gsizes.size();
  if (n == 0 || distribs.size() != n || dargs.size() != n || psizes.size() != n) {
    throw std::invalid_argument("darray argument lists differ in length or are empty");
  }
  std::int64_t grid = 1;
  for (std::int64_t p : psizes) {
    if (p < 1) throw std::invalid_argument("darray: process grid sizes must be positive");
    grid *= p;
  }
  if (grid != size || rank < 0 || rank >= size) {
    throw std::invalid_argument("darray: process grid does not match size/rank");
  }
  // Row-major coordinates of `rank` in the process grid.
  std::vector<std::int64_t> coord(n);
  std::int64_t rest = rank;
  for (std::size_t k = n; k-- > 0;) {
    coord[k] = rest % psizes[k];
    rest /= psizes[k];
  }
  const ArrayGeometry g = geometry(order, gsizes, element.extent);
  Node node = element.layout;
  for (std::size_t d : g.fastest_first) {
    node = owned_indices(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d], g.stride[d],
                         std::move(node));
  }
  return node;
}

}  // namespace strider::ir
