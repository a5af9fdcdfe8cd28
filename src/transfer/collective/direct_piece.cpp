#include "transfer/collective/direct_piece.hpp"

#include "transfer/memory_export.hpp"

namespace strider::transfer::collective {

bool describe_in_place(const Piece& piece, DirectLayout& out, std::string& why) {
  const Object& object = piece.object;
  if (piece.bytes() <= 0 || !object.plan || !object.gpu || object.view.device == nullptr ||
      object.view.info.kind != runtime::MemoryKind::Device) {
    why = "not a piece in device memory";
    return false;
  }
  const canon::CanonicalForm& form = object.plan->form;
  if (!object.plan->supported || !form.strided()) {
    why = "not a strided layout";
    return false;
  }
  DirectLayout layout = layout_of(form.pieces.front(), object.plan->bounds.extent, object.count);
  const ByteSpan span = touched_bytes(form.pieces.front(), layout.extent, layout.count);
  MemoryExport exported;
  if (!export_memory(object.view.device + span.lo, object.view.info.device, exported, why)) {
    return false;
  }
  layout.origin = object.view.device - exported.base;
  layout.allocation_bytes = static_cast<std::int64_t>(exported.bytes);
  layout.allocation = exported.handle;
  if (!consistent(layout, piece.bytes())) {
    why = "a piece reaching outside its allocation";
    return false;
  }
  out = layout;
  return true;
}

}  // namespace strider::transfer::collective
