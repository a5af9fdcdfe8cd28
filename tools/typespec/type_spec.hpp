// Compact text form for MPI datatypes: parse, format and build real MPI types.
//
// Grammar (whitespace allowed between tokens):
//   type := NAME
//         | contiguous(N, type)
//         | vector(COUNT, BLOCKLEN, STRIDE, type)          stride in child extents
//         | hvector(COUNT, BLOCKLEN, STRIDE_BYTES, type)
//         | indexed([BL,...], [DISP,...], type)             disp in child extents
//         | hindexed([BL,...], [DISP_BYTES,...], type)
//         | indexed_block(BL, [DISP,...], type)
//         | hindexed_block(BL, [DISP_BYTES,...], type)
//         | struct([BL,...], [DISP_BYTES,...], [type,...])
//         | subarray(C|F, [SIZES], [SUBSIZES], [STARTS], type)
//         | darray(SIZE, RANK, C|F, [GSIZES], [block|cyclic|none,...], [INT|default,...],
//                  [PSIZES], type)
//         | resized(LB, EXTENT, type)
//         | dup(type)
// Example: hvector(4,1,1,vector(3,1,4,byte))
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#ifndef STRIDER_HAVE_MPI_LB
#define STRIDER_HAVE_MPI_LB 0
#endif

namespace strider::typespec {

// Syntax error; `position` is the 0-based offset into the text (the message reports the
// 1-based column).
struct ParseError : std::runtime_error {
  ParseError(const std::string& what, size_t pos) : std::runtime_error(what), position(pos) {}
  size_t position;
};

enum class Kind {
  kNamed,
  kContiguous,
  kVector,
  kHvector,
  kIndexed,
  kHindexed,
  kIndexedBlock,
  kHindexedBlock,
  kStruct,
  kSubarray,
  kDarray,
  kResized,
  kDup,
};

// Values stored in Spec::params / Spec::lists for the symbolic tokens.
enum Order : int64_t { kOrderC = 0, kOrderFortran = 1 };
enum Distrib : int64_t { kDistribBlock = 0, kDistribCyclic = 1, kDistribNone = 2 };
inline constexpr int64_t kDefaultDarg = std::numeric_limits<int64_t>::min();

// Syntax tree. Fields used per kind (everything in grammar order):
//   kNamed:         name
//   kContiguous:    params {N}
//   kVector/kHvector: params {count, blocklen, stride}
//   kIndexed/kHindexed: lists {blocklens, disps}
//   kIndexedBlock/kHindexedBlock: params {blocklen}, lists {disps}
//   kStruct:        lists {blocklens, disps}, children = member types
//   kSubarray:      params {order}, lists {sizes, subsizes, starts}
//   kDarray:        params {size, rank, order}, lists {gsizes, distribs, dargs, psizes}
//   kResized:       params {lb, extent}
//   kDup:           -
// All kinds but kNamed and kStruct have exactly one child.
struct Spec {
  Kind kind = Kind::kNamed;
  std::string name;
  std::vector<int64_t> params;
  std::vector<std::vector<int64_t>> lists;
  std::vector<Spec> children;

  bool operator==(const Spec&) const = default;
};

// Parses `text`; throws ParseError on syntax errors (including unknown type names).
Spec parse(std::string_view text);

// Canonical compact form without whitespace, e.g. "vector(3,1,4,byte)".
std::string format(const Spec& spec);

// Builds the MPI datatype described by `spec`. The result is NOT committed. Intermediate derived
// types are freed; named types are returned as-is (never free those: check is_named()).
// Throws std::invalid_argument on semantic errors (list lengths, int overflow, bad counts) and
// std::runtime_error when an MPI constructor fails (needs MPI_ERRORS_RETURN set by the caller).
MPI_Datatype build(const Spec& spec);

// parse + build.
MPI_Datatype build_type(std::string_view text);

// Whether build() uses the large-count constructors (MPI_Type_vector_c, ...) instead of the
// classic ones: on an MPI that has them (MPI 4), where STRIDER_TEST_LARGE_COUNT=1 is set, so
// that every test built on typespec can run over the types mpi4py makes.
bool large_count_constructors();

// True for predefined (named) types, which must not be freed.
bool is_named(MPI_Datatype type);

// Named types known to the grammar; lookup_named returns false for unknown names.
struct NamedType {
  std::string_view name;
  MPI_Datatype type;
};
const std::vector<NamedType>& named_types();
bool lookup_named(std::string_view name, MPI_Datatype* type);

}  // namespace strider::typespec
