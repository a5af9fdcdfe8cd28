// MPI datatype handle -> IR, through MPI_Type_get_envelope / MPI_Type_get_contents.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <stdexcept>

#include "ir/node.hpp"

namespace strider::decode {

// Thrown when a datatype (or part of one) cannot be expressed; callers fall back to the MPI.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the MPI library itself reports for a type (the authority for bounds).
struct Bounds {
  std::int64_t size = 0;
  std::int64_t lb = 0;
  std::int64_t extent = 0;
  std::int64_t true_lb = 0;
  std::int64_t true_extent = 0;
};
Bounds bounds_of(MPI_Datatype type);

// Cap on the block-list entries (indexed, hindexed, *_block, struct counts, summed over the whole
// type) that Strider decodes; a larger type is left to the MPI. Checked from each envelope before
// its contents are read, so a type over the cap costs little more than the entries up to it
// (about 2^20 times the per-entry cost, some tens of milliseconds). 2^20 matches
// canon::kMaxPieces: an irregular list that long would be refused at lowering anyway, after all
// the work.
constexpr std::int64_t kMaxListEntries = std::int64_t{1} << 20;

// The layout of a type whose MPI bounds are `bounds`; the IR's byte count and span are checked
// against them, so a mismatch becomes Unsupported, never a wrong byte. Throws Unsupported when the
// type has more than `max_entries` list entries. Requires MPI to be initialized.
ir::Node decode(MPI_Datatype type, const Bounds& bounds,
                std::int64_t max_entries = kMaxListEntries);

// The layout of a predefined (named) type, discovered once per handle from the MPI itself.
ir::Node named_layout(MPI_Datatype type);

// What the envelope says of a handle: predefined (named, or a parameterized F90 type, which must
// not be freed either), derived, or unknown (the query failed: an invalid handle, or an MPI-4
// large-count type this decoder does not read).
enum class Origin { Predefined, Derived, Unknown };
Origin origin_of(MPI_Datatype type);

}  // namespace strider::decode
