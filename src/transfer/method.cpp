#include "transfer/method.hpp"

#include <atomic>

#include "transfer/settings.hpp"

namespace strider::transfer {
namespace {

// The request as one word: -1 for auto, else the method's value.
int encode(MethodRequest request) { return request ? static_cast<int>(*request) : -1; }
MethodRequest decode(int word) {
  return word < 0 ? MethodRequest{} : MethodRequest{static_cast<Method>(word)};
}

std::atomic<int>& requested() {
  static std::atomic<int> value{encode(settings().method)};
  return value;
}

}  // namespace

const MethodTraits& traits_of(Method method) {
  static constexpr MethodTraits kOneShot{ipc::WireMemory::Pinned, true};
  static constexpr MethodTraits kStaged{ipc::WireMemory::Pinned, false};
  static constexpr MethodTraits kDevice{ipc::WireMemory::Device, true};
  static constexpr MethodTraits kHost{ipc::WireMemory::Host, true};
  switch (method) {
    case Method::OneShot:
      return kOneShot;
    case Method::Staged:
      return kStaged;
    case Method::Device:
      return kDevice;
    case Method::Host:
      break;
  }
  return kHost;
}

Method choose_method(MethodRequest requested, bool mpi_cuda_aware, Method automatic) {
  const Method m = requested.value_or(automatic);
  return m == Method::Device && !mpi_cuda_aware ? Method::Staged : m;
}

MethodRequest requested_method() { return decode(requested().load(std::memory_order_relaxed)); }

void set_requested_method(MethodRequest method) {
  requested().store(encode(method), std::memory_order_relaxed);
}

bool parse_method(std::string_view text, MethodRequest& out) {
  return model::parse_method_request(text, out);
}

}  // namespace strider::transfer
