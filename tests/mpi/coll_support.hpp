// Support of the collective test (collective_test.cpp and its companions): seeds, datatypes
// whose signatures match across ranks, buffers laid out for the v/w forms, and the runner that
// checks each call against the MPI's own collective (PMPI_<name>) on host copies.
//
// A case is one collective call on one rank: its host buffers (ElementBuffer: random bytes, with
// margins), its arguments (captured by `call`), and how its receive buffer is judged. The runner
// calls PMPI_<name> on host copies (the oracle: the MPI's own entry, which Strider never
// intercepts), then MPI_<name> (blocking, nonblocking or persistent) on the same bytes placed in
// this build's memory (host, or device in the GPU build), and compares.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "p2p_buffers.hpp"

namespace strider::testing::coll {

using Bytes = std::vector<unsigned char>;

// ---- seeds -------------------------------------------------------------------------------

long seed_value();  // STRIDER_TEST_SEED
// The run's seed mixed with `parts` (mix: mpi_test_support.hpp).
template <class... Parts>
std::uint64_t seed_of(Parts... parts) {
  return mix_seed(static_cast<std::uint64_t>(seed_value()), parts...);
}
// Rounds per collective: STRIDER_TEST_ROUNDS, or 3 * `fallback`.
int rounds(int fallback);
// A count: 0 now and then, mostly 1-4, sometimes up to 12.
int random_count(std::mt19937_64& rng);

// ---- datatypes ---------------------------------------------------------------------------

// A committed datatype built from a type text (predefined ones are never freed).
class Type {
 public:
  explicit Type(std::string text);
  ~Type();
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  MPI_Datatype get() const { return handle_; }
  const std::string& text() const { return text_; }
  int size() const { return size_; }
  MPI_Aint extent() const { return extent_; }

