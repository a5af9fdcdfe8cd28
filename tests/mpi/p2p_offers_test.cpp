// The same-node offers (docs/same-node-p2p.md) under MPI's matching rules, on random schedules
// that mix receives Strider finishes with receives the MPI fills, specific and wildcard
// receives, blocking and nonblocking ones, probes, matched probes, cancels and truncation.
// Every message carries (source, tag, index) and a pattern derived from them: whatever path it
// took, each receive must get exactly the bytes, count and envelope of a message the MPI's own
// rules allow it, every message must arrive exactly once, and a stream's messages must reach
// its receives in posting order. A notice reaching a receive the MPI fills would show as a
// count of 0. Host build: "managed" receives are host buffers through Strider's path
// (strider_set_p2p_host(1)), the others go to the MPI; GPU build (STRIDER_P2P_TEST_GPU): managed
// buffers are in the placement's GPU memory.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "mpi_test_support.hpp"
#include "p2p_buffers.hpp"

namespace strider::testing {
namespace {

constexpr int kTags = 3;
constexpr int kHeader = 3;  // source, tag, index

int value(int source, int tag, int index, int i) {
  if (i == 0) return source;
  if (i == 1) return tag;
  if (i == 2) return index;
  return static_cast<int>((static_cast<unsigned>(source) * 7919u + tag * 104729u +
                           index * 1299709u + i * 2654435761u) >>
                          3);
}

// The memory a receive or send uses: managed (Strider finishes it) or the MPI's.
Placement& memory(bool managed, Role role) {
#ifdef STRIDER_P2P_TEST_GPU
  return managed ? placement(role) : host_placement();
#else
  set_p2p_host(managed);
  (void)role;
  return host_placement();
#endif
}

// A message's element count, known to both sides from the plan.
int message_length(std::uint64_t seed, int source, int dest, int tag, int index) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<unsigned>(source) * 4099u + dest * 131u +
                      tag * 17u + static_cast<unsigned>(index));
  const int r = static_cast<int>(rng() % 100);
  if (r < 10) return kHeader + static_cast<int>(rng() % 20000);  // past the host landing area
  return kHeader + static_cast<int>(rng() % 2000);
}

struct Receive {
  PlacedBuffer buffer;
  int capacity;
  int source, tag;  // as posted
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Status status{};
  int rc = MPI_SUCCESS;
  bool done = false;
  long order;  // posting order
  bool managed = false, blocking = false, cancel_tried = false;
};

std::vector<unsigned char> sentinel_bytes(int capacity) {
  return std::vector<unsigned char>(static_cast<std::size_t>(capacity) * 8, 0xA5);
}

class Round {
 public:
  // On `comm`, whose ranks may differ from the world's.
  Round(std::uint64_t seed, int round, MPI_Comm comm)
      : seed_(seed * 7777u + round),
        comm_(comm),
        rank_(rank_in(comm)),
        size_(size_of(comm)),
        rng_(seed_ + rank_) {}

