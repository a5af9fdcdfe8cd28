#include "coll_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>

#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace strider::testing::coll {

// ---- seeds -------------------------------------------------------------------------------

long seed_value() {
  static const long seed = env_long("STRIDER_TEST_SEED", 20261211);
  return seed;
}

int rounds(int fallback) {
  return static_cast<int>(std::max(1L, env_long("STRIDER_TEST_ROUNDS", 3L * fallback)));
}

int random_count(std::mt19937_64& rng) {
  const auto r = rng() % 12;
  if (r < 2) return 0;
  if (r == 11) return 5 + static_cast<int>(rng() % 8);
  return 1 + static_cast<int>(rng() % 4);
}

// ---- datatypes ---------------------------------------------------------------------------

Type::Type(std::string text) : text_(std::move(text)) {
  handle_ = typespec::build_type(text_);
  if (!typespec::is_named(handle_)) MPI_Type_commit(&handle_);
  MPI_Type_size(handle_, &size_);
  MPI_Aint lb = 0;
  MPI_Type_get_extent(handle_, &lb, &extent_);
}

Type::~Type() {
  if (handle_ != MPI_DATATYPE_NULL && !typespec::is_named(handle_)) MPI_Type_free(&handle_);
}

TypeRef make_type(const std::string& text) { return std::make_shared<const Type>(text); }

namespace {

typespec::RandomTypeOptions type_options() {
  typespec::RandomTypeOptions o;
  o.max_extent_bytes = 1 << 12;
  o.max_size_bytes = 1 << 10;
  return o;
}

// True when the system MPI packs and unpacks `type` as the standard's typemap says (Open MPI
// 4.1 and MPICH 4.0 deviate on a few types, see pack_differential_test.cpp); decided on fixed
// bytes, so every rank decides alike.
bool mpi_follows_standard(const Type& type) {
  if (type.size() == 0) return true;
  const auto layout = typespec::layout_of(typespec::parse(type.text()));
  if (!layout) return false;
  constexpr int kCount = 2;
  const int n = type.size() * kCount;
  std::mt19937_64 rng(7);
  ElementBuffer user = element_buffer(type.get(), kCount, rng);
  Bytes theirs(static_cast<std::size_t>(n) + 1, 0x5a);
  int position = 0;
  if (PMPI_Pack(user.origin(), kCount, type.get(), theirs.data(), n, &position, MPI_COMM_SELF) !=
          MPI_SUCCESS ||
      position != n) {
    return false;
  }
  theirs.resize(static_cast<std::size_t>(n));
  if (theirs != reference_pack(*layout, type.extent(), kCount, user.origin())) return false;
  ElementBuffer a = element_buffer(type.get(), kCount, rng);
  ElementBuffer b = a;
  for (auto& x : theirs) x = static_cast<unsigned char>(rng());
  position = 0;
  PMPI_Unpack(theirs.data(), n, &position, a.origin(), kCount, type.get(), MPI_COMM_SELF);
  reference_unpack(*layout, type.extent(), kCount, theirs.data(), b.origin());
  return a.bytes == b.bytes;
}

int basic_size(const std::string& name) {
  static const char* const kBasic[] = {"short",
                                       "unsigned_short",
                                       "int16_t",
                                       "uint16_t",
                                       "int",
                                       "unsigned",
                                       "float",
                                       "int32_t",
                                       "uint32_t",
                                       "long",
                                       "unsigned_long",
                                       "long_long",
                                       "unsigned_long_long",
                                       "double",
                                       "int64_t",
                                       "uint64_t"};
  for (const char* b : kBasic) {
    if (name != b) continue;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (!typespec::lookup_named(name, &t)) return 0;
    int size = 0;
    MPI_Type_size(t, &size);
    return size;
  }
  return 0;
}

const char* canonical_basic(int size) {
  switch (size) {
    case 2:
      return "short";
    case 4:
      return "int";
    case 8:
      return "double";
    default:
      return nullptr;
  }
}

// Rewrites every data leaf to the canonical basic type of its size; false if the sizes differ
// or a leaf has none.
bool rewrite_leaves(typespec::Spec& spec, int& leaf_size) {
  if (spec.kind == typespec::Kind::kNamed) {
    if (spec.name == "lb" || spec.name == "ub") return true;
    const int size = basic_size(spec.name);
    if (canonical_basic(size) == nullptr || (leaf_size != 0 && size != leaf_size)) return false;
    leaf_size = size;
    spec.name = canonical_basic(size);
    return true;
  }
  for (typespec::Spec& child : spec.children) {
    if (!rewrite_leaves(child, leaf_size)) return false;
  }
  return true;
}

}  // namespace