 private:
  std::string text_;
  MPI_Datatype handle_ = MPI_DATATYPE_NULL;
  int size_ = 0;
  MPI_Aint extent_ = 0;
};
using TypeRef = std::shared_ptr<const Type>;
TypeRef make_type(const std::string& text);

// The unit a piece of data is counted in: a random type text. When every data leaf of the
// type is one basic type (`leaf` its name), a side may instead use that basic type with
// `values` times the count: the same type signature, another layout.
struct Base {
  std::string text;
  std::string leaf;  // empty: mixed basic types, only the type itself
  int values = 0;    // basic values per element of `text`
};
Base random_base(std::mt19937_64& rng);

// One side's view of a piece: `count` base elements are `count * mult` elements of `type`.
struct Side {
  TypeRef type;
  int mult = 1;
};
// `basic`: use the leaf type if the base has one.
Side side_of(const Base& base, bool basic);

// ---- buffers -----------------------------------------------------------------------------

// `counts[i]` elements of `type` in one buffer, pieces in a random order with random gaps
// between them; `displs[i]` (out) in units of the type's extent.
ElementBuffer v_buffer(const Type& type, const std::vector<int>& counts, std::mt19937_64& rng,
                       std::vector<int>* displs);
// Pieces of several types (w forms): `counts[i]` elements of `types[i]`, random order, gaps;
// `displs[i]` (out) in bytes from the buffer's origin.
ElementBuffer w_buffer(const std::vector<TypeRef>& types, const std::vector<int>& counts,
                       std::mt19937_64& rng, std::vector<int>* displs);
// Sets to `value` the mask bytes of `count` elements of the type `text` from element `first`
// of the buffer's origin (typespec's model of the typemap, independent of the MPI). The mask is
// sized to the buffer (0) first if empty.
void mark_typemap(const std::string& text, MPI_Aint extent, int first, int count,
                  const ElementBuffer& buf, std::vector<char>* mask, char value = 1);

// ---- reduction data (coll_values.cpp) ----------------------------------------------------

// The C type of the values a reduction type holds (pairs: the value part).
enum class Leaf { kInt, kLong, kShort, kUnsignedChar, kFloat, kDouble };
// A datatype for reductions: every basic element `leaf`, or (pair) value-index pairs.
struct ReduceType {
  std::string text;
  Leaf leaf = Leaf::kInt;
  bool pair = false;
};
// The predefined ops valid on a type (MPI-4 section 6.9.2), by name.
struct OpInfo {
  MPI_Op op;
  const char* name;
};
std::vector<OpInfo> ops_for(const ReduceType& type);
// User-defined ops on any type whose basic elements are 4-byte integers: `a + b + 1`
// (commutative) and the composition of affine maps mod 2^16 (not commutative). Created once.
MPI_Op user_op(bool commutative);
// Values for `count` elements of `type` at `buf`'s origin (from element `first`), suited to
// `op` (small for PROD, 0/1/2 for logical ops, ties for MINLOC/MAXLOC, exact in floating
// point); bytes outside the typemap stay as they are.
void fill_values(const ReduceType& type, MPI_Aint extent, int first, int count, MPI_Op op,
                 std::mt19937_64& rng, ElementBuffer* buf);
// Predefined reduction types and random derived ones over int or double.
std::vector<ReduceType> predefined_reduce_types();
ReduceType random_reduce_type(std::mt19937_64& rng, Leaf leaf);

// ---- cases -------------------------------------------------------------------------------

// kOracle*: the MPI's own entries (PMPI_), in the same form as the call under test (some MPIs'
// blocking and nonblocking algorithms differ where the standard leaves room, or in bugs:
// Open MPI 4.1 pairs the blocks of a peer that is both neighbours of a periodic dimension one
// way in MPI_Neighbor_alltoall and the other in MPI_Ineighbor_alltoall).
enum class Call { kOracle, kOracleNonblocking, kBlocking, kNonblocking, kPersistent };
using CallFn = std::function<int(Call, const void* send, void* recv, MPI_Request* req)>;

enum class Check {
  kWhole,    // receive buffer equal to the oracle's, byte for byte
  kTypemap,  // reductions: `mask` 1 bytes equal to the oracle's, 0 bytes untouched, 2 free
  kNone,     // receive buffer undefined (Exscan on rank 0)
};

struct Case {
  std::string coll;  // the collective's name, for the counts
  std::string what;  // description for failures
  std::optional<ElementBuffer> send, recv;
  bool send_in_place = false;  // pass MPI_IN_PLACE as the send buffer
  bool recv_in_place = false;  // pass MPI_IN_PLACE as the receive buffer (Scatter's root)
  bool send_null = false;      // pass a null send buffer (insignificant here)
  bool recv_null = false;      // pass a null receive buffer (insignificant here)
  Check check = Check::kWhole;
  std::vector<char> mask;  // kTypemap: per byte of `recv`, see Check
  CallFn call;
  std::vector<TypeRef> keep;  // datatypes the call uses
};
using Cases = std::vector<std::unique_ptr<Case>>;

// How the calls under test are made and completed.
enum class Mode {
  kBlocking,
  kNonblocking,  // all started, then completed by Wait, Test loops and Waitall
  kPersistent,   // MPI_<name>_init (MPI-4 only), started twice: see persistent_served_everywhere()
};
const char* name(Mode m);
// Runs `cases` (the same collectives in the same order on every rank): oracle, call, checks;
// counts each case under its collective's name.
void run_cases(Cases& cases, Mode mode);

// Cases run per collective name, printed at the end of the run.
void count_case(const std::string& coll);
void print_counts();

// Byte comparison with a readable failure.
void expect_same_bytes(const Bytes& got, const Bytes& want, const std::string& what);

// The MPI's text for an error code.
std::string error_text(int rc);

// The persistent forms exist (MPI-4: MPICH 4; Open MPI 4.1 is MPI-3.1).
#if MPI_VERSION >= 4
inline constexpr bool kHavePersistent = true;
#else
inline constexpr bool kHavePersistent = false;
#endif
// Whether Strider serves the persistent forms on every rank here: it is loaded and takes every
// buffer (STRIDER_COLL_HOST=pack, or device memory on every rank). Where they would reach the MPI
// they are not tested: MPICH 4.0's own copy a root's own piece only at MPI_<name>_init
// (pmodels/mpich#7078) and free the application's datatypes at MPI_Request_free (plain MPICH; a
// later use of the type crashes).
bool persistent_served_everywhere();

}  // namespace strider::testing::coll

// The five ways of calling one collective, for a Case's CallFn: `Name` as in MPI_Name,
// `name` as in MPI_Iname; the arguments end with the communicator.
#if MPI_VERSION >= 4
#define STRIDER_COLL_PERSISTENT(Name, ...) \
  return MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, req);
#else
#define STRIDER_COLL_PERSISTENT(Name, ...) return MPI_ERR_OTHER;
#endif
#define STRIDER_COLL_CALLS(Name, name, ...)                  \
  switch (call) {                                            \
    case ::strider::testing::coll::Call::kOracle:            \
      return PMPI_##Name(__VA_ARGS__);                       \
    case ::strider::testing::coll::Call::kOracleNonblocking: \
      return PMPI_I##name(__VA_ARGS__, req);                 \
    case ::strider::testing::coll::Call::kBlocking:          \
      return MPI_##Name(__VA_ARGS__);                        \
    case ::strider::testing::coll::Call::kNonblocking:       \
      return MPI_I##name(__VA_ARGS__, req);                  \
    case ::strider::testing::coll::Call::kPersistent:        \
      STRIDER_COLL_PERSISTENT(Name, __VA_ARGS__)             \
  }                                                          \
  return MPI_ERR_OTHER;