  void run(bool preposted) {
    const int me = rank_, n = size_;
    // The plan, the same on every rank: how many messages on each stream.
    std::mt19937_64 plan(seed_);
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        // Messages to self too: their offers are in the process's own slots (none with
        // STRIDER_TEST_NO_SELF=1, where writes in place are counted across two GPUs only).
        for (int t = 0; t < kTags; ++t) {
          const int c = static_cast<int>(plan() % 3);
          counts_[{s, d, t}] = s == d && env_long("STRIDER_TEST_NO_SELF", 0) == 1 ? 0 : c;
        }
      }
    }
    if (preposted) {
      post_specific(false);
      MPI_Barrier(comm_);  // the receives (and their offers) exist before any send
      send_all();
    } else {
      send_all();
      post_specific(true);
    }
    for (auto& r : receives_) finish(r);
    receive_rest();
    std::vector<MPI_Status> st(sends_.size());
    ASSERT_EQ(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), st.data()), MPI_SUCCESS);
    check_streams(me);
    // Every rank's receives are done before anyone sends the next round's messages, which a
    // wildcard receive of this round would otherwise take.
    MPI_Barrier(comm_);
  }

 private:
  void send_all() {
    const int me = rank_, n = size_;
    std::vector<std::array<int, 3>> order;  // (dest, tag, index), random across streams
    for (int d = 0; d < n; ++d) {
      for (int t = 0; t < kTags; ++t) {
        for (int i = 0; i < counts_[{me, d, t}]; ++i) order.push_back({d, t, i});
      }
    }
    // Per stream in index order (a stream's order is its send order), streams interleaved.
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a[2] < b[2]; });
    for (auto& [d, t, i] : order) {
      const int len = message_length(seed_, me, d, t, i);
      std::vector<unsigned char> host(static_cast<std::size_t>(len) * 8, 0);
      for (int k = 0; k < len; ++k) {
        const int v = value(me, t, i, k);
        std::memcpy(host.data() + k * 8, &v, sizeof v);
      }
      const bool managed = rng_() % 4 != 0;
      send_buffers_.emplace_back(memory(managed, Role::kSend), host, 0);
      MPI_Request req;
      const bool sync = rng_() % 3 == 0;
      const int rc = (sync ? MPI_Issend : MPI_Isend)(send_buffers_.back().origin(), len,
                                                     strided_int_type(), d, t, comm_, &req);
      ASSERT_EQ(rc, MPI_SUCCESS);
      sends_.push_back(req);
    }
  }

  // Specific receives for part of each stream, in a random order across streams; some
  // truncated, some cancelled (and then received again later), some blocking.
  void post_specific(bool blocking_allowed) {
    const int me = rank_, n = size_;
    std::vector<std::pair<int, int>> order;
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < kTags; ++t) {
        const int take =
            counts_[{s, me, t}] == 0 ? 0 : static_cast<int>(rng_() % (counts_[{s, me, t}] + 1));
        for (int i = 0; i < take; ++i) order.push_back({s, t});
      }
    }
    std::shuffle(order.begin(), order.end(), rng_);
    // Stream order: the j-th specific receive of a stream gets its message j.
    std::map<std::pair<int, int>, int> next;
    for (auto [s, t] : order) {
      const int index = next[{s, t}]++;
      const int len = message_length(seed_, s, me, t, index);
      const bool truncate = rng_() % 12 == 0;
      const int capacity = truncate ? len - 1 - static_cast<int>(rng_() % (len - 1))
                                    : len + static_cast<int>(rng_() % 4);
      post(s, t, capacity, blocking_allowed && rng_() % 3 == 0);
      // A cancel of a receive that may be matched meanwhile: either outcome is valid.
      if (rng_() % 8 == 0) cancel_last();
    }
    // A receive no message can match, cancelled.
    if (rng_() % 2 == 0) {
      post(rng_() % n, 99, 8, false);
      cancel_last();
      ASSERT_TRUE(receives_.back().done);
      int cancelled = 0;
      MPI_Test_cancelled(&receives_.back().status, &cancelled);
      EXPECT_TRUE(cancelled) << "a receive for tag 99 matched something";
    }
  }

  void post(int source, int tag, int capacity, bool blocking) {
    const bool managed = rng_() % 3 != 0;
    receives_.push_back(
        Receive{PlacedBuffer(memory(managed, Role::kRecv), sentinel_bytes(capacity), 0), capacity,
                source, tag});
    Receive& r = receives_.back();
    r.order = order_++;
    r.managed = managed;
    r.blocking = blocking;
    if (blocking) {
      r.rc =
          MPI_Recv(r.buffer.origin(), capacity, strided_int_type(), source, tag, comm_, &r.status);
      r.done = true;
    } else {
      ASSERT_EQ(MPI_Irecv(r.buffer.origin(), capacity, strided_int_type(), source, tag, comm_,
                          &r.request),
                MPI_SUCCESS);
    }
  }

  void cancel_last() {
    Receive& r = receives_.back();
    if (r.done) return;
    r.cancel_tried = true;
    ASSERT_EQ(MPI_Cancel(&r.request), MPI_SUCCESS);
    r.rc = MPI_Wait(&r.request, &r.status);
    r.done = true;
  }

  void finish(Receive& r) {
    if (!r.done) {
      r.rc = MPI_Wait(&r.request, &r.status);
      r.done = true;
    }
  }

  // The rest by wildcards: Probe + Recv, Mprobe + Mrecv, or a receive from anyone.
  void receive_rest() {
    const int me = rank_, n = size_;
    int expected = 0;
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < kTags; ++t) expected += counts_[{s, me, t}];
    }
    int got = 0;
    for (const auto& r : receives_) got += matched(r) ? 1 : 0;
    for (int k = got; k < expected; ++k) {
      const int kind = static_cast<int>(rng_() % 3);
      constexpr int kMax = kHeader + 20000;
      if (kind == 0) {
        receives_.push_back(
            Receive{PlacedBuffer(memory(rng_() % 2, Role::kRecv), sentinel_bytes(kMax), 0), kMax,
                    MPI_ANY_SOURCE, MPI_ANY_TAG});
        Receive& r = receives_.back();
        r.order = order_++;
        r.rc = MPI_Recv(r.buffer.origin(), kMax, strided_int_type(), MPI_ANY_SOURCE, MPI_ANY_TAG,
                        comm_, &r.status);
        r.done = true;
      } else {
        MPI_Status probe{};
        MPI_Message message = MPI_MESSAGE_NULL;
        if (kind == 1) {
          ASSERT_EQ(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &probe), MPI_SUCCESS);
        } else {
          ASSERT_EQ(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &message, &probe), MPI_SUCCESS);
        }
        int count = 0;
        MPI_Get_count(&probe, strided_int_type(), &count);
        ASSERT_GE(count, kHeader) << "a probe saw a message without its bytes";
        receives_.push_back(
            Receive{PlacedBuffer(memory(rng_() % 2, Role::kRecv), sentinel_bytes(count), 0), count,
                    probe.MPI_SOURCE, probe.MPI_TAG});
        Receive& r = receives_.back();
        r.order = order_++;
        r.rc = kind == 1
                   ? MPI_Recv(r.buffer.origin(), count, strided_int_type(), probe.MPI_SOURCE,
                              probe.MPI_TAG, comm_, &r.status)
                   : MPI_Mrecv(r.buffer.origin(), count, strided_int_type(), &message, &r.status);
        r.done = true;
        int got_count = 0;
        MPI_Get_count(&r.status, strided_int_type(), &got_count);
        EXPECT_EQ(got_count, count) << "probe and receive disagree";
      }
    }
  }

  static bool matched(const Receive& r) {
    int cancelled = 0;
    MPI_Test_cancelled(&r.status, &cancelled);
    return !cancelled && r.source != MPI_PROC_NULL && r.tag != 99;
  }

  void check_streams(int me) {
    std::map<std::pair<int, int>, std::vector<std::pair<long, int>>> seen;  // (order, index)
    std::map<std::pair<int, int>, int> truncated;
    for (auto& r : receives_) {
      if (!matched(r)) continue;
      const int s = r.status.MPI_SOURCE, t = r.status.MPI_TAG;
      ASSERT_GE(s, 0);
      ASSERT_TRUE(t >= 0 && t < kTags);
      if (r.source != MPI_ANY_SOURCE) EXPECT_EQ(s, r.source);
      if (r.tag != MPI_ANY_TAG) EXPECT_EQ(t, r.tag);
      if (r.rc != MPI_SUCCESS) {  // truncated: the MPI's verdict (what arrives differs by MPI)
        int error_class = MPI_SUCCESS;
        MPI_Error_class(r.rc, &error_class);
        EXPECT_EQ(error_class, MPI_ERR_TRUNCATE) << "source " << s << " tag " << t;
        truncated[{s, t}]++;
        continue;
      }
      const std::vector<unsigned char> got = r.buffer.read();
      int index = -1;
      std::memcpy(&index, got.data() + 2 * 8, sizeof index);
      const int stream_count = counts_[{s, me, t}];
      ASSERT_TRUE(index >= 0 && index < stream_count) << "source " << s << " tag " << t;
      const int len = message_length(seed_, s, me, t, index);
      int count = -1;
      MPI_Get_count(&r.status, strided_int_type(), &count);
      ASSERT_LE(len, r.capacity) << "a message past the capacity was not reported truncated: "
                                 << "posted (" << r.source << ", " << r.tag << "), count " << count
                                 << ", managed " << r.managed << ", blocking " << r.blocking
                                 << ", cancel tried " << r.cancel_tried << ", rank " << me
                                 << ", order " << r.order;
      ASSERT_EQ(r.rc, MPI_SUCCESS);
      ASSERT_EQ(count, len) << "source " << s << " tag " << t << " index " << index;
      for (int k = 0; k < r.capacity; ++k) {
        int v = 0, gap = 0;
        std::memcpy(&v, got.data() + k * 8, sizeof v);
        std::memcpy(&gap, got.data() + k * 8 + 4, sizeof gap);
        ASSERT_EQ(gap, static_cast<int>(0xA5A5A5A5)) << "a gap was written";
        if (k < len) {
          ASSERT_EQ(v, value(s, t, index, k)) << "source " << s << " tag " << t << " element " << k;
        } else {
          ASSERT_EQ(v, static_cast<int>(0xA5A5A5A5)) << "written past the message";
        }
      }
      seen[{s, t}].push_back({r.order, index});
    }
    const int n = size_;
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < kTags; ++t) {
        auto& v = seen[{s, t}];
        std::sort(v.begin(), v.end());
        const int stream_count = counts_[{s, me, t}];
        const int arrived = static_cast<int>(v.size()) + truncated[{s, t}];
        ASSERT_EQ(arrived, stream_count) << "source " << s << " tag " << t;
        for (std::size_t j = 1; j < v.size(); ++j) {
          EXPECT_LT(v[j - 1].second, v[j].second) << "stream order broken, source " << s;
        }
      }
    }
  }

  static int rank_in(MPI_Comm c) {
    int r = -1;
    MPI_Comm_rank(c, &r);
    return r;
  }
  static int size_of(MPI_Comm c) {
    int n = 0;
    MPI_Comm_size(c, &n);
    return n;
  }

  std::uint64_t seed_;
  MPI_Comm comm_;
  int rank_, size_;
  std::mt19937_64 rng_;
  std::map<std::tuple<int, int, int>, int> counts_;  // (source, dest, tag) -> messages
  std::vector<PlacedBuffer> send_buffers_;
  std::vector<MPI_Request> sends_;
  std::deque<Receive> receives_;
  long order_ = 0;
};