Base random_base(std::mt19937_64& rng) {
  const bool one_leaf = rng() % 2 == 0;
  for (;;) {
    std::string text = typespec::random_type(rng, type_options());
    Base base;
    if (one_leaf) {
      typespec::Spec spec = typespec::parse(text);
      int leaf = 0;
      if (!rewrite_leaves(spec, leaf) || leaf == 0) continue;
      const auto layout = typespec::layout_of(spec);
      if (!layout || layout->size < leaf || !typespec::is_count_safe(*layout) ||
          typespec::has_overlap(*layout)) {
        continue;
      }
      base.text = typespec::format(spec);
      base.leaf = canonical_basic(leaf);
      base.values = static_cast<int>(layout->size / leaf);
    } else {
      base.text = std::move(text);
    }
    const Type type(base.text);
    if (!mpi_follows_standard(type)) continue;
    if (!base.leaf.empty()) {  // the MPI's size, not the model's
      MPI_Datatype leaf = MPI_DATATYPE_NULL;
      typespec::lookup_named(base.leaf, &leaf);
      int leaf_bytes = 0;
      MPI_Type_size(leaf, &leaf_bytes);
      if (type.size() % leaf_bytes != 0 || type.size() == 0) continue;
      base.values = type.size() / leaf_bytes;
    }
    return base;
  }
}

Side side_of(const Base& base, bool basic) {
  if (basic && !base.leaf.empty()) return Side{make_type(base.leaf), base.values};
  return Side{make_type(base.text), 1};
}

// ---- buffers -----------------------------------------------------------------------------

namespace {

std::vector<int> permutation(std::size_t n, std::mt19937_64& rng) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

}  // namespace

ElementBuffer v_buffer(const Type& type, const std::vector<int>& counts, std::mt19937_64& rng,
                       std::vector<int>* displs) {
  displs->assign(counts.size(), 0);
  int cursor = static_cast<int>(rng() % 2);
  for (int i : permutation(counts.size(), rng)) {
    (*displs)[static_cast<std::size_t>(i)] = cursor;
    cursor += counts[static_cast<std::size_t>(i)] + static_cast<int>(rng() % 3);
  }
  return element_buffer(type.get(), cursor, rng);
}

ElementBuffer w_buffer(const std::vector<TypeRef>& types, const std::vector<int>& counts,
                       std::mt19937_64& rng, std::vector<int>* displs) {
  displs->assign(counts.size(), 0);
  std::int64_t cursor = 0;
  for (int i : permutation(counts.size(), rng)) {
    const MPI_Datatype t = types[static_cast<std::size_t>(i)]->get();
    const int count = counts[static_cast<std::size_t>(i)];
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &true_lb, &true_extent);
    std::int64_t lo = true_lb, hi = true_lb + true_extent;
    for (int e = 1; e < count; ++e) {
      lo = std::min<std::int64_t>(lo, true_lb + e * extent);
      hi = std::max<std::int64_t>(hi, true_lb + true_extent + e * extent);
    }
    if (count == 0) lo = hi = 0;
    cursor += static_cast<std::int64_t>(rng() % 3) * 8;
    (*displs)[static_cast<std::size_t>(i)] = static_cast<int>(cursor - lo);
    cursor += hi - lo;
  }
  constexpr std::int64_t kMargin = 64;
  ElementBuffer b;
  b.bytes.resize(static_cast<std::size_t>(cursor + 2 * kMargin));
  for (auto& x : b.bytes) x = static_cast<unsigned char>(rng());
  b.origin_offset = kMargin;
  return b;
}

