// Reduction data for the collective test: types, the ops valid on them, values that make every
// result exact, and two user-defined ops.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "coll_support.hpp"
#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace strider::testing::coll {
namespace {

int leaf_size(Leaf leaf) {
  switch (leaf) {
    case Leaf::kInt:
      return sizeof(int);
    case Leaf::kLong:
      return sizeof(long);
    case Leaf::kShort:
      return sizeof(short);
    case Leaf::kUnsignedChar:
      return 1;
    case Leaf::kFloat:
      return sizeof(float);
    case Leaf::kDouble:
      return sizeof(double);
  }
  return 1;
}

bool floating(Leaf leaf) { return leaf == Leaf::kFloat || leaf == Leaf::kDouble; }

// Writes `v` (an integer, exact in every leaf type) as a `leaf` at `p`.
void put(Leaf leaf, unsigned char* p, long long v) {
  switch (leaf) {
    case Leaf::kInt: {
      const int x = static_cast<int>(v);
      std::memcpy(p, &x, sizeof x);
      break;
    }
    case Leaf::kLong: {
      const long x = static_cast<long>(v);
      std::memcpy(p, &x, sizeof x);
      break;
    }
    case Leaf::kShort: {
      const short x = static_cast<short>(v);
      std::memcpy(p, &x, sizeof x);
      break;
    }
    case Leaf::kUnsignedChar:
      *p = static_cast<unsigned char>(v);
      break;
    case Leaf::kFloat: {
      const float x = static_cast<float>(v);
      std::memcpy(p, &x, sizeof x);
      break;
    }
    case Leaf::kDouble: {
      const double x = static_cast<double>(v);
      std::memcpy(p, &x, sizeof x);
      break;
    }
  }
}

long long value_for(MPI_Op op, Leaf leaf, std::mt19937_64& rng) {
  auto in = [&](long long lo, long long hi) {
    return lo + static_cast<long long>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const bool uchar = leaf == Leaf::kUnsignedChar;
  if (op == MPI_PROD) return uchar ? in(0, 3) : in(-3, 3);
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return in(0, 2);
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
    return static_cast<long long>(rng() >> (leaf == Leaf::kLong ? 1 : 33));
  }
  if (op == MPI_MINLOC || op == MPI_MAXLOC) return in(-3, 3);
  if (op == MPI_SUM || op == MPI_MIN || op == MPI_MAX) return uchar ? in(0, 255) : in(-1000, 1000);
  return static_cast<long long>(rng() >> 32);  // user ops: any 32-bit pattern
}

// User ops on 4-byte integers, whatever the datatype's layout: the MPI's own pack brings the
// values together, the result goes back by its own unpack.
template <std::uint32_t (*F)(std::uint32_t in, std::uint32_t inout)>
void apply(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  PMPI_Pack_size(*len, *type, MPI_COMM_SELF, &bytes);
  std::vector<unsigned char> a(static_cast<std::size_t>(bytes) + 4),
      b(static_cast<std::size_t>(bytes) + 4);
  int pa = 0, pb = 0;
  PMPI_Pack(in, *len, *type, a.data(), bytes, &pa, MPI_COMM_SELF);
  PMPI_Pack(inout, *len, *type, b.data(), bytes, &pb, MPI_COMM_SELF);
  for (int i = 0; i + 4 <= pb; i += 4) {
    std::uint32_t x, y;
    std::memcpy(&x, a.data() + i, 4);
    std::memcpy(&y, b.data() + i, 4);
    y = F(x, y);
    std::memcpy(b.data() + i, &y, 4);
  }
  int position = 0;
  PMPI_Unpack(b.data(), pb, &position, inout, *len, *type, MPI_COMM_SELF);
}

std::uint32_t plus_one(std::uint32_t a, std::uint32_t b) { return a + b + 1; }
// (m, c) = x -> m x + c mod 2^16 in the high and low halves; in o inout.
std::uint32_t compose(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t m1 = a >> 16, c1 = a & 0xffff, m2 = b >> 16, c2 = b & 0xffff;
  return (((m1 * m2) & 0xffff) << 16) | ((m1 * c2 + c1) & 0xffff);
}

}  // namespace

