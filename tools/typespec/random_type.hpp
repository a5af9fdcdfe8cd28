// Seeded random generator of type texts (see type_spec.hpp), plus the layout model it uses to
// keep generated types valid: a typemap enumeration that follows the MPI standard's rules for
// bounds, restricted to the cases where Open MPI 4.1 and MPICH 4.0 agree.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "typespec/type_spec.hpp"

namespace strider::typespec {

struct RandomTypeOptions {
  int max_depth = 4;
  int64_t max_extent_bytes = 1 << 16;  // bound on |lb|, extent and true extent
  int64_t max_size_bytes = 1 << 14;
  bool allow_negative_strides = true;
  bool allow_overlap = false;  // false: no byte of the typemap appears twice
  bool allow_lb_ub_markers = STRIDER_HAVE_MPI_LB;
  bool allow_darray = true;
  // Also guarantee that consecutive copies (count > 1) never overlap: extent > 0 and the data
  // bytes are distinct modulo the extent. Ignored when allow_overlap is set.
  bool count_safe = true;
};

// Returns a type text in canonical form (format(parse(s)) == s). Deterministic for a given rng
// state (no std distributions, whose output differs between standard libraries).
std::string random_type(std::mt19937_64& rng, const RandomTypeOptions& opts);

// Lower/upper bound of a type under one reading of the marker rules.
struct Bounds {
  int64_t lb = 0;
  int64_t ub = 0;
  bool sticky_lb = false;
  bool sticky_ub = false;
  bool operator==(const Bounds&) const = default;
};

// A contiguous run of data bytes at `offset` (relative to the buffer start).
struct Run {
  int64_t offset;
  int64_t length;
  bool operator==(const Run&) const = default;
};

struct Layout {
  int64_t size = 0;
  // Open MPI 4.1 treats bounds set by resized/subarray/darray as sticky markers (MPI-1 LB/UB
  // semantics, propagated through nesting); MPICH 4.0 only honours LB/UB markers that are
  // direct struct members and does not propagate them.
  Bounds sticky;
  Bounds plain;
  int64_t true_lb = 0;  // bounds of the data bytes; 0/0 for an empty type
  int64_t true_ub = 0;
  // Data bytes (runs, size, true bounds) are the same in both MPIs.
  bool portable = true;
  // Also lb/extent are the same in both MPIs (both readings agree, no struct padding).
  bool bounds_portable = true;
  int marker = 0;         // 1: the named MPI_LB, 2: the named MPI_UB
  int64_t align = 1;      // conservative alignment of the data, for extent padding checks
  bool aligned = true;    // no MPI pads this type's extent (internal to the model)
  std::vector<Run> runs;  // data bytes in typemap order, adjacent runs merged

  int64_t lb() const { return plain.lb; }
  int64_t extent() const { return plain.ub - plain.lb; }
  int64_t true_extent() const { return true_ub - true_lb; }
};

// Computes the layout of `spec`; nullopt when the spec is invalid for MPI (as far as the model
// knows) or its size exceeds max_size (the work is proportional to the size).
std::optional<Layout> layout_of(const Spec& spec, int64_t max_size = 1 << 20);

// True if some data byte appears twice.
bool has_overlap(const Layout& layout);

// True if copies of the type at multiples of its extent never overlap (see count_safe).
bool is_count_safe(const Layout& layout);

}  // namespace strider::typespec