std::uint64_t offers_used() { return strider_loaded() ? stats().offers_used : 0; }

TEST(P2POffers, RandomSchedulesKeepMpiMatching) {
  const std::uint64_t seed = static_cast<std::uint64_t>(env_long("STRIDER_TEST_SEED", 1));
  const int rounds = static_cast<int>(env_long("STRIDER_TEST_ROUNDS", 40));
  const strider_stats before = strider_loaded() ? stats() : strider_stats{};
  // Rounds on MPI_COMM_WORLD, on a split with the ranks reversed (kept), and on a duplicate of
  // it made and freed each round (its handle may come back for the next one): each has its
  // own streams and its own name on the board (offers/comm_ledgers.hpp).
  constexpr int kKinds = 3;
  const char* const kind_names[kKinds] = {"MPI_COMM_WORLD", "a reversed split", "a fresh dup"};
  long used_by_kind[kKinds] = {};
  MPI_Comm reversed = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, world_size() - world_rank(), &reversed), MPI_SUCCESS);
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE(round);
    const int kind = round % kKinds;
    MPI_Comm comm = kind == 0 ? MPI_COMM_WORLD : reversed;
    if (kind == 2) ASSERT_EQ(MPI_Comm_dup(reversed, &comm), MPI_SUCCESS);
    const std::uint64_t used_before = offers_used();
    Round(seed, round, comm).run(round % 2 == 0);
    used_by_kind[kind] += static_cast<long>(offers_used() - used_before);
    if (kind == 2) MPI_Comm_free(&comm);
    if (HasFatalFailure()) return;
  }
  MPI_Comm_free(&reversed);
  set_p2p_host(false);
  if (!strider_loaded()) return;
  const strider_stats after = stats();
  const long in_place = static_cast<long>(after.offers_in_place - before.offers_in_place);
  std::printf(
      "rank %d: offers made %llu, taken %llu, used %llu (%ld, %ld, %ld by communicator), %ld of "
      "them written in place\n",
      world_rank(), static_cast<unsigned long long>(after.offers_made - before.offers_made),
      static_cast<unsigned long long>(after.offers_taken - before.offers_taken),
      static_cast<unsigned long long>(after.offers_used - before.offers_used), used_by_kind[0],
      used_by_kind[1], used_by_kind[2], in_place);
  // With receives posted before every send in half the rounds, offers are certain to be made
  // and used on a node of two or more processes (unless turned off), on every communicator.
  const char* same_node = std::getenv("STRIDER_SAME_NODE");
  const bool on = same_node == nullptr || std::string(same_node) != "0";
  long total[kKinds] = {};
  MPI_Allreduce(used_by_kind, total, kKinds, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  // Receives of exactly the message's size in cudaMalloc memory are written in place by their
  // senders (STRIDER_TEST_EXPECT_IN_PLACE=1); never in memory CUDA IPC does not export (=0).
  long in_place_total = 0;
  MPI_Allreduce(&in_place, &in_place_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long expect_in_place = env_long("STRIDER_TEST_EXPECT_IN_PLACE", -1);
#ifdef STRIDER_P2P_TEST_GPU
  // Across GPUs only blocks of at least STRIDER_DIRECT_MIN_BLOCK bytes (4 by default,
  // ipc::DirectPolicy) are written in place, and this test's elements are 4-byte blocks.
  constexpr long kBlock = sizeof(int);
  const long min_block = env_long("STRIDER_DIRECT_MIN_BLOCK", 4);
  if (expect_in_place == 1 && !all_ranks_on_one_gpu() && kBlock < min_block) expect_in_place = 0;
#endif
  if (expect_in_place == 1 && on && world_size() > 1) {
    EXPECT_GT(in_place_total, 0) << "no receive was written in place";
  } else if (expect_in_place == 0) {
    EXPECT_EQ(in_place_total, 0);
  }
  for (int kind = 0; kind < kKinds && rounds >= 2 * kKinds; ++kind) {
    // (STRIDER_TEST_EXPECT_OFFERS=0 where no two ranks hold managed buffers: GPU "mixed".)
    if (on && world_size() > 1 && env_long("STRIDER_TEST_EXPECT_OFFERS", 1) != 0) {
      EXPECT_GT(total[kind], 0) << "no receive on " << kind_names[kind] << " used an offer";
    } else if (!on) {
      EXPECT_EQ(total[kind], 0) << kind_names[kind];
    }
  }
}

constexpr int kSelfMessages = 8;

// One burst of messages to itself (receives posted first, then the sends, one Waitall): checks
// that every one arrives exactly, and returns how many went by offers.
std::uint64_t self_burst(std::mt19937_64& rng, int round) {
  const int me = world_rank();
  const std::uint64_t used_before = offers_used();
  std::vector<PlacedBuffer> receives, sends;
  std::vector<int> lengths;
  std::vector<MPI_Request> requests;
  for (int m = 0; m < kSelfMessages; ++m) {
#ifdef STRIDER_P2P_TEST_GPU
    const int len = 12288 + static_cast<int>(rng() % 4096);
#else
    const int len = kHeader + static_cast<int>(rng() % 1500);
#endif
    lengths.push_back(len);
    receives.emplace_back(memory(true, Role::kRecv), sentinel_bytes(len), 0);
    MPI_Request r;
    EXPECT_EQ(
        MPI_Irecv(receives.back().origin(), len, strided_int_type(), me, m, MPI_COMM_WORLD, &r),
        MPI_SUCCESS);
    requests.push_back(r);
  }
  for (int m = 0; m < kSelfMessages; ++m) {
    std::vector<unsigned char> host(static_cast<std::size_t>(lengths[m]) * 8, 0);
    for (int k = 0; k < lengths[m]; ++k) {
      const int v = value(me, m, round, k);
      std::memcpy(host.data() + k * 8, &v, sizeof v);
    }
    sends.emplace_back(memory(true, Role::kSend), host, 0);
    MPI_Request r;
    EXPECT_EQ(
        MPI_Isend(sends.back().origin(), lengths[m], strided_int_type(), me, m, MPI_COMM_WORLD, &r),
        MPI_SUCCESS);
    requests.push_back(r);
  }
  std::vector<MPI_Status> statuses(requests.size());
  EXPECT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()),
            MPI_SUCCESS);
  for (int m = 0; m < kSelfMessages; ++m) {
    int count = -1;
    MPI_Get_count(&statuses[m], strided_int_type(), &count);
    EXPECT_EQ(count, lengths[m]) << "message " << m;
    EXPECT_EQ(statuses[m].MPI_SOURCE, me);
    EXPECT_EQ(statuses[m].MPI_TAG, m);
    const std::vector<unsigned char> got = receives[m].read();
    for (int k = 0; k < lengths[m]; ++k) {
      int v = 0;
      std::memcpy(&v, got.data() + k * 8, sizeof v);
      EXPECT_EQ(v, value(me, m, round, k)) << "message " << m << " element " << k;
      EXPECT_EQ(got[k * 8 + 4], 0xA5) << "a hole was written, message " << m;
    }
  }
  return offers_used() - used_before;
}

