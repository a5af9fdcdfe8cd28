#include "transport/method.hpp"

#include <atomic>

namespace strider::transport {
namespace {

std::atomic<int>& requested() {
  static std::atomic<int> value{static_cast<int>(runtime::config().method)};
  return value;
}

}  // namespace

const char* to_string(Method method) {
  switch (method) {
    case Method::Device:
      return "device";
    case Method::OneShot:
      return "oneshot";
    case Method::Staged:
      return "staged";
    case Method::Host:
      return "host";
  }
  return "?";
}

Method choose_method(runtime::MethodChoice requested, bool mpi_cuda_aware,
                     model::Transfer automatic) {
  using runtime::MethodChoice;
  if (requested == MethodChoice::Auto) {
    switch (automatic) {
      case model::Transfer::OneShot:
        requested = MethodChoice::OneShot;
        break;
      case model::Transfer::Staged:
        requested = MethodChoice::Staged;
        break;
      case model::Transfer::Device:
        requested = MethodChoice::Device;
        break;
    }
  }
  switch (requested) {
    case MethodChoice::Device:
      return mpi_cuda_aware ? Method::Device : Method::Staged;
    case MethodChoice::OneShot:
      return Method::OneShot;
    case MethodChoice::Staged:
    case MethodChoice::Auto:
      break;
  }
  return Method::Staged;
}

runtime::MethodChoice requested_method() {
  return static_cast<runtime::MethodChoice>(requested().load(std::memory_order_relaxed));
}

void set_requested_method(runtime::MethodChoice method) {
  requested().store(static_cast<int>(method), std::memory_order_relaxed);
}

bool parse_method(std::string_view text, runtime::MethodChoice& out) {
  using runtime::MethodChoice;
  for (MethodChoice m :
       {MethodChoice::Auto, MethodChoice::Device, MethodChoice::OneShot, MethodChoice::Staged}) {
    if (text == runtime::to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

}  // namespace strider::transport