void mark_typemap(const std::string& text, MPI_Aint extent, int first, int count,
                  const ElementBuffer& buf, std::vector<char>* mask, char value) {
  mask->resize(buf.bytes.size(), 0);
  const std::int64_t origin_offset = buf.origin_offset;
  const auto layout = typespec::layout_of(typespec::parse(text));
  ASSERT_TRUE(layout.has_value()) << text;
  for (int e = first; e < first + count; ++e) {
    for (const typespec::Run& run : layout->runs) {
      for (std::int64_t k = 0; k < run.length; ++k) {
        const std::int64_t at = origin_offset + e * extent + run.offset + k;
        ASSERT_TRUE(at >= 0 && at < static_cast<std::int64_t>(mask->size())) << text;
        (*mask)[static_cast<std::size_t>(at)] = value;
      }
    }
  }
}

// ---- running cases -----------------------------------------------------------------------

const char* name(Mode m) {
  switch (m) {
    case Mode::kBlocking:
      return "blocking";
    case Mode::kNonblocking:
      return "nonblocking";
    case Mode::kPersistent:
      return "persistent";
  }
  return "?";
}

void expect_same_bytes(const Bytes& got, const Bytes& want, const std::string& what) {
  if (got == want) return;
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": buffer size " << got.size() << " != " << want.size();
    return;
  }
  std::size_t first = got.size(), wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      first = std::min(first, i);
      ++wrong;
    }
  }
  ADD_FAILURE() << what << ": " << wrong << " of " << got.size()
                << " bytes differ from the MPI's own result, first at " << first << " (got "
                << int(got[first]) << ", want " << int(want[first]) << ")";
}

std::string error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

bool persistent_served_everywhere() {
  if (!kHavePersistent || !strider_loaded()) return false;
  const char* host = std::getenv("STRIDER_COLL_HOST");
  if (host != nullptr && std::string(host) == "pack") return true;
  return std::string(placement_summary()) == "device memory on every rank";
}

namespace {

std::map<std::string, long>& counts() {
  static std::map<std::string, long> c;
  return c;
}

struct State {
  ElementBuffer oracle_send, oracle_recv;
  std::unique_ptr<PlacedBuffer> send, recv;
  MPI_Request req = MPI_REQUEST_NULL;
};

const void* send_arg(const Case& c, ElementBuffer* host, const PlacedBuffer* placed) {
  if (c.send_in_place) return MPI_IN_PLACE;
  if (c.send_null || !c.send) return nullptr;
  return placed ? placed->origin() : host->origin();
}
void* recv_arg(const Case& c, ElementBuffer* host, const PlacedBuffer* placed) {
  if (c.recv_in_place) return MPI_IN_PLACE;
  if (c.recv_null || !c.recv) return nullptr;
  return placed ? placed->origin() : host->origin();
}

void check(const Case& c, const State& st, const std::string& how) {
  const std::string what = c.coll + " (" + how + "): " + c.what + " [" +
                           (c.recv ? placement(Role::kRecv).name() : "-") + "]";
  if (c.send && st.send && !c.send_in_place) {
    expect_same_bytes(st.send->read(), c.send->bytes, what + ": send buffer changed");
  }
  if (!c.recv || !st.recv || c.recv_in_place) return;
  const Bytes got = st.recv->read();
  switch (c.check) {
    case Check::kWhole:
      expect_same_bytes(got, st.oracle_recv.bytes, what);
      break;
    case Check::kTypemap: {
      Bytes want = c.recv->bytes;  // outside the typemap: untouched
      Bytes oracle_outside = st.oracle_recv.bytes;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (c.mask[i] == 2) {  // free: undefined by the standard
          want[i] = got[i];
          oracle_outside[i] = c.recv->bytes[i];
        } else if (c.mask[i] == 1) {
          want[i] = st.oracle_recv.bytes[i];
          oracle_outside[i] = c.recv->bytes[i];
        }
      }
      expect_same_bytes(oracle_outside, c.recv->bytes,
                        what + ": the MPI's own call wrote outside the typemap");
      expect_same_bytes(got, want, what);
      break;
    }
    case Check::kNone:
      break;
  }
}

