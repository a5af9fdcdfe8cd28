#include "model/method.hpp"

namespace strider::model {

const char* to_string(Method method) {
  switch (method) {
    case Method::OneShot:
      return "oneshot";
    case Method::Staged:
      return "staged";
    case Method::Device:
      return "device";
    case Method::Host:
      return "host";
  }
  return "?";
}

const char* to_string(MethodRequest request) { return request ? to_string(*request) : "auto"; }

bool parse_method_request(std::string_view text, MethodRequest& out) {
  for (MethodRequest m : {MethodRequest{}, MethodRequest{Method::Device},
                          MethodRequest{Method::OneShot}, MethodRequest{Method::Staged}}) {
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

}  // namespace strider::model
