// The transfer method: how a GPU buffer's packed bytes travel in point-to-point. One enum for
// the configuration (STRIDER_METHOD), the model's tables, the perf file and the C API: its
// values are strider.h's STRIDER_ONESHOT, STRIDER_STAGED and STRIDER_DEVICE, and index the
// model's predictions. transfer/method.hpp has how each behaves.
//   oneshot: the pack kernel writes straight into mapped pinned host memory, and the receiver's
//            unpack kernel reads straight from it (the perf file's pack target "mapped");
//   staged:  pack into GPU scratch, one DMA copy to pinned host memory (reverse on receive);
//   device:  pack into GPU memory and hand that to the MPI (only a CUDA-aware MPI may get it);
//   host:    a host buffer packed by the CPU (STRIDER_P2P_HOST=pack); not costed by the model.
#pragma once

#include <optional>
#include <string_view>

namespace strider::model {

enum class Method { OneShot = 0, Staged = 1, Device = 2, Host = 3 };
// OneShot, Staged and Device: the methods for GPU buffers, which the model costs.
inline constexpr int kModelledMethods = 3;

// "oneshot", "staged", "device", "host".
const char* to_string(Method method);

// A request for a method (STRIDER_METHOD, strider_set_method): one of the modelled methods, or
// nothing for auto (the model's choice per transfer).
using MethodRequest = std::optional<Method>;
const char* to_string(MethodRequest request);  // "auto" or the method's name
// Parses "auto", "device", "oneshot" or "staged"; false (and `out` unchanged) for anything else.
bool parse_method_request(std::string_view text, MethodRequest& out);

}  // namespace strider::model