void complete(std::vector<State>& states, const Cases& cases, const std::string& how) {
  // Requests 0, 4, 8... by MPI_Wait, 1, 5, 9... by MPI_Test loops (in that order), the rest
  // at once by MPI_Waitall.
  std::vector<MPI_Request> rest;
  for (std::size_t i = 0; i < states.size(); ++i) {
    MPI_Request* req = &states[i].req;
    if (i % 4 == 0) {
      EXPECT_EQ(MPI_Wait(req, MPI_STATUS_IGNORE), MPI_SUCCESS) << cases[i]->coll << " " << how;
    } else if (i % 4 == 1) {
      int flag = 0, rc = MPI_SUCCESS;
      while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
      EXPECT_EQ(rc, MPI_SUCCESS) << cases[i]->coll << " " << how;
    }
  }
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (i % 4 >= 2) rest.push_back(states[i].req);
  }
  if (!rest.empty()) {
    EXPECT_EQ(MPI_Waitall(static_cast<int>(rest.size()), rest.data(), MPI_STATUSES_IGNORE),
              MPI_SUCCESS)
        << how;
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (i % 4 >= 2) states[i].req = rest[k++];
  }
}

// Whether a case's persistent form is checked here: not where the MPI's own loses data on
// wires filled at MPI_Start, which Strider leaves to the MPI (calls/persistent.hpp).
bool persistent_form_tested(const Case& c) {
  if (!on_mpich() || mpi_major() > 4 || (mpi_major() == 4 && mpi_minor() >= 3)) return true;
  return c.coll != "Gather" && c.coll != "Scatter" &&
         !(c.coll == "Allgather" && c.what.rfind("intercommunicator", 0) == 0);
}

// The persistent forms: every case initialized with its send buffer scrambled (a start must
// pack what the buffer holds then, not at init), started twice (all at once by MPI_Startall,
// then one by one by MPI_Start, the receive buffers reset in between) and completed as the
// nonblocking ones are; the second start's result is the one checked.
template <class Args>
void run_persistent(std::vector<State>& states, const Cases& cases, Args args,
                    const std::string& how) {
  std::vector<MPI_Request> all;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = *cases[i];
    State& st = states[i];
    if (!persistent_form_tested(c)) continue;
    if (st.send) st.send->write(Bytes(c.send->bytes.size(), 0xA5));
    const auto [s, r] = args(i);
    EXPECT_EQ(c.call(Call::kPersistent, s, r, &st.req), MPI_SUCCESS)
        << "MPI_" << c.coll << "_init: " << c.what;
    if (st.send) st.send->write(c.send->bytes);
    all.push_back(st.req);
  }
  for (int round = 0; round < 2; ++round) {
    if (round == 0) {
      EXPECT_EQ(MPI_Startall(static_cast<int>(all.size()), all.data()), MPI_SUCCESS) << how;
    } else {
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (states[i].recv) states[i].recv->write(cases[i]->recv->bytes);
      }
      MPI_Barrier(MPI_COMM_WORLD);  // no rank's second start writes a buffer still being reset
      for (MPI_Request& r : all) EXPECT_EQ(MPI_Start(&r), MPI_SUCCESS) << how;
    }
    complete(states, cases, how);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (!persistent_form_tested(*cases[i])) continue;
      EXPECT_NE(states[i].req, MPI_REQUEST_NULL) << "a persistent request stays after completion";
    }
  }
}

}  // namespace