// Whether this run expects offers (Strider loaded, same-node on, not told otherwise).
bool offers_expected() {
  const char* same_node = std::getenv("STRIDER_SAME_NODE");
  const bool on = same_node == nullptr || std::string(same_node) != "0";
  return strider_loaded() && on && env_long("STRIDER_TEST_EXPECT_OFFERS", 1) != 0;
}

// A burst of messages to itself (receives posted first, then the sends, one Waitall, as a halo
// whose periodic dimension has one process): every one arrives exactly, and with offers on they
// go by offers (the process's own slots; on a GPU its own memory, written in place). On a GPU,
// messages of 48-64 KiB packed: in a burst smaller ones go by the MPI where the model finds the
// offer's host cost the larger (model::offer_wins).
TEST(P2POffers, MessagesToSelfTakeOffers) {
  if (env_long("STRIDER_TEST_NO_SELF", 0) == 1) GTEST_SKIP() << "STRIDER_TEST_NO_SELF=1";
  const std::uint64_t seed = static_cast<std::uint64_t>(env_long("STRIDER_TEST_SEED", 1));
  std::mt19937_64 rng(seed * 31u + static_cast<unsigned>(world_rank()));
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const std::uint64_t used = self_burst(rng, round);
    if (offers_expected()) EXPECT_EQ(used, static_cast<std::uint64_t>(kSelfMessages));
  }
  set_p2p_host(false);
}

