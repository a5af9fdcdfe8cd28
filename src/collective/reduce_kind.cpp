#include "collective/reduce_kind.hpp"

#include <vector>

namespace strider::collective {
namespace {

using engine::cuda::ReduceElement;
using engine::cuda::ReduceOp;

// The standard's groups of types for predefined ops (MPI 4.1, 6.9.2).
enum class Group { Integer, Floating, Logical, Byte, Pair };

struct TypeEntry {
  MPI_Datatype type;
  ReduceElement element;
  Group group;
};

template <class T>
ReduceElement integer_of() {
  constexpr bool is_signed = static_cast<T>(-1) < static_cast<T>(0);
  switch (sizeof(T)) {
    case 1:
      return is_signed ? ReduceElement::Int8 : ReduceElement::UInt8;
    case 2:
      return is_signed ? ReduceElement::Int16 : ReduceElement::UInt16;
    case 4:
      return is_signed ? ReduceElement::Int32 : ReduceElement::UInt32;
    default:
      return is_signed ? ReduceElement::Int64 : ReduceElement::UInt64;
  }
}

const std::vector<TypeEntry>& types() {
  // Leaked: a reduction may come from an atexit handler (runtime/config.cpp).
  static const auto* table = new std::vector<TypeEntry>{
      {MPI_INT, integer_of<int>(), Group::Integer},
      {MPI_UNSIGNED, integer_of<unsigned>(), Group::Integer},
      {MPI_LONG, integer_of<long>(), Group::Integer},
      {MPI_UNSIGNED_LONG, integer_of<unsigned long>(), Group::Integer},
      {MPI_SHORT, integer_of<short>(), Group::Integer},
      {MPI_UNSIGNED_SHORT, integer_of<unsigned short>(), Group::Integer},
      {MPI_LONG_LONG_INT, integer_of<long long>(), Group::Integer},
      {MPI_LONG_LONG, integer_of<long long>(), Group::Integer},
      {MPI_UNSIGNED_LONG_LONG, integer_of<unsigned long long>(), Group::Integer},
      {MPI_SIGNED_CHAR, ReduceElement::Int8, Group::Integer},
      {MPI_UNSIGNED_CHAR, ReduceElement::UInt8, Group::Integer},
      {MPI_INT8_T, ReduceElement::Int8, Group::Integer},
      {MPI_INT16_T, ReduceElement::Int16, Group::Integer},
      {MPI_INT32_T, ReduceElement::Int32, Group::Integer},
      {MPI_INT64_T, ReduceElement::Int64, Group::Integer},
      {MPI_UINT8_T, ReduceElement::UInt8, Group::Integer},
      {MPI_UINT16_T, ReduceElement::UInt16, Group::Integer},
      {MPI_UINT32_T, ReduceElement::UInt32, Group::Integer},
      {MPI_UINT64_T, ReduceElement::UInt64, Group::Integer},
      {MPI_FLOAT, ReduceElement::Float32, Group::Floating},
      {MPI_DOUBLE, ReduceElement::Float64, Group::Floating},
      {MPI_C_BOOL, ReduceElement::Bool, Group::Logical},
      {MPI_BYTE, ReduceElement::UInt8, Group::Byte},
      {MPI_FLOAT_INT, ReduceElement::FloatInt, Group::Pair},
      {MPI_DOUBLE_INT, ReduceElement::DoubleInt, Group::Pair},
      {MPI_LONG_INT, ReduceElement::LongInt, Group::Pair},
      {MPI_2INT, ReduceElement::IntInt, Group::Pair},
      {MPI_SHORT_INT, ReduceElement::ShortInt, Group::Pair},
  };
  return *table;
}

struct OpEntry {
  MPI_Op op;
  ReduceOp kind;
};

const std::vector<OpEntry>& ops() {
  // Leaked, as types().
  static const auto* table = new std::vector<OpEntry>{
      {MPI_SUM, ReduceOp::Sum},         {MPI_PROD, ReduceOp::Prod},
      {MPI_MIN, ReduceOp::Min},         {MPI_MAX, ReduceOp::Max},
      {MPI_LAND, ReduceOp::LogicalAnd}, {MPI_LOR, ReduceOp::LogicalOr},
      {MPI_LXOR, ReduceOp::LogicalXor}, {MPI_BAND, ReduceOp::BitAnd},
      {MPI_BOR, ReduceOp::BitOr},       {MPI_BXOR, ReduceOp::BitXor},
      {MPI_MINLOC, ReduceOp::MinLoc},   {MPI_MAXLOC, ReduceOp::MaxLoc},
  };
  return *table;
}

bool allowed(Group group, ReduceOp op) {
  switch (group) {
    case Group::Integer:
      return op != ReduceOp::MinLoc && op != ReduceOp::MaxLoc;
    case Group::Floating:
      return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::Min ||
             op == ReduceOp::Max;
    case Group::Logical:
      return op == ReduceOp::LogicalAnd || op == ReduceOp::LogicalOr || op == ReduceOp::LogicalXor;
    case Group::Byte:
      return op == ReduceOp::BitAnd || op == ReduceOp::BitOr || op == ReduceOp::BitXor;
    case Group::Pair:
      return op == ReduceOp::MinLoc || op == ReduceOp::MaxLoc;
  }
  return false;
}

}  // namespace

std::optional<engine::cuda::ReduceKind> reduce_kind(MPI_Datatype type, MPI_Op op) {
  if (type == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return std::nullopt;
  const OpEntry* o = nullptr;
  for (const OpEntry& e : ops()) {
    if (e.op == op) o = &e;
  }
  if (!o) return std::nullopt;
  for (const TypeEntry& t : types()) {
    if (t.type != type) continue;
    if (!allowed(t.group, o->kind)) return std::nullopt;
    const engine::cuda::ReduceKind kind{t.element, o->kind};
    // The kernel's element is the C layout; the MPI's type must span exactly that.
    MPI_Aint lb = 0, extent = 0;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS || lb != 0 ||
        extent != engine::cuda::element_bytes(kind.element) || !engine::cuda::reduces(kind)) {
      return std::nullopt;
    }
    return kind;
  }
  return std::nullopt;
}

}  // namespace strider::collective
