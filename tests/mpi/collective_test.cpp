// Collectives on random derived datatypes, black-box through plain MPI calls (issue 11): the
// same checks pass against the system MPI alone (collective_test_plain_mpi, which validates the
// test) and with Strider preloaded, whether it leaves host buffers to the MPI or packs them
// (STRIDER_COLL_HOST=forward|pack). Built a second time over GPU memory (tests/gpu): then every
// buffer handed to MPI is device memory (STRIDER_TEST_PLACEMENT=device), device memory on even
// ranks and host memory on odd ones (mixed), or managed memory (managed).
//
// Oracle: every call is made twice on the same inputs, first as PMPI_<name> (the MPI's own
// entry, which Strider never intercepts) on host copies, then as MPI_<name> on the placed
// buffers; the receive buffers must then be equal byte for byte, margins and gaps included
// (reductions: the typemap's bytes equal, all others untouched). See coll_support.hpp.
//
// This file: the data-movement collectives on intracommunicators. collective_reduce_test.cpp:
// reductions; collective_topo_test.cpp: neighborhood collectives, intercommunicators, errors.
// Seeds: STRIDER_TEST_SEED; rounds per collective: STRIDER_TEST_ROUNDS. Each collective's case
// count is printed at the end.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "coll_support.hpp"
#include "test_nodes.hpp"