// Persistent requests on every stream (each peer, itself included, and each tag), started again
// and again (MPI_Startall or MPI_Start, requests in a random order) and completed by a random
// completion call; between rounds, plain messages on the same streams, some received by a
// wildcard. A persistent start counts for the offers as a nonblocking call does (docs/
// same-node-p2p.md, "Persistent requests"): every message must arrive exactly, in its stream's
// order, and with offers on the starts must take offers.
class PersistentRounds {
 public:
  explicit PersistentRounds(std::uint64_t seed)
      : seed_(seed), me_(world_rank()), n_(world_size()), rng_(seed * 131u + world_rank()) {}

  void run(int rounds) {
    const bool no_self = env_long("STRIDER_TEST_NO_SELF", 0) == 1;
    for (int peer = 0; peer < n_; ++peer) {
      if (no_self && peer == me_) continue;
      for (int t = 0; t < kTags; ++t) {
        add_receive(peer, t);
        add_send(peer, t);
      }
    }
    for (int round = 0; round < rounds && !::testing::Test::HasFatalFailure(); ++round) {
      SCOPED_TRACE(round);
      exchange(round);
      extras(round);
    }
    if (::testing::Test::HasFatalFailure()) return;
    last_round(rounds);
  }

 private:
  struct Stream {
    bool receive;
    int peer, tag, length, capacity;
    PlacedBuffer buffer;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // A stream's message length, the same each round and known to both sides.
  int length(int source, int dest, int tag) const {
#ifdef STRIDER_P2P_TEST_GPU
    return 12288 + message_length(seed_, source, dest, tag, 0) % 4096;
#else
    return message_length(seed_, source, dest, tag, 0) % 1500 + kHeader;
#endif
  }

