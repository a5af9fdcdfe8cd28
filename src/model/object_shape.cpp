#include "model/object_shape.hpp"

#include <algorithm>
#include <cstdint>

namespace strider::model {

ElementShape element_shape(const canon::CanonicalForm& form, std::int64_t extent) {
  ElementShape e;
  e.size = form.size;
  e.extent = extent;
  if (form.size <= 0) return e;
  if (form.strided()) {
    const canon::StridedBlock& p = form.pieces.front();
    e.block = p.block;
    if (p.dims.empty()) {
      e.stride = extent;
      e.dims = 1;
    } else {
      e.stride = std::max<std::int64_t>(
          p.block, static_cast<std::int64_t>(canon::magnitude(p.dims.front().stride)));
      e.dims = 1 + static_cast<int>(p.dims.size());
    }
    return e;
  }
  std::int64_t blocks = 0;
  for (const canon::StridedBlock& p : form.pieces) blocks += p.blocks();
  blocks *= std::max<std::int64_t>(1, form.repetitions());
  blocks = std::max<std::int64_t>(1, blocks);
  e.block = std::max<std::int64_t>(1, form.size / blocks);
  e.stride = std::max<std::int64_t>(e.block, extent / blocks);
  e.dims = 2;
  e.irregular = true;
  return e;
}

ObjectShape object_shape(const ElementShape& e, std::int64_t count) {
  ObjectShape o;
  // Saturated: no message has 2^63 bytes, but a tool may ask about one.
  if (__builtin_mul_overflow(e.size, count, &o.bytes)) o.bytes = INT64_MAX;
  o.irregular = e.irregular;
  if (e.dims == 1) {
    if (count == 1 || e.extent == e.size) {
      o.block = o.bytes;
      o.stride = o.bytes;
      o.dims = 1;
    } else {
      o.block = e.size;
      o.stride = std::max(e.size, e.extent < 0 ? -e.extent : e.extent);
      o.dims = 2;
    }
    return o;
  }
  o.block = e.block;
  o.stride = e.stride;
  o.dims = std::min(3, e.dims + (count > 1 ? 1 : 0));
  return o;
}

}  // namespace strider::model
