#include "transfer/method.hpp"

#include <atomic>

namespace strider::transfer {
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

Method method_of(model::Transfer t) {
  switch (t) {
    case model::Transfer::OneShot:
      return Method::OneShot;
    case model::Transfer::Staged:
      return Method::Staged;
    case model::Transfer::Device:
      break;
  }
  return Method::Device;
}

Method choose_method(runtime::MethodChoice requested, bool mpi_cuda_aware,
                     model::Transfer automatic) {
  using runtime::MethodChoice;
  Method m = Method::Staged;
  switch (requested) {
    case MethodChoice::Auto:
      m = method_of(automatic);
      break;
    case MethodChoice::Device:
      m = Method::Device;
      break;
    case MethodChoice::OneShot:
      m = Method::OneShot;
      break;
    case MethodChoice::Staged:
      m = Method::Staged;
      break;
  }
  return m == Method::Device && !mpi_cuda_aware ? Method::Staged : m;
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

}  // namespace strider::transfer