  void add_receive(int source, int tag) {
    const int len = length(source, me_, tag);
    const int capacity = rng_() % 3 == 0 ? len + 1 + static_cast<int>(rng_() % 3) : len;
    streams_.push_back(
        Stream{true, source, tag, len, capacity,
               PlacedBuffer(memory(true, Role::kRecv), sentinel_bytes(capacity), 0)});
    Stream& s = streams_.back();
    ASSERT_EQ(MPI_Recv_init(s.buffer.origin(), capacity, strided_int_type(), source, tag,
                            MPI_COMM_WORLD, &s.request),
              MPI_SUCCESS);
  }

  void add_send(int dest, int tag) {
    const int len = length(me_, dest, tag);
    streams_.push_back(Stream{false, dest, tag, len, len,
                              PlacedBuffer(memory(true, Role::kSend), sentinel_bytes(len), 0)});
    Stream& s = streams_.back();
    // Synchronous ones are numbered but take no offers.
    const auto init = rng_() % 5 == 0 ? MPI_Ssend_init : MPI_Send_init;
    ASSERT_EQ(
        init(s.buffer.origin(), len, strided_int_type(), dest, tag, MPI_COMM_WORLD, &s.request),
        MPI_SUCCESS);
  }

  static std::vector<unsigned char> message(int source, int tag, int index, int len) {
    std::vector<unsigned char> host(static_cast<std::size_t>(len) * 8, 0xA5);
    for (int k = 0; k < len; ++k) {
      const int v = value(source, tag, index, k);
      std::memcpy(host.data() + k * 8, &v, sizeof v);
    }
    return host;
  }

