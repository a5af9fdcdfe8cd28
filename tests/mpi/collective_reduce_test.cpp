// Reductions of the collective test (see collective_test.cpp): Reduce, Allreduce,
// Reduce_scatter, Reduce_scatter_block, Scan and Exscan on predefined types with every op the
// standard allows on them, on derived types over one predefined type (int or double) with the
// predefined ops, and with user-defined ops (commutative and not) on derived types. Values are
// integers (exact in floating point), so every result is exact and the MPI's own reduction on
// host copies is the oracle: the result's typemap bytes equal, every other byte untouched.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "coll_support.hpp"

namespace strider::testing::coll {
namespace {

enum class Kind { kReduce, kAllreduce, kReduceScatter, kReduceScatterBlock, kScan, kExscan };
constexpr Kind kKinds[] = {Kind::kReduce,        Kind::kAllreduce,
                           Kind::kReduceScatter, Kind::kReduceScatterBlock,
                           Kind::kScan,          Kind::kExscan};
const char* name(Kind k) {
  constexpr const char* kNames[] = {"Reduce", "Allreduce", "Reduce_scatter", "Reduce_scatter_block",
                                    "Scan",   "Exscan"};
  return kNames[static_cast<int>(k)];
}

bool bit(std::uint64_t seed) { return (seed >> 23) & 1; }

// comm_, rank_, size_: WorldCommTest (mpi_test_support.hpp).
class Reductions : public WorldCommTest {
 protected:
  // One reduction case on this rank. `key` names it (the same on every rank).
  std::unique_ptr<Case> make(Kind kind, const ReduceType& rt, MPI_Op op, const std::string& op_name,
                             std::uint64_t key) const {
    std::mt19937_64 rng(seed_of(20, key));
    const TypeRef type = make_type(rt.text);
    const MPI_Aint extent = type->extent();
    const int count = random_count(rng);
    const int root = static_cast<int>(rng() % static_cast<std::uint64_t>(size_));
    std::vector<int> rcounts(size_, count);
    if (kind == Kind::kReduceScatter) {
      for (int& n : rcounts) n = random_count(rng);
    }
    const int total = kind == Kind::kReduceScatter
                          ? std::accumulate(rcounts.begin(), rcounts.end(), 0)
                      : kind == Kind::kReduceScatterBlock ? count * size_
                                                          : count;
    const int mine = rcounts[rank_];
    // In place where the standard allows it (Reduce: the root only).
    const bool in_place = bit(seed_of(20, key, 1)) && (kind != Kind::kReduce || rank_ == root);

    auto c = std::make_unique<Case>();
    c->coll = name(kind);
    c->what = std::to_string(count) + " x " + rt.text + ", " + op_name +
              (kind == Kind::kReduce ? ", root " + std::to_string(root) : "") +
              (in_place ? ", in place" : "");
    std::mt19937_64 brng(seed_of(20, key, rank_, 2));
    c->check = Check::kTypemap;
    if (in_place) {
      c->send_in_place = true;
      c->recv = element_buffer(type->get(), total, brng);
      fill_values(rt, extent, 0, total, op, brng, &*c->recv);
      const int result =
          kind == Kind::kReduceScatter || kind == Kind::kReduceScatterBlock ? mine : count;
      mark_typemap(rt.text, extent, 0, result, *c->recv, &c->mask, 1);
      // Reduce_scatter in place: what follows this rank's block is the MPI's to use.
      mark_typemap(rt.text, extent, result, total - result, *c->recv, &c->mask, 2);
    } else {
      c->send = element_buffer(type->get(), total, brng);
      fill_values(rt, extent, 0, total, op, brng, &*c->send);
      const int result =
          kind == Kind::kReduceScatter || kind == Kind::kReduceScatterBlock ? mine : count;
      c->recv = element_buffer(type->get(), result, brng);
      mark_typemap(rt.text, extent, 0, result, *c->recv, &c->mask, 1);
    }
    if (kind == Kind::kExscan && rank_ == 0) {  // rank 0's result is undefined
      for (char& m : c->mask) m = m ? 2 : 0;
    }
    if (kind == Kind::kReduce && rank_ != root) c->recv_null = true;
    const MPI_Datatype t = type->get();
    const MPI_Comm comm = comm_;
    const int block = count;
    switch (kind) {
      case Kind::kReduce:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Reduce, reduce, sb, rb, block, t, op, root, comm)
        };
        break;
      case Kind::kAllreduce:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Allreduce, allreduce, sb, rb, block, t, op, comm)
        };
        break;
      case Kind::kReduceScatter:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Reduce_scatter, reduce_scatter, sb, rb, rcounts.data(), t, op, comm)
        };
        break;
      case Kind::kReduceScatterBlock:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Reduce_scatter_block, reduce_scatter_block, sb, rb, block, t, op, comm)
        };
        break;
      case Kind::kScan:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Scan, scan, sb, rb, block, t, op, comm)
        };
        break;
      case Kind::kExscan:
        c->call = [=](Call call, const void* sb, void* rb, MPI_Request* req) -> int {
          STRIDER_COLL_CALLS(Exscan, exscan, sb, rb, block, t, op, comm)
        };
        break;
    }
    c->keep = {type};
    return c;
  }

  // Every kind, every mode: `add(kind, round, cases)` fills one batch.
  template <class Add>
  void exercise(int n_rounds, Add add) {
    for (Mode mode : {Mode::kBlocking, Mode::kNonblocking, Mode::kPersistent}) {
      if (mode == Mode::kPersistent && !persistent_served_everywhere()) continue;
      const int n = mode == Mode::kBlocking ? n_rounds : (n_rounds + 1) / 2;
      for (Kind kind : kKinds) {
        for (int round = 0; round < n; ++round) {
          Cases cases;
          add(kind, round + 1000 * static_cast<int>(mode), cases);
          run_cases(cases, mode);
        }
      }
    }
  }
};

