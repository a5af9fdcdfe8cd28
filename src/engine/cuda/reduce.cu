// The reduction kernel (reduce.hpp): one thread per element (grid-stride), folding the inputs
// left to right. Integers fold in their unsigned counterpart (at least 32 bits wide), so sums
// and products wrap as C's do; floating point uses the _rn intrinsics, which are never fused.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "engine/cuda/policy.hpp"
#include "engine/cuda/reduce.hpp"
#include "engine/cuda/sync_call.hpp"

namespace strider::engine::cuda {
namespace {

template <class V>
struct Pair {  // MINLOC/MAXLOC's {value, index}, laid out as the C struct
  V v;
  int i;
};
template <class T>
struct IsPair : std::false_type {};
template <class V>
struct IsPair<Pair<V>> : std::true_type {};

// An integer's arithmetic type: unsigned, and not promoted to int.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < 4), unsigned, std::make_unsigned_t<T>>;

struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>)
      return __fadd_rn(a, b);
    else if constexpr (std::is_same_v<T, double>)
      return __dadd_rn(a, b);
    else
      return static_cast<T>(
          static_cast<Wide<T>>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)));
  }
};
struct Prod {
  template <class T>
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>)
      return __fmul_rn(a, b);
    else if constexpr (std::is_same_v<T, double>)
      return __dmul_rn(a, b);
    else
      return static_cast<T>(
          static_cast<Wide<T>>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)));
  }
};
struct Min {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a < b ? a : b;
  }
};
struct Max {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct LogicalAnd {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(a && b);
  }
};
struct LogicalOr {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(a || b);
  }
};
struct LogicalXor {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(!a != !b);
  }
};
struct BitAnd {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitOr {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitXor {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
// The standard's MINLOC/MAXLOC: the smaller (larger) value with its index; on a tie the
// smaller index.
struct MinLoc {
  template <class P>
  __device__ P operator()(P a, P b) const {
    if (b.v < a.v) return b;
    if (a.v < b.v) return a;
    return {a.v, a.i < b.i ? a.i : b.i};
  }
};
struct MaxLoc {
  template <class P>
  __device__ P operator()(P a, P b) const {
    if (b.v > a.v) return b;
    if (a.v > b.v) return a;
    return {a.v, a.i < b.i ? a.i : b.i};
  }
};

template <class T>
struct Inputs {
  const T* in[kMaxReduceInputs];
  int n;
};

template <class T, class Fold>
__global__ void reduce_kernel(Inputs<T> inputs, T* out, std::int64_t count, Fold fold) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    T acc = inputs.in[0][i];
    for (int k = 1; k < inputs.n; ++k) acc = fold(acc, inputs.in[k][i]);
    if constexpr (IsPair<T>::value) {  // field by field: the padding is not the typemap's
      out[i].v = acc.v;
      out[i].i = acc.i;
    } else {
      out[i] = acc;
    }
  }
}

struct Launch {
  Span<const std::byte* const> inputs;
  std::byte* out;
  std::int64_t count;
  cudaStream_t stream;
  int multiprocessors;

  template <class T, class Fold>
  cudaError_t run(Fold fold) const {
    Inputs<T> in{};
    in.n = static_cast<int>(inputs.size());
    for (int k = 0; k < in.n; ++k) in.in[k] = reinterpret_cast<const T*>(inputs[k]);
    constexpr int kThreads = Policy::kThreads;
    const std::int64_t wanted = (count + kThreads - 1) / kThreads;
    const auto blocks = static_cast<unsigned>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(wanted, std::int64_t{multiprocessors} * Policy::kBlocksPerSm)));
    reduce_kernel<T><<<blocks, kThreads, 0, stream>>>(in, reinterpret_cast<T*>(out), count, fold);
    return cudaGetLastError();
  }
};

// The kernel of `op` on elements of type T; cudaErrorNotSupported where the op has no meaning.
template <class T>
cudaError_t launch(ReduceOp op, const Launch& l) {
  if constexpr (IsPair<T>::value) {
    if (op == ReduceOp::MinLoc) return l.run<T>(MinLoc{});
    if (op == ReduceOp::MaxLoc) return l.run<T>(MaxLoc{});
  } else {
    switch (op) {
      case ReduceOp::Sum:
        return l.run<T>(Sum{});
      case ReduceOp::Prod:
        return l.run<T>(Prod{});
      case ReduceOp::Min:
        return l.run<T>(Min{});
      case ReduceOp::Max:
        return l.run<T>(Max{});
      default:
        break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ReduceOp::LogicalAnd:
          return l.run<T>(LogicalAnd{});
        case ReduceOp::LogicalOr:
          return l.run<T>(LogicalOr{});
        case ReduceOp::LogicalXor:
          return l.run<T>(LogicalXor{});
        case ReduceOp::BitAnd:
          return l.run<T>(BitAnd{});
        case ReduceOp::BitOr:
          return l.run<T>(BitOr{});
        case ReduceOp::BitXor:
          return l.run<T>(BitXor{});
        default:
          break;
      }
    }
  }
  return cudaErrorNotSupported;
}

cudaError_t launch(ReduceKind kind, const Launch& l) {
  switch (kind.element) {
    case ReduceElement::Int8:
      return launch<signed char>(kind.op, l);
    case ReduceElement::UInt8:
      return launch<unsigned char>(kind.op, l);
    case ReduceElement::Bool:
      return launch<unsigned char>(kind.op, l);  // C's _Bool: 0 or 1
    case ReduceElement::Int16:
      return launch<short>(kind.op, l);
    case ReduceElement::UInt16:
      return launch<unsigned short>(kind.op, l);
    case ReduceElement::Int32:
      return launch<int>(kind.op, l);
    case ReduceElement::UInt32:
      return launch<unsigned>(kind.op, l);
    case ReduceElement::Int64:
      return launch<long long>(kind.op, l);
    case ReduceElement::UInt64:
      return launch<unsigned long long>(kind.op, l);
    case ReduceElement::Float32:
      return launch<float>(kind.op, l);
    case ReduceElement::Float64:
      return launch<double>(kind.op, l);
    case ReduceElement::FloatInt:
      return launch<Pair<float>>(kind.op, l);
    case ReduceElement::DoubleInt:
      return launch<Pair<double>>(kind.op, l);
    case ReduceElement::LongInt:
      return launch<Pair<long long>>(kind.op, l);
    case ReduceElement::IntInt:
      return launch<Pair<int>>(kind.op, l);
    case ReduceElement::ShortInt:
      return launch<Pair<short>>(kind.op, l);
  }
  return cudaErrorNotSupported;
}

static_assert(sizeof(Pair<float>) == 8 && sizeof(Pair<double>) == 16 &&
              sizeof(Pair<long long>) == 16 && sizeof(Pair<int>) == 8 && sizeof(Pair<short>) == 8);

}  // namespace

Outcome reduce(ReduceKind kind, Span<const std::byte* const> inputs, std::byte* out,
               std::int64_t count, int device, std::string& error) {
  if (!reduces(kind) || inputs.empty() || inputs.size() > kMaxReduceInputs) {
    error = "no reduction kernel for this call";
    return Outcome::Fallback;
  }
  if (count <= 0) return Outcome::Done;
  return on_device(device, error, [&](DeviceContext& ctx) {
    const Launch l{inputs, out, count, ctx.stream(), ctx.multiprocessors()};
    cudaError_t rc = launch(kind, l);
    if (rc == cudaSuccess) rc = ctx.wait();
    return outcome_of(rc, "GPU reduction", error);
  });
}

}  // namespace strider::engine::cuda