  void exchange(int round) {
    std::vector<std::size_t> order(streams_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<MPI_Request> requests;
    for (const std::size_t i : order) {
      Stream& s = streams_[i];
      s.buffer.write(s.receive ? sentinel_bytes(s.capacity) : message(me_, s.tag, round, s.length));
      requests.push_back(s.request);
    }
    const int count = static_cast<int>(requests.size());
    const std::uint64_t used_before = offers_used();
    if (rng_() % 3 == 0) {
      for (MPI_Request& r : requests) ASSERT_EQ(MPI_Start(&r), MPI_SUCCESS);
    } else {
      ASSERT_EQ(MPI_Startall(count, requests.data()), MPI_SUCCESS);
    }
    std::vector<MPI_Status> statuses(requests.size());
    complete(requests, statuses);
    SCOPED_TRACE(std::string("completed by ") + kCompletionNames[last_how_]);
    offers_in_exchanges_ += static_cast<long>(offers_used() - used_before);
    for (std::size_t k = 0; k < order.size(); ++k) {
      Stream& s = streams_[order[k]];
      ASSERT_EQ(requests[k], s.request) << "a persistent request was freed by its completion";
      if (!s.receive) continue;
      EXPECT_EQ(statuses[k].MPI_SOURCE, s.peer);
      EXPECT_EQ(statuses[k].MPI_TAG, s.tag);
      expect_message(s.buffer, s.capacity, statuses[k], s.peer, s.tag, round, s.length);
    }
  }

  // One more start of everything, the sends freed while active (their starts, noticed or not,
  // finish in the background), the receives waited for one by one and then freed.
  void last_round(int round) {
    std::vector<MPI_Request> requests;
    for (Stream& s : streams_) {
      s.buffer.write(s.receive ? sentinel_bytes(s.capacity) : message(me_, s.tag, round, s.length));
      requests.push_back(s.request);
    }
    ASSERT_EQ(MPI_Startall(static_cast<int>(requests.size()), requests.data()), MPI_SUCCESS);
    for (Stream& s : streams_) {
      if (s.receive) continue;
      ASSERT_EQ(MPI_Request_free(&s.request), MPI_SUCCESS);
      ASSERT_EQ(s.request, MPI_REQUEST_NULL);
    }
    for (Stream& s : streams_) {
      if (!s.receive) continue;
      MPI_Status status;
      ASSERT_EQ(MPI_Wait(&s.request, &status), MPI_SUCCESS);
      expect_message(s.buffer, s.capacity, status, s.peer, s.tag, round, s.length);
      ASSERT_EQ(MPI_Request_free(&s.request), MPI_SUCCESS);
    }
  }

  // By a completion call chosen at random; `statuses[k]` is request k's.
  void complete(std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses) {
    const int count = static_cast<int>(requests.size());
    const int how = static_cast<int>(rng_() % 8);
    last_how_ = how;
    if (how == 0) {
      ASSERT_EQ(MPI_Waitall(count, requests.data(), statuses.data()), MPI_SUCCESS);
    } else if (how == 1) {
      for (int flag = 0; !flag;) {
        ASSERT_EQ(MPI_Testall(count, requests.data(), &flag, statuses.data()), MPI_SUCCESS);
      }
    } else if (how >= 2 && how <= 5) {
      // Waitany, Testany, Waitsome or Testsome until every request has been reported once (a
      // persistent request stays live, inactive, so later calls skip it).
      std::vector<char> seen(requests.size(), 0);
      for (int left = count; left > 0;) {
        if (how == 2 || how == 3) {
          int index = MPI_UNDEFINED, flag = 1;
          MPI_Status st;
          if (how == 2) {
            ASSERT_EQ(MPI_Waitany(count, requests.data(), &index, &st), MPI_SUCCESS);
          } else {
            ASSERT_EQ(MPI_Testany(count, requests.data(), &index, &flag, &st), MPI_SUCCESS);
            if (!flag) continue;
          }
          ASSERT_NE(index, MPI_UNDEFINED) << left << " requests never reported";
          ASSERT_FALSE(seen[index]) << "request " << index << " reported twice";
          seen[index] = 1;
          statuses[index] = st;
          --left;
        } else {
          int outcount = 0;
          std::vector<int> indices(requests.size());
          std::vector<MPI_Status> st(requests.size());
          ASSERT_EQ((how == 4 ? MPI_Waitsome : MPI_Testsome)(count, requests.data(), &outcount,
                                                             indices.data(), st.data()),
                    MPI_SUCCESS);
          ASSERT_NE(outcount, MPI_UNDEFINED) << left << " requests never reported";
          for (int j = 0; j < outcount; ++j) {
            ASSERT_FALSE(seen[indices[j]]) << "request " << indices[j] << " reported twice";
            seen[indices[j]] = 1;
            statuses[indices[j]] = st[j];
          }
          left -= outcount;
        }
      }
    } else if (how == 6) {
      for (int k = 0; k < count; ++k) {
        ASSERT_EQ(MPI_Wait(&requests[k], &statuses[k]), MPI_SUCCESS);
      }
    } else {
      // MPI_Request_get_status until complete, then MPI_Wait: the wait's status must count
      // what arrived too (where the MPI keeps it: wait_after_get_status_empties_persistent).
      const bool keep = wait_after_get_status_empties_persistent();
      for (int k = 0; k < count; ++k) {
        for (int flag = 0; !flag;) {
          ASSERT_EQ(MPI_Request_get_status(requests[k], &flag, &statuses[k]), MPI_SUCCESS);
        }
        MPI_Status waited;
        ASSERT_EQ(MPI_Wait(&requests[k], keep ? &waited : &statuses[k]), MPI_SUCCESS);
      }
    }
  }

  static void expect_message(const PlacedBuffer& buffer, int capacity, const MPI_Status& status,
                             int source, int tag, int index, int len) {
    int count = -1;
    MPI_Get_count(&status, strided_int_type(), &count);
    ASSERT_EQ(count, len) << "source " << source << " tag " << tag << " index " << index;
    const std::vector<unsigned char> got = buffer.read();
    for (int k = 0; k < capacity; ++k) {
      int v = 0, gap = 0;
      std::memcpy(&v, got.data() + k * 8, sizeof v);
      std::memcpy(&gap, got.data() + k * 8 + 4, sizeof gap);
      ASSERT_EQ(gap, static_cast<int>(0xA5A5A5A5)) << "a gap was written";
      ASSERT_EQ(v, k < len ? value(source, tag, index, k) : static_cast<int>(0xA5A5A5A5))
          << "source " << source << " tag " << tag << " index " << index << " element " << k;
    }
  }

  // Plain messages on some streams after the round (index 1000 + round), the same plan on every
  // rank; where exactly one comes to this rank from a source, it is received by MPI_ANY_TAG (a
  // wildcard source could take another rank's message of the next round).
  void extras(int round) {
    std::mt19937_64 plan(seed_ * 977u + static_cast<unsigned>(round));
    std::vector<std::array<int, 3>> planned;  // (source, dest, tag)
    for (int source = 0; source < n_; ++source) {
      for (int dest = 0; dest < n_; ++dest) {
        for (int t = 0; t < kTags; ++t) {
          const bool extra = plan() % 4 == 0;
          if (extra && (source != dest || env_long("STRIDER_TEST_NO_SELF", 0) != 1)) {
            planned.push_back({source, dest, t});
          }
        }
      }
    }
    std::vector<int> from(static_cast<std::size_t>(n_), 0);
    for (const auto& [s, d, t] : planned) from[s] += d == me_ ? 1 : 0;
    std::vector<PlacedBuffer> buffers;
    std::vector<std::array<int, 3>> received;  // (source, tag, len) as posted
    std::vector<MPI_Request> requests;
    constexpr int kMax = kHeader + 20000;
    for (const auto& [s, d, t] : planned) {
      if (d != me_) continue;
      const bool wildcard = from[s] == 1;
      const int capacity = wildcard ? kMax : length(s, me_, t);
      buffers.emplace_back(memory(rng_() % 2 == 0, Role::kRecv), sentinel_bytes(capacity), 0);
      received.push_back({s, t, capacity});
      requests.emplace_back();
      ASSERT_EQ(MPI_Irecv(buffers.back().origin(), capacity, strided_int_type(), s,
                          wildcard ? MPI_ANY_TAG : t, MPI_COMM_WORLD, &requests.back()),
                MPI_SUCCESS);
    }
    const std::size_t receives = requests.size();
    for (const auto& [s, d, t] : planned) {
      if (s != me_) continue;
      buffers.emplace_back(memory(rng_() % 2 == 0, Role::kSend),
                           message(me_, t, 1000 + round, length(me_, d, t)), 0);
      requests.emplace_back();
      ASSERT_EQ(MPI_Isend(buffers.back().origin(), length(me_, d, t), strided_int_type(), d, t,
                          MPI_COMM_WORLD, &requests.back()),
                MPI_SUCCESS);
    }
    std::vector<MPI_Status> statuses(requests.size());
    ASSERT_EQ(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()),
              MPI_SUCCESS);
    for (std::size_t k = 0; k < receives; ++k) {
      const int source = statuses[k].MPI_SOURCE, tag = statuses[k].MPI_TAG;
      EXPECT_EQ(source, received[k][0]);
      if (from[source] != 1) EXPECT_EQ(tag, received[k][1]);
      expect_message(buffers[k], received[k][2], statuses[k], source, tag, 1000 + round,
                     length(source, me_, tag));
    }
  }

