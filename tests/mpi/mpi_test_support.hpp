// Shared by the MPI tests: MPI set-up around GoogleTest, the handle on Strider's API (looked up
// at run time, so a test notices when Strider is not loaded), seeds, and buffers for packing.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "strider/strider.h"
#include "typespec/random_type.hpp"

namespace strider::testing {

int world_rank();
int world_size();
// This rank's rank among the ranks of its shared-memory node (MPI_COMM_TYPE_SHARED); collective
// over MPI_COMM_WORLD. The GPU tests' mains pick their GPU by it.
int node_local_rank();

// A fixture with its own duplicate of MPI_COMM_WORLD (errors returned, not fatal), this rank in
// it and its size.
class WorldCommTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

// The thread level the tests' main() asks for: STRIDER_TEST_THREAD=single, funneled, serialized
// or multiple, for MPI behaviour that differs with the level; `fallback` where it is unset (or
// unknown, with a warning).
int thread_level_asked(int fallback = MPI_THREAD_MULTIPLE);

// Strider's counters; fails the test if libstrider is not loaded.
strider_stats stats();
bool strider_loaded();
// Whether this rank may run on more than one CPU (Strider's progress thread needs one to spare).
bool spare_cpu();
// Whether Strider defers this run's nonblocking sends of buffers it packs (docs/bursts.md):
// preloaded, STRIDER_BURST not 0, and below MPI_THREAD_MULTIPLE or where its progress thread
// runs (STRIDER_PROGRESS_US not 0, a CPU to spare). Call after MPI_Init.
bool strider_defers_sends();
// strider_describe_type through dlsym; "" when Strider is absent or the type unknown.
std::string describe(MPI_Datatype type);
// strider_set_p2p_host through dlsym: host buffers of point-to-point calls packed by Strider
// (`pack`) or left to the MPI; nothing when Strider is absent.
void set_p2p_host(bool pack);

// Reads an integer environment variable (e.g. STRIDER_TEST_TYPES), with a default.
long env_long(const char* name, long fallback);
// Whether environment variable `name` is set to exactly `value`.
bool env_is(const char* name, const char* value);

// Mixes `v` into `h` (splitmix64's finalizer over a hash combine): the tests derive every
// random choice from a run's seed (STRIDER_TEST_SEED) this way, so that all ranks compute the
// same values independently.
std::uint64_t mix(std::uint64_t h, std::uint64_t v);
// `seed` mixed with each of `parts` in turn.
template <class... Parts>
std::uint64_t mix_seed(std::uint64_t seed, Parts... parts) {
  ((seed = mix(seed, static_cast<std::uint64_t>(parts))), ...);
  return seed;
}

// One int every 8 bytes (MPI_INT resized to extent 8), committed on first use and kept: a
// strided element, so Strider packs it (host receives go its way).
MPI_Datatype strided_int_type();

// `ints` ints at stride 2 (MPI_Type_vector(ints, 1, 2, MPI_INT)), committed, freed with the
// object: a type Strider packs.
struct StridedInts {
  explicit StridedInts(int ints);
  ~StridedInts();
  StridedInts(const StridedInts&) = delete;
  StridedInts& operator=(const StridedInts&) = delete;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};
// The 2 * `ints` ints a sender holds for message `k` of a test: consecutive from 1000 * (k + 1),
// so that every one says which message it belongs to.
std::vector<int> message_ints(int k, int ints);

// A host buffer holding `count` elements of a type, with random bytes and margins on both
// sides, so bytes outside the typemap can be checked untouched.
struct ElementBuffer {
  std::vector<unsigned char> bytes;
  std::int64_t origin_offset = 0;  // index of the type's origin in `bytes`
  unsigned char* origin() { return bytes.data() + origin_offset; }
};
ElementBuffer element_buffer(MPI_Datatype type, int count, std::mt19937_64& rng);

// The standard's answer, from typespec's independent model of the typemap: the packed bytes
// of `count` elements at `origin`, consecutive elements `extent` apart.
std::vector<unsigned char> reference_pack(const typespec::Layout& layout, MPI_Aint extent,
                                          int count, const unsigned char* origin);
void reference_unpack(const typespec::Layout& layout, MPI_Aint extent, int count,
                      const unsigned char* packed, unsigned char* origin);

// Open MPI 4.1 hangs in MPI_Waitall when a request in it fails (truncation, say) and the thread
// level is above MPI_THREAD_SINGLE (MULTIPLE, as the tests' main() asks by default; FUNNELED and
// SERIALIZED too); MPI_THREAD_SINGLE (STRIDER_TEST_THREAD=single) is fine, and so are Testall,
// Waitany and Waitsome. Tests skip the Waitall case where this is true.
bool waitall_error_hangs();

// The MPI the test runs on, asked at run time (MPI_Get_library_version, callable before
// MPI_Init): one binary built for the MPI-5 standard ABI runs on either implementation, so the
// tests never ask the header (#ifdef OPEN_MPI / MPICH_VERSION).
bool on_open_mpi();
bool on_mpich();
// An MPI error code's class (MPI_SUCCESS for MPI_SUCCESS).
int error_class(int rc);
int mpi_major();  // the implementation's major version (4 for Open MPI 4.1.6 or MPICH 4.0.2)
int mpi_minor();  // and its minor one (1, 0)

// Whether the MPI's MPI_Wait on a persistent receive that MPI_Request_get_status already saw
// complete returns an empty status (count 0, MPI_ANY_SOURCE, MPI_ANY_TAG) instead of the
// receive's: MPICH 5.0.2 does, without Strider too (MPICH 4.0.2 and Open MPI 4.1 do not). Tests
// then check the status MPI_Request_get_status gave.
bool wait_after_get_status_empties_persistent();

// Completes `n` requests with MPI_Waitall (`wait`), or MPI_Testall until all are done or it
// fails; the MPI's return code.
int wait_or_test_all(bool wait, int n, MPI_Request* requests, MPI_Status* statuses);

}  // namespace strider::testing