TEST_F(Reductions, PredefinedTypesEveryOp) {
  exercise(rounds(2), [&](Kind kind, int round, Cases& cases) {
    int k = 0;
    for (const ReduceType& rt : predefined_reduce_types()) {
      for (const OpInfo& op : ops_for(rt)) {
        cases.push_back(
            make(kind, rt, op.op, op.name, seed_of(21, static_cast<int>(kind), round, k++)));
      }
    }
  });
}

// Whether the MPI applies predefined ops to derived types, as the standard says it must when
// every basic element is one predefined type. Open MPI 4.1 refuses them (MPI_ERR_OP: "not
// defined for non-intrinsic datatypes"); its own oracle then has nothing to say.
bool predefined_ops_on_derived_types() {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_commit(&t);
  int in[2] = {1, 2}, out[2] = {0, 0};
  const int rc = PMPI_Allreduce(in, out, 1, t, MPI_SUM, MPI_COMM_SELF);
  MPI_Type_free(&t);
  return rc == MPI_SUCCESS && out[0] == 1 && out[1] == 2;
}

TEST_F(Reductions, DerivedTypesPredefinedOps) {
  if (!predefined_ops_on_derived_types()) {
    if (rank_ == 0) {
      std::printf(
          "collective_test: this MPI refuses predefined ops on derived types "
          "(Open MPI 4.1: MPI_ERR_OP); those cases are not run here\n");
    }
    GTEST_SKIP() << "the MPI refuses predefined ops on derived types";
  }
  exercise(rounds(2), [&](Kind kind, int round, Cases& cases) {
    int k = 0;
    for (Leaf leaf : {Leaf::kInt, Leaf::kDouble, Leaf::kInt, Leaf::kDouble}) {
      std::mt19937_64 rng(seed_of(22, static_cast<int>(kind), round, k));
      const ReduceType rt = random_reduce_type(rng, leaf);
      for (const OpInfo& op : ops_for(rt)) {
        cases.push_back(
            make(kind, rt, op.op, op.name, seed_of(22, static_cast<int>(kind), round, k++)));
      }
    }
  });
}

TEST_F(Reductions, UserOpsOnDerivedTypes) {
  exercise(rounds(2), [&](Kind kind, int round, Cases& cases) {
    int k = 0;
    for (bool commutative : {true, false}) {
      const char* op_name = commutative ? "user op (commutative)" : "user op (non-commutative)";
      const MPI_Op op = user_op(commutative);
      cases.push_back(make(kind, ReduceType{"int", Leaf::kInt, false}, op, op_name,
                           seed_of(23, static_cast<int>(kind), round, k++)));
      for (int j = 0; j < 3; ++j) {
        std::mt19937_64 rng(seed_of(23, static_cast<int>(kind), round, k, 5));
        const ReduceType rt = random_reduce_type(rng, Leaf::kInt);
        cases.push_back(
            make(kind, rt, op, op_name, seed_of(23, static_cast<int>(kind), round, k++)));
      }
    }
  });
}

}  // namespace
}  // namespace strider::testing::coll