  std::uint64_t seed_;
  int me_, n_;
  std::mt19937_64 rng_;
  std::deque<Stream> streams_;
  int last_how_ = 0;
  static constexpr const char* kCompletionNames[] = {
      "MPI_Waitall",  "MPI_Testall",  "MPI_Waitany", "MPI_Testany",
      "MPI_Waitsome", "MPI_Testsome", "MPI_Wait",    "MPI_Request_get_status and MPI_Wait"};

 public:
  long offers_in_exchanges_ = 0;  // used by the persistent starts, not by the plain messages
};

TEST(P2POffers, PersistentRequestsTakeOffers) {
  const std::uint64_t seed = static_cast<std::uint64_t>(env_long("STRIDER_TEST_SEED", 1));
  PersistentRounds rounds(seed);
  rounds.run(static_cast<int>(env_long("STRIDER_TEST_ROUNDS", 40)) / 2);
  if (HasFatalFailure()) return;
  set_p2p_host(false);
  const char* same_node = std::getenv("STRIDER_SAME_NODE");
  const bool on = same_node == nullptr || std::string(same_node) != "0";
  long used = rounds.offers_in_exchanges_, total = 0;
  MPI_Allreduce(&used, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (!strider_loaded()) return;
  std::printf("rank %d: persistent rounds used %ld offers\n", world_rank(), used);
  const bool others = world_size() > 1 || env_long("STRIDER_TEST_NO_SELF", 0) != 1;
  if (on && others && env_long("STRIDER_TEST_EXPECT_OFFERS", 1) != 0) {
    EXPECT_GT(total, 0) << "no persistent start used an offer";
  } else if (!on) {
    EXPECT_EQ(total, 0);
  }
}

// A cancel of a send Strider numbered for the offers may leave a gap in its stream's numbering
// (if the MPI carries it out), after which a sender's index could name a receiver's offer for
// another message: every stream of the process stops taking offers (docs/same-node-p2p.md, I2),
// whether or not the MPI cancelled it. Last in this file: the process takes no offers after it.
TEST(P2POffers, ACancelledSendStopsTheOffers) {
  if (env_long("STRIDER_TEST_NO_SELF", 0) == 1) GTEST_SKIP() << "STRIDER_TEST_NO_SELF=1";
  std::mt19937_64 rng(77u + static_cast<unsigned>(world_rank()));
  const std::uint64_t before = self_burst(rng, 0);
  if (offers_expected()) EXPECT_EQ(before, static_cast<std::uint64_t>(kSelfMessages));
  const int me = world_rank(), len = kHeader + 10;
  std::vector<unsigned char> host(static_cast<std::size_t>(len) * 8, 0);
  PlacedBuffer send(memory(true, Role::kSend), host, 0);
  MPI_Request r = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Isend(send.origin(), len, strided_int_type(), me, 999, MPI_COMM_WORLD, &r),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Cancel(&r), MPI_SUCCESS);
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  if (!cancelled) {
    PlacedBuffer got(memory(true, Role::kRecv), sentinel_bytes(len), 0);
    ASSERT_EQ(
        MPI_Recv(got.origin(), len, strided_int_type(), me, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        MPI_SUCCESS);
  }
  EXPECT_EQ(self_burst(rng, 1), 0u) << "a send took an offer after a send was cancelled";
  set_p2p_host(false);
}

}  // namespace
}  // namespace strider::testing