std::vector<OpInfo> ops_for(const ReduceType& type) {
  if (type.pair) return {{MPI_MINLOC, "MINLOC"}, {MPI_MAXLOC, "MAXLOC"}};
  std::vector<OpInfo> ops = {
      {MPI_SUM, "SUM"}, {MPI_PROD, "PROD"}, {MPI_MIN, "MIN"}, {MPI_MAX, "MAX"}};
  if (!floating(type.leaf)) {
    ops.insert(ops.end(), {{MPI_LAND, "LAND"},
                           {MPI_LOR, "LOR"},
                           {MPI_LXOR, "LXOR"},
                           {MPI_BAND, "BAND"},
                           {MPI_BOR, "BOR"},
                           {MPI_BXOR, "BXOR"}});
  }
  return ops;
}

MPI_Op user_op(bool commutative) {
  static MPI_Op ops[2] = {MPI_OP_NULL, MPI_OP_NULL};
  MPI_Op& op = ops[commutative ? 1 : 0];
  if (op == MPI_OP_NULL) {
    MPI_Op_create(commutative ? &apply<plus_one> : &apply<compose>, commutative ? 1 : 0, &op);
  }
  return op;
}

void fill_values(const ReduceType& type, MPI_Aint extent, int first, int count, MPI_Op op,
                 std::mt19937_64& rng, ElementBuffer* buf) {
  const auto layout = typespec::layout_of(typespec::parse(type.text));
  ASSERT_TRUE(layout.has_value()) << type.text;
  const int size = leaf_size(type.leaf);
  for (int e = first; e < first + count; ++e) {
    unsigned char* element = buf->origin() + e * extent;
    if (type.pair) {  // value first, the int index in the last 4 data bytes
      const typespec::Run& last = layout->runs.back();
      put(type.leaf, element + layout->runs.front().offset, value_for(op, type.leaf, rng));
      put(Leaf::kInt, element + last.offset + last.length - 4, static_cast<long long>(rng() % 6));
      continue;
    }
    for (const typespec::Run& run : layout->runs) {
      for (std::int64_t k = 0; k + size <= run.length; k += size) {
        put(type.leaf, element + run.offset + k, value_for(op, type.leaf, rng));
      }
    }
  }
}

std::vector<ReduceType> predefined_reduce_types() {
  return {{"int", Leaf::kInt, false},
          {"long", Leaf::kLong, false},
          {"unsigned_char", Leaf::kUnsignedChar, false},
          {"short", Leaf::kShort, false},
          {"double", Leaf::kDouble, false},
          {"float", Leaf::kFloat, false},
          {"2int", Leaf::kInt, true},
          {"double_int", Leaf::kDouble, true},
          {"float_int", Leaf::kFloat, true},
          {"long_int", Leaf::kLong, true},
          {"short_int", Leaf::kShort, true}};
}

ReduceType random_reduce_type(std::mt19937_64& rng, Leaf leaf) {
  const std::string b = leaf == Leaf::kDouble ? "double" : "int";
  auto small = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  // One constructor over the basic type: Open MPI 4.1 refuses predefined ops (MPI_ERR_OP) on
  // nested derived types and on resized ones, though the standard allows them.
  std::string text;
  switch (rng() % 3) {
    case 0:
      text = "contiguous(" + std::to_string(small(1, 4)) + "," + b + ")";
      break;
    case 1: {
      const int bl = small(1, 3);
      text = "vector(" + std::to_string(small(1, 3)) + "," + std::to_string(bl) + "," +
             std::to_string(bl + small(0, 3)) + "," + b + ")";
      break;
    }
    default: {  // blocks at increasing displacements, gaps between them
      const int n = small(1, 3);
      std::string bls, disps;
      int at = small(0, 2);
      for (int i = 0; i < n; ++i) {
        const int bl = small(1, 3);
        bls += (i ? "," : "") + std::to_string(bl);
        disps += (i ? "," : "") + std::to_string(at);
        at += bl + small(0, 2);
      }
      text = "indexed([" + bls + "],[" + disps + "]," + b + ")";
      break;
    }
  }
  return ReduceType{text, leaf, false};
}

}  // namespace strider::testing::coll