void run_cases(Cases& cases, Mode mode) {
  // STRIDER_TEST_TRACE=1: each case on stderr before it runs (to find a hang).
  static const bool trace = env_long("STRIDER_TEST_TRACE", 0) != 0;
  if (trace) {
    for (const auto& c : cases) {
      std::fprintf(stderr, "[rank %d] %s %s: %s\n", world_rank(), name(mode), c->coll.c_str(),
                   c->what.c_str());
    }
  }
  std::vector<State> states(cases.size());
  // The oracle: the MPI's own collective on host copies.
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Case& c = *cases[i];
    State& st = states[i];
    if (c.send) st.oracle_send = *c.send;
    if (c.recv) st.oracle_recv = *c.recv;
    // The oracle in the form under test (the nonblocking one for a persistent call), completed
    // at once by PMPI_Wait.
    const Call form = mode == Mode::kBlocking ? Call::kOracle : Call::kOracleNonblocking;
    MPI_Request req = MPI_REQUEST_NULL;
    if (trace) std::fprintf(stderr, "[rank %d] oracle %zu\n", world_rank(), i);
    int rc = c.call(form, send_arg(c, &st.oracle_send, nullptr),
                    recv_arg(c, &st.oracle_recv, nullptr), &req);
    if (rc == MPI_SUCCESS && form != Call::kOracle) rc = PMPI_Wait(&req, MPI_STATUS_IGNORE);
    if (req != MPI_REQUEST_NULL) PMPI_Request_free(&req);
    EXPECT_EQ(rc, MPI_SUCCESS) << "oracle PMPI_" << c.coll << " (" << name(mode) << "): " << c.what
                               << ": " << error_text(rc);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Case& c = *cases[i];
    if (c.send && !c.send_in_place && !c.send_null) {
      states[i].send = std::make_unique<PlacedBuffer>(placement(Role::kSend), c.send->bytes,
                                                      c.send->origin_offset);
    }
    if (c.recv && !c.recv_in_place && !c.recv_null) {
      states[i].recv = std::make_unique<PlacedBuffer>(placement(Role::kRecv), c.recv->bytes,
                                                      c.recv->origin_offset);
    }
  }
  const std::string how = name(mode);
  auto args = [&](std::size_t i) {
    return std::make_pair(send_arg(*cases[i], nullptr, states[i].send.get()),
                          recv_arg(*cases[i], nullptr, states[i].recv.get()));
  };
  switch (mode) {
    case Mode::kBlocking:
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto [s, r] = args(i);
        EXPECT_EQ(cases[i]->call(Call::kBlocking, s, r, nullptr), MPI_SUCCESS)
            << "MPI_" << cases[i]->coll << ": " << cases[i]->what;
      }
      break;
    case Mode::kNonblocking:
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto [s, r] = args(i);
        EXPECT_EQ(cases[i]->call(Call::kNonblocking, s, r, &states[i].req), MPI_SUCCESS)
            << "MPI_I" << cases[i]->coll << ": " << cases[i]->what;
      }
      complete(states, cases, how);
      break;
    case Mode::kPersistent:
      run_persistent(states, cases, args, how);
      for (State& st : states) {
        if (st.req != MPI_REQUEST_NULL) {
          EXPECT_EQ(MPI_Request_free(&st.req), MPI_SUCCESS) << how;
        }
      }
      break;
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (mode == Mode::kPersistent && !persistent_form_tested(*cases[i])) continue;
    check(*cases[i], states[i], how);
    std::string coll = cases[i]->coll;
    if (mode == Mode::kNonblocking) {
      coll[0] = static_cast<char>(std::tolower(coll[0]));
      coll = "I" + coll;
    } else if (mode == Mode::kPersistent) {
      coll += "_init";
    }
    count_case(coll);
  }
}

void count_case(const std::string& coll) { ++counts()[coll]; }

void print_counts() {
  if (world_rank() != 0) return;
  long total = 0;
  for (const auto& [coll, n] : counts()) {
    std::printf("collective_test: %-28s %6ld cases\n", coll.c_str(), n);
    total += n;
  }
  std::printf("collective_test: %-28s %6ld cases (seed %ld)\n", "total", total, seed_value());
  std::fflush(stdout);
}

}  // namespace strider::testing::coll
