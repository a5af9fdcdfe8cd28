// The MPI type constructors expressed over the IR (MPI-4.1 section 5.1), free of MPI itself.
//
// Each takes the child's layout and the child's extent (the distance between consecutive child
// elements, which the MPI implementation reports). Bounds (lb, extent) of the result are not
// computed here: the decoder reads them from the MPI library, which is the authority (struct
// padding, for one, is implementation-defined).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/node.hpp"

namespace strider::ir {

struct Child {
  Node layout;
  std::int64_t extent = 0;
};

Node contiguous(std::int64_t count, const Child& child);
Node vector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_elements,
            const Child& child);
Node hvector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_bytes,
             const Child& child);
Node indexed(std::span<const std::int64_t> blocklengths,
             std::span<const std::int64_t> displacements_elements, const Child& child);
Node hindexed(std::span<const std::int64_t> blocklengths,
              std::span<const std::int64_t> displacements_bytes, const Child& child);
Node indexed_block(std::int64_t blocklength, std::span<const std::int64_t> displacements_elements,
                   const Child& child);
Node hindexed_block(std::int64_t blocklength, std::span<const std::int64_t> displacements_bytes,
                    const Child& child);
Node structure(std::span<const std::int64_t> blocklengths,
               std::span<const std::int64_t> displacements_bytes, std::span<const Child> children);

enum class Order { C, Fortran };

Node subarray(Order order, std::span<const std::int64_t> sizes,
              std::span<const std::int64_t> subsizes, std::span<const std::int64_t> starts,
              const Child& element);

enum class Distribution { Block, Cyclic, None };
constexpr std::int64_t kDefaultDistributionArg = -1;  // MPI_DISTRIBUTE_DFLT_DARG

// The process grid is row-major over `psizes` whatever `order` is (MPI-4.1 5.1.4).
// Throws std::invalid_argument for arguments MPI declares erroneous.
Node darray(std::int64_t size, std::int64_t rank, Order order, std::span<const std::int64_t> gsizes,
            std::span<const Distribution> distribs, std::span<const std::int64_t> dargs,
            std::span<const std::int64_t> psizes, const Child& element);

}  // namespace strider::ir
