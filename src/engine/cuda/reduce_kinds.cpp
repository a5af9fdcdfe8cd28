// Which reductions the GPU computes (reduce.hpp): plain C++, so that a build without CUDA
// answers the same.
#include "engine/cuda/reduce.hpp"

namespace strider::engine::cuda {

int element_bytes(ReduceElement element) {
  switch (element) {
    case ReduceElement::Int8:
    case ReduceElement::UInt8:
    case ReduceElement::Bool:
      return 1;
    case ReduceElement::Int16:
    case ReduceElement::UInt16:
      return 2;
    case ReduceElement::Int32:
    case ReduceElement::UInt32:
    case ReduceElement::Float32:
      return 4;
    case ReduceElement::Int64:
    case ReduceElement::UInt64:
    case ReduceElement::Float64:
    case ReduceElement::FloatInt:
    case ReduceElement::IntInt:
    case ReduceElement::ShortInt:
      return 8;
    case ReduceElement::DoubleInt:
    case ReduceElement::LongInt:
      return 16;
  }
  return 0;
}

namespace {

bool pair(ReduceElement e) {
  return e == ReduceElement::FloatInt || e == ReduceElement::DoubleInt ||
         e == ReduceElement::LongInt || e == ReduceElement::IntInt || e == ReduceElement::ShortInt;
}
bool floating(ReduceElement e) {
  return e == ReduceElement::Float32 || e == ReduceElement::Float64;
}

}  // namespace

bool reduces(ReduceKind kind) {
  const ReduceElement e = kind.element;
  switch (kind.op) {
    case ReduceOp::MinLoc:
    case ReduceOp::MaxLoc:
      return pair(e);
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Min:
    case ReduceOp::Max:
      return !pair(e) && e != ReduceElement::Bool;
    case ReduceOp::LogicalAnd:
    case ReduceOp::LogicalOr:
    case ReduceOp::LogicalXor:
      return !pair(e) && !floating(e);
    case ReduceOp::BitAnd:
    case ReduceOp::BitOr:
    case ReduceOp::BitXor:
      return !pair(e) && !floating(e) && e != ReduceElement::Bool;
  }
  return false;
}

}  // namespace strider::engine::cuda
