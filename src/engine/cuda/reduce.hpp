// Reductions computed on the GPU: predefined MPI operations over predefined element types, as
// C computes them (integers wrap, floating point is IEEE with no contraction), folding the
// inputs left to right so that every rank folding the same inputs gets the same bits. MPI-free:
// the caller maps its handles to these kinds (collective/reduce_kind.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/span.hpp"

namespace strider::engine::cuda {

enum class ReduceOp {
  Sum,
  Prod,
  Min,
  Max,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitAnd,
  BitOr,
  BitXor,
  MinLoc,
  MaxLoc,
};

// Elements as C lays them out on the host: the pairs are MINLOC/MAXLOC's value-index structs
// ({float, int}: 8 bytes; {double, int} and {long, int}: 16; {short, int}: 8), whose padding is
// never written.
enum class ReduceElement {
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64,
  Bool,
  FloatInt,
  DoubleInt,
  LongInt,
  IntInt,
  ShortInt,
};

struct ReduceKind {
  ReduceElement element = ReduceElement::Int32;
  ReduceOp op = ReduceOp::Sum;
};

// The bytes one element occupies (its C sizeof, padding included).
int element_bytes(ReduceElement element);
// Whether a kernel computes `kind`: arithmetic and min/max on numbers, logical ops on integers
// and bools, bitwise ops on integers, MINLOC/MAXLOC on the pairs.
bool reduces(ReduceKind kind);

// The most inputs one call folds.
constexpr int kMaxReduceInputs = 64;

// out[i] = ((in[0][i] op in[1][i]) op in[2][i]) ... for i < count, with one kernel on GPU
// `device`, which must reach every input (its own memory, a peer's, or another process's mapped
// into this one) and `out` (its memory or managed memory). One input copies it. `out` may be
// one of the inputs. Waits. Fallback: a kind no kernel computes, too many inputs, no CUDA.
Outcome reduce(ReduceKind kind, Span<const std::byte* const> inputs, std::byte* out,
               std::int64_t count, int device, std::string& error);

}  // namespace strider::engine::cuda