namespace strider::testing::coll {
namespace {

bool one_node();

class CountsPrinter : public ::testing::Environment {
 public:
  void SetUp() override {
    if (world_rank() != 0) return;
    const char* host = std::getenv("STRIDER_COLL_HOST");
    std::printf(
        "collective_test: seed %ld, %d ranks, buffers: %s, Strider %s, "
        "STRIDER_COLL_HOST=%s (rank 0), persistent forms %s\n",
        seed_value(), world_size(), placement_summary(), strider_loaded() ? "loaded" : "absent",
        host ? host : "(unset)",
        !kHavePersistent                 ? "absent (MPI < 4)"
        : persistent_served_everywhere() ? "served by Strider (checked, two starts each)"
                                         : "left to the MPI (not tested)");
  }
  void TearDown() override {
    print_counts();
    if (!strider_loaded()) return;
    // The path taken, from Strider's counters: every rank packs with STRIDER_COLL_HOST=pack or
    // device memory everywhere, and serves nothing when it forwards host memory.
    const strider_stats s = stats();
    std::printf(
        "[rank %d] collectives served %llu (GPU to GPU on one node %llu, pieces read in place "
        "%llu), forwarded %llu, persistent served %llu, refused %llu\n",
        world_rank(), static_cast<unsigned long long>(s.collectives_served),
        static_cast<unsigned long long>(s.collectives_same_node),
        static_cast<unsigned long long>(s.collective_pieces_in_place),
        static_cast<unsigned long long>(s.collectives_forwarded),
        static_cast<unsigned long long>(s.persistent_served),
        static_cast<unsigned long long>(s.persistent_refused));
    const char* host = std::getenv("STRIDER_COLL_HOST");
    const bool pack = host != nullptr && std::string(host) == "pack";
    const std::string where = placement_summary();
    if (pack || where == "device memory on every rank") {
      EXPECT_GT(s.collectives_served, 0u);
    } else if (where == "host memory on every rank") {
      EXPECT_EQ(s.collectives_served, 0u);
    }
    // Device memory on every rank of one node: the blocking all-to-alls go GPU to GPU (unless
    // switched off); never with host memory anywhere.
    const char* same_node = std::getenv("STRIDER_SAME_NODE");
    const bool same_node_on = same_node == nullptr || std::string(same_node) != "0";
    // Every collective here spans all ranks: none GPU to GPU where they span two (virtual)
    // nodes. (Collective: every rank asks.)
    const bool single_node = one_node();
    if (where == "device memory on every rank" && same_node_on && single_node) {
      EXPECT_GT(s.collectives_same_node, 0u);
    } else if (where == "host memory on every rank" || !single_node) {
      EXPECT_EQ(s.collectives_same_node, 0u);
    }
    // Pieces read in place, straight from the sender's buffer: only out of cudaMalloc memory
    // (CUDA IPC exports neither managed nor cudaMallocAsync pool memory), unless switched off.
    const char* direct = std::getenv("STRIDER_SAME_NODE_DIRECT");
    const bool direct_on = direct == nullptr || std::string(direct) != "0";
    if (where == "device memory on every rank" && same_node_on && direct_on && single_node) {
      EXPECT_GT(s.collective_pieces_in_place, 0u);
    } else {
      EXPECT_EQ(s.collective_pieces_in_place, 0u);
    }
    // Every case here is one Strider can read: none is refused, and where Strider takes every
    // buffer the persistent forms are served.
    EXPECT_EQ(s.persistent_refused, 0u);
    if (persistent_served_everywhere()) EXPECT_GT(s.persistent_served, 0u);
  }
};
[[maybe_unused]] const auto* const kPrinter =
    ::testing::AddGlobalTestEnvironment(new CountsPrinter);

// Whether every rank runs on this node (a virtual one too: test_nodes.hpp).
bool one_node() {
  const std::vector<long> nodes = world_nodes();
  return std::all_of(nodes.begin(), nodes.end(), [&](long n) { return n == nodes[0]; });
}

bool bit(std::uint64_t seed) { return (seed >> 17) & 1; }

// comm_, rank_, size_: WorldCommTest (mpi_test_support.hpp).
class Coll : public WorldCommTest {
 protected:
  // Runs `make(round, cases)` in every mode: blocking one batch per round, nonblocking and
  // persistent with all of a round's cases outstanding at once.
  template <class Make>
  void exercise(int n_rounds, Make make) {
    for (Mode mode : {Mode::kBlocking, Mode::kNonblocking, Mode::kPersistent}) {
      if (mode == Mode::kPersistent && !persistent_served_everywhere()) continue;
      const int n = mode == Mode::kBlocking ? n_rounds : (n_rounds + 1) / 2;
      for (int round = 0; round < n; ++round) {
        Cases cases;
        make(round + 1000 * static_cast<int>(mode), cases);
        run_cases(cases, mode);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }

  // This rank's choice between a base type and its leaf type, per round, peer and role.
  Side side(const Base& base, int tag, int round, int peer, int role) const {
    return side_of(base, bit(seed_of(tag, round, rank_, peer, role, 77)));
  }
  std::mt19937_64 buffer_rng(int tag, int round, int extra = 0) const {
    return std::mt19937_64(seed_of(tag, round, rank_, extra, 99));
  }
};

std::string describe(const Base& base, int count) {
  return std::to_string(count) + " x " + base.text;
}

// ---- Alltoall, Alltoallv, Alltoallw ------------------------------------------------------

TEST_F(Coll, Alltoall) {
  exercise(rounds(6), [&](int round, Cases& cases) {
    for (bool in_place : {false, true}) {
      std::mt19937_64 rng(seed_of(1, round, in_place));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side s = side(base, 1, round, in_place, 0), r = side(base, 1, round, in_place, 1);
      auto c = std::make_unique<Case>();
      c->coll = "Alltoall";
      c->what = describe(base, count) + (in_place ? " in place" : "");
      auto brng = buffer_rng(1, round, in_place);
      const int sc = in_place ? 0 : count * s.mult, rc = count * r.mult;
      if (!in_place) c->send = element_buffer(s.type->get(), sc * size_, brng);
      c->recv = element_buffer(r.type->get(), rc * size_, brng);
      c->send_in_place = in_place;
      const MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Alltoall, alltoall, sb, sc, st, rb, rc, rt, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, Alltoallv) {
  exercise(rounds(6), [&](int round, Cases& cases) {
    for (bool in_place : {false, true}) {
      std::mt19937_64 rng(seed_of(2, round, in_place));
      const Base base = random_base(rng);
      // Pieces from s to r: `pair_count(s, r)` base elements (the same both ways in place,
      // where each rank's receive counts are also what it sends).
      auto pair_count = [&](int from, int to) {
        if (in_place && from > to) std::swap(from, to);
        std::mt19937_64 crng(seed_of(2, round, in_place, from, to));
        return random_count(crng);
      };
      const Side s = side(base, 2, round, in_place, 0), r = side(base, 2, round, in_place, 1);
      std::vector<int> scounts(size_), rcounts(size_), sdispls, rdispls;
      for (int j = 0; j < size_; ++j) {
        scounts[j] = pair_count(rank_, j) * s.mult;
        rcounts[j] = pair_count(j, rank_) * r.mult;
      }
      auto c = std::make_unique<Case>();
      c->coll = "Alltoallv";
      c->what = base.text + (in_place ? " in place" : "");
      auto brng = buffer_rng(2, round, in_place);
      if (!in_place) c->send = v_buffer(*s.type, scounts, brng, &sdispls);
      c->recv = v_buffer(*r.type, rcounts, brng, &rdispls);
      c->send_in_place = in_place;
      const MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        const int* sc = in_place ? nullptr : scounts.data();
        const int* sd = in_place ? nullptr : sdispls.data();
        STRIDER_COLL_CALLS(Alltoallv, alltoallv, sb, sc, sd, st, rb, rcounts.data(), rdispls.data(),
                           rt, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, Alltoallw) {
  exercise(rounds(4), [&](int round, Cases& cases) {
    for (bool in_place : {false, true}) {
      // In place, only blocking: Open MPI 4.1's own MPI_Ialltoallw with MPI_IN_PLACE hangs (2
      // ranks, plain MPI), and MPICH 4.0's reports a truncation with per-pair types (plain MPI,
      // the oracle's own call).
      if (in_place && round >= 1000) continue;
      // Each ordered pair (s, r) has its own base type and count; in place the pair {s, r}.
      auto pair_base = [&](int from, int to, int* count) {
        if (in_place && from > to) std::swap(from, to);
        std::mt19937_64 rng(seed_of(3, round, in_place, from, to));
        Base b = random_base(rng);
        *count = random_count(rng);
        return b;
      };
      std::vector<TypeRef> stypes, rtypes;
      std::vector<int> scounts, rcounts, sdispls, rdispls;
      for (int j = 0; j < size_; ++j) {
        int n = 0;
        const Base to = pair_base(rank_, j, &n);
        const Side s = side(to, 3, round, j, 0);
        stypes.push_back(s.type);
        scounts.push_back(n * s.mult);
        const Base from = pair_base(j, rank_, &n);
        const Side r = side(from, 3, round, j, 1);
        rtypes.push_back(r.type);
        rcounts.push_back(n * r.mult);
      }
      auto c = std::make_unique<Case>();
      c->coll = "Alltoallw";
      c->what = std::string("per-pair types") + (in_place ? " in place" : "");
      auto brng = buffer_rng(3, round, in_place);
      if (!in_place) c->send = w_buffer(stypes, scounts, brng, &sdispls);
      c->recv = w_buffer(rtypes, rcounts, brng, &rdispls);
      c->send_in_place = in_place;
      std::vector<MPI_Datatype> st, rt;
      for (const auto& t : stypes) st.push_back(t->get());
      for (const auto& t : rtypes) rt.push_back(t->get());
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        const int* sc = in_place ? nullptr : scounts.data();
        const int* sd = in_place ? nullptr : sdispls.data();
        const MPI_Datatype* sts = in_place ? nullptr : st.data();
        STRIDER_COLL_CALLS(Alltoallw, alltoallw, sb, sc, sd, sts, rb, rcounts.data(),
                           rdispls.data(), rt.data(), comm)
      };
      c->keep = stypes;
      c->keep.insert(c->keep.end(), rtypes.begin(), rtypes.end());
      cases.push_back(std::move(c));
    }
  });
}

// Layouts of wide dense blocks (>= 256 bytes: read in place even across GPUs), each pair its
// own, into fresh buffers every round: memory freed and allocated again (at the same address,
// often) must never be read through a stale mapping of the old allocation.
TEST_F(Coll, AlltoallwOfWideBlocksInFreshBuffers) {
  static const char* const kLayouts[] = {
      "vector(8,64,128,double)",                        // 512-byte rows every 1 KiB
      "contiguous(96,int)",                             // 384 contiguous bytes
      "subarray(C,[6,40,16],[3,20,16],[2,5,0],float)",  // a box of 1280-byte rows
      "hvector(3,2,1000,vector(2,40,64,int))",          // 160-byte rows, not one strided block
  };
  exercise(rounds(4), [&](int round, Cases& cases) {
    std::vector<TypeRef> stypes, rtypes;
    std::vector<int> scounts, rcounts, sdispls, rdispls;
    auto pair_type = [&](int from, int to) {
      std::mt19937_64 rng(seed_of(31, round, from, to));
      return make_type(kLayouts[rng() % std::size(kLayouts)]);
    };
    for (int j = 0; j < size_; ++j) {
      stypes.push_back(pair_type(rank_, j));
      scounts.push_back(1 + static_cast<int>(seed_of(32, round, rank_, j) % 3));
      rtypes.push_back(make_type("byte"));
      rcounts.push_back(0);
    }
    // Received as bytes: the peer's packed bytes, whatever its layout.
    for (int j = 0; j < size_; ++j) {
      const TypeRef theirs = pair_type(j, rank_);
      rcounts[j] = theirs->size() * (1 + static_cast<int>(seed_of(32, round, j, rank_) % 3));
    }
    auto c = std::make_unique<Case>();
    c->coll = "Alltoallw";
    c->what = "wide-block layouts in fresh buffers";
    auto brng = buffer_rng(31, round);
    c->send = w_buffer(stypes, scounts, brng, &sdispls);
    c->recv = w_buffer(rtypes, rcounts, brng, &rdispls);
    std::vector<MPI_Datatype> st, rt;
    for (const auto& t : stypes) st.push_back(t->get());
    for (const auto& t : rtypes) rt.push_back(t->get());
    const MPI_Comm comm = comm_;
    c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
      STRIDER_COLL_CALLS(Alltoallw, alltoallw, sb, scounts.data(), sdispls.data(), st.data(), rb,
                         rcounts.data(), rdispls.data(), rt.data(), comm)
    };
    c->keep = stypes;
    c->keep.insert(c->keep.end(), rtypes.begin(), rtypes.end());
    cases.push_back(std::move(c));
  });
}

// ---- Allgather, Allgatherv, Gather, Gatherv ----------------------------------------------

// Whether some ranks pack host buffers (STRIDER_COLL_HOST=pack) and others do not.
bool mixed_host_paths() {
  const char* v = std::getenv("STRIDER_COLL_HOST");
  const int pack = v != nullptr && std::string(v) == "pack";
  int low = 0, high = 0;
  PMPI_Allreduce(&pack, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Allreduce(&pack, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return low != high;
}

TEST_F(Coll, Allgather) {
  exercise(rounds(6), [&](int round, Cases& cases) {
    for (bool in_place : {false, true}) {
      std::mt19937_64 rng(seed_of(4, round, in_place));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side s = side(base, 4, round, in_place, 0), r = side(base, 4, round, in_place, 1);
      auto c = std::make_unique<Case>();
      c->coll = "Allgather";
      c->what = describe(base, count) + (in_place ? " in place" : "");
      auto brng = buffer_rng(4, round, in_place);
      const int sc = in_place ? 0 : count * s.mult, rc = count * r.mult;
      if (!in_place) c->send = element_buffer(s.type->get(), sc, brng);
      c->recv = element_buffer(r.type->get(), rc * size_, brng);
      c->send_in_place = in_place;
      const MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Allgather, allgather, sb, sc, st, rb, rc, rt, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, Allgatherv) {
  // Ranks Strider serves pass wire types, the others the application's: the Open MPI hang
  // described below (README, "Where system MPIs deviate from the standard").
  if (on_open_mpi() && size_ > 2 && mixed_host_paths()) {
    GTEST_SKIP() << "Open MPI 4.1 hangs in Allgatherv on types that differ across ranks";
  }
  exercise(rounds(6), [&](int round, Cases& cases) {
    for (bool in_place : {false, true}) {
      // Open MPI 4.1's own MPI_Allgatherv with MPI_IN_PLACE hangs on some random types (plain
      // MPI, 3 ranks, e.g. seed 3: vector(5,2,-2,indexed([1],[-1],vector(2,2,-4,
      // resized(5,1,signed_char))))): in place only elsewhere.
      if (in_place && on_open_mpi()) continue;
      std::mt19937_64 rng(seed_of(5, round, in_place));
      const Base base = random_base(rng);
      auto count_of = [&](int from) {
        std::mt19937_64 crng(seed_of(5, round, in_place, from));
        return random_count(crng);
      };
      // Open MPI 4.1's MPI_Allgatherv hangs from 3 ranks on when ranks describe the same
      // pieces by different types of equal signature (plain MPI, no Strider): one choice for
      // every rank there (README, "Where system MPIs deviate from the standard").
      const bool same_everywhere = on_open_mpi() && size_ > 2;
      const Side s = same_everywhere ? side_of(base, bit(seed_of(5, round, in_place, 0, 77)))
                                     : side(base, 5, round, in_place, 0);
      const Side r = same_everywhere ? side_of(base, bit(seed_of(5, round, in_place, 1, 77)))
                                     : side(base, 5, round, in_place, 1);
      std::vector<int> rcounts(size_), displs;
      for (int j = 0; j < size_; ++j) rcounts[j] = count_of(j) * r.mult;
      auto c = std::make_unique<Case>();
      c->coll = "Allgatherv";
      c->what = base.text + (in_place ? " in place" : "");
      auto brng = buffer_rng(5, round, in_place);
      const int sc = in_place ? 0 : count_of(rank_) * s.mult;
      if (!in_place) c->send = element_buffer(s.type->get(), sc, brng);
      c->recv = v_buffer(*r.type, rcounts, brng, &displs);
      c->send_in_place = in_place;
      const MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Allgatherv, allgatherv, sb, sc, st, rb, rcounts.data(), displs.data(),
                           rt, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, GatherEveryRoot) {
  exercise(rounds(3), [&](int round, Cases& cases) {
    for (int root = 0; root < size_; ++root) {
      const bool in_place = bit(seed_of(6, round, root, 1));
      std::mt19937_64 rng(seed_of(6, round, root));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side s = side(base, 6, round, root, 0), r = side(base, 6, round, root, 1);
      auto c = std::make_unique<Case>();
      c->coll = "Gather";
      c->what =
          describe(base, count) + ", root " + std::to_string(root) + (in_place ? " in place" : "");
      auto brng = buffer_rng(6, round, root);
      const bool me = rank_ == root;
      const bool ip = in_place && me;
      const int sc = ip ? 0 : count * s.mult, rc = count * r.mult;
      if (!ip) c->send = element_buffer(s.type->get(), sc, brng);
      c->recv = element_buffer(r.type->get(), rc * size_, brng);
      c->send_in_place = ip;
      c->recv_null = !me;  // insignificant off the root
      const MPI_Datatype st = ip ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Gather, gather, sb, sc, st, rb, rc, rt, root, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, GathervEveryRoot) {
  exercise(rounds(3), [&](int round, Cases& cases) {
    for (int root = 0; root < size_; ++root) {
      const bool in_place = bit(seed_of(7, round, root, 1));
      std::mt19937_64 rng(seed_of(7, round, root));
      const Base base = random_base(rng);
      auto count_of = [&](int from) {
        std::mt19937_64 crng(seed_of(7, round, root, from, 2));
        return random_count(crng);
      };
      const Side s = side(base, 7, round, root, 0), r = side(base, 7, round, root, 1);
      const bool me = rank_ == root;
      const bool ip = in_place && me;
      std::vector<int> rcounts(size_), displs;
      for (int j = 0; j < size_; ++j) rcounts[j] = count_of(j) * r.mult;
      auto c = std::make_unique<Case>();
      c->coll = "Gatherv";
      c->what = base.text + ", root " + std::to_string(root) + (ip ? " in place" : "");
      auto brng = buffer_rng(7, round, root);
      const int sc = ip ? 0 : count_of(rank_) * s.mult;
      if (!ip) c->send = element_buffer(s.type->get(), sc, brng);
      c->recv = v_buffer(*r.type, rcounts, brng, &displs);
      c->send_in_place = ip;
      c->recv_null = !me;
      const MPI_Datatype st = ip ? MPI_DATATYPE_NULL : s.type->get();
      const MPI_Datatype rt = r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        // Off the root the receive arguments are insignificant: null arrays.
        const int* rc = me ? rcounts.data() : nullptr;
        const int* rd = me ? displs.data() : nullptr;
        STRIDER_COLL_CALLS(Gatherv, gatherv, sb, sc, st, rb, rc, rd, rt, root, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

// ---- Scatter, Scatterv, Bcast ------------------------------------------------------------

TEST_F(Coll, ScatterEveryRoot) {
  exercise(rounds(3), [&](int round, Cases& cases) {
    for (int root = 0; root < size_; ++root) {
      const bool in_place = bit(seed_of(8, round, root, 1));
      std::mt19937_64 rng(seed_of(8, round, root));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side s = side(base, 8, round, root, 0), r = side(base, 8, round, root, 1);
      const bool me = rank_ == root;
      const bool ip = in_place && me;
      auto c = std::make_unique<Case>();
      c->coll = "Scatter";
      c->what = describe(base, count) + ", root " + std::to_string(root) + (ip ? " in place" : "");
      auto brng = buffer_rng(8, round, root);
      const int sc = count * s.mult, rc = ip ? 0 : count * r.mult;
      c->send = element_buffer(s.type->get(), sc * size_, brng);
      c->send_null = !me;
      if (!ip) c->recv = element_buffer(r.type->get(), rc, brng);
      c->recv_in_place = ip;
      const MPI_Datatype st = s.type->get();
      const MPI_Datatype rt = ip ? MPI_DATATYPE_NULL : r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Scatter, scatter, sb, sc, st, rb, rc, rt, root, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, ScattervEveryRoot) {
  exercise(rounds(3), [&](int round, Cases& cases) {
    for (int root = 0; root < size_; ++root) {
      const bool in_place = bit(seed_of(9, round, root, 1));
      std::mt19937_64 rng(seed_of(9, round, root));
      const Base base = random_base(rng);
      auto count_of = [&](int to) {
        std::mt19937_64 crng(seed_of(9, round, root, to, 2));
        return random_count(crng);
      };
      const Side s = side(base, 9, round, root, 0), r = side(base, 9, round, root, 1);
      const bool me = rank_ == root;
      const bool ip = in_place && me;
      std::vector<int> scounts(size_), displs;
      for (int j = 0; j < size_; ++j) scounts[j] = count_of(j) * s.mult;
      auto c = std::make_unique<Case>();
      c->coll = "Scatterv";
      c->what = base.text + ", root " + std::to_string(root) + (ip ? " in place" : "");
      auto brng = buffer_rng(9, round, root);
      c->send = v_buffer(*s.type, scounts, brng, &displs);
      c->send_null = !me;
      const int rc = ip ? 0 : count_of(rank_) * r.mult;
      if (!ip) c->recv = element_buffer(r.type->get(), rc, brng);
      c->recv_in_place = ip;
      const MPI_Datatype st = s.type->get();
      const MPI_Datatype rt = ip ? MPI_DATATYPE_NULL : r.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
        const int* sc = me ? scounts.data() : nullptr;
        const int* sd = me ? displs.data() : nullptr;
        STRIDER_COLL_CALLS(Scatterv, scatterv, sb, sc, sd, st, rb, rc, rt, root, comm)
      };
      c->keep = {s.type, r.type};
      cases.push_back(std::move(c));
    }
  });
}

TEST_F(Coll, BcastEveryRoot) {
  exercise(rounds(3), [&](int round, Cases& cases) {
    for (int root = 0; root < size_; ++root) {
      std::mt19937_64 rng(seed_of(10, round, root));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side b = side(base, 10, round, root, 0);
      auto c = std::make_unique<Case>();
      c->coll = "Bcast";
      c->what = describe(base, count) + ", root " + std::to_string(root);
      auto brng = buffer_rng(10, round, root);
      const int n = count * b.mult;
      c->recv = element_buffer(b.type->get(), n, brng);
      const MPI_Datatype t = b.type->get();
      const MPI_Comm comm = comm_;
      c->call = [=](Call call, const void*, void* buf, MPI_Request* req) -> int {
        STRIDER_COLL_CALLS(Bcast, bcast, buf, n, t, root, comm)
      };
      c->keep = {b.type};
      cases.push_back(std::move(c));
    }
  });
}

// Several different collectives outstanding at once on one communicator, started in one
// order and completed by Wait, Test loops and Waitall.
TEST_F(Coll, MixedNonblockingBatch) {
  for (int round = 0; round < rounds(6) / 2 + 1; ++round) {
    Cases cases;
    for (int k = 0; k < 4; ++k) {
      std::mt19937_64 rng(seed_of(11, round, k));
      const Base base = random_base(rng);
      const int count = random_count(rng);
      const Side s = side(base, 11, round, k, 0), r = side(base, 11, round, k, 1);
      auto brng = buffer_rng(11, round, k);
      auto c = std::make_unique<Case>();
      const MPI_Datatype st = s.type->get(), rt = r.type->get();
      const MPI_Comm comm = comm_;
      const int sc = count * s.mult, rc = count * r.mult;
      const int root = static_cast<int>(seed_of(11, round, k, 5) % size_);
      c->what = describe(base, count);
      c->keep = {s.type, r.type};
      switch ((round + k) % 4) {
        case 0:
          c->coll = "Alltoall";
          c->send = element_buffer(st, sc * size_, brng);
          c->recv = element_buffer(rt, rc * size_, brng);
          c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
            STRIDER_COLL_CALLS(Alltoall, alltoall, sb, sc, st, rb, rc, rt, comm)
          };
          break;
        case 1:
          c->coll = "Bcast";
          c->recv = element_buffer(st, sc, brng);
          c->call = [=](Call call, const void*, void* rb, MPI_Request* req) -> int {
            STRIDER_COLL_CALLS(Bcast, bcast, rb, sc, st, root, comm)
          };
          break;
        case 2:
          c->coll = "Allgather";
          c->send = element_buffer(st, sc, brng);
          c->recv = element_buffer(rt, rc * size_, brng);
          c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
            STRIDER_COLL_CALLS(Allgather, allgather, sb, sc, st, rb, rc, rt, comm)
          };
          break;
        default:
          c->coll = "Gather";
          c->send = element_buffer(st, sc, brng);
          c->recv = element_buffer(rt, rc * size_, brng);
          c->recv_null = rank_ != root;
          c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
            STRIDER_COLL_CALLS(Gather, gather, sb, sc, st, rb, rc, rt, root, comm)
          };
          break;
      }
      cases.push_back(std::move(c));
    }
    run_cases(cases, Mode::kNonblocking);
  }
}

}  // namespace
}  // namespace strider::testing::coll
