#include "transfer/direct_object.hpp"

#include <algorithm>
#include <list>
#include <mutex>

namespace strider::transfer {
namespace {

// Cached mapped forms of several segments, most recently used first.
constexpr std::size_t kMaxMappedForms = 64;

struct MappedForms {
  std::mutex mutex;
  std::list<std::shared_ptr<const MappedForm>> recent;
};

MappedForms& mapped_forms() {
  static MappedForms* r = new MappedForms;  // never destroyed: tables outlive exit order
  return *r;
}

// Cuts the object's blocks into segments, each inside one exported allocation.
class Segmenter {
 public:
  Segmenter(std::byte* origin, int device, CallExports& exports, ipc::DirectLayout& out,
            AllocationBases& bases)
      : origin_(origin), device_(device), exports_(exports), out_(out), bases_(bases) {}

  bool add(const canon::StridedBlock& sb, std::string& why) {
    if (out_.segments == static_cast<std::int64_t>(ipc::DirectPolicy::kMaxSegments)) {
      why = "more segments than a record holds";
      return false;
    }
    const ipc::ByteSpan span = ipc::touched_bytes(sb, 0, 1);
    ipc::MemoryExport exported;
    if (!find_export(origin_ + span.lo, exported, why)) return false;
    const std::int64_t from_base = origin_ - exported.base;
    if (from_base + span.hi > static_cast<std::int64_t>(exported.bytes)) {
      if (sb.dims.empty()) {
        why = "a dense block spanning two allocations";
        return false;
      }
      if (sb.dims.back().count >
          static_cast<std::int64_t>(ipc::DirectPolicy::kMaxSegments) - out_.segments) {
        why = "more segments than a record holds";
        return false;
      }
      for (const canon::StridedBlock& part : ipc::split_outermost(sb)) {
        if (!add(part, why)) return false;
      }
      return true;
    }
    const std::int64_t a = allocation_index(exported);
    if (a < 0) {
      why = "more allocations than a record holds";
      return false;
    }
    canon::StridedBlock placed = sb;
    placed.offset += from_base;
    out_.segment[out_.segments++] = ipc::segment_of(placed, a);
    return true;
  }

 private:
  bool find_export(const std::byte* first, ipc::MemoryExport& out, std::string& why) {
    for (const ipc::MemoryExport& e : exports_) {
      if (first >= e.base && first < e.base + e.bytes) {
        out = e;
        return true;
      }
    }
    if (!ipc::export_memory(first, device_, out, why)) return false;
    exports_.push_back(out);
    return true;
  }

  std::int64_t allocation_index(const ipc::MemoryExport& exported) {
    for (std::int64_t a = 0; a < out_.allocations; ++a) {
      if (bases_[a] == exported.base) return a;
    }
    if (out_.allocations == static_cast<std::int64_t>(ipc::DirectPolicy::kMaxAllocations))
      return -1;
    bases_[out_.allocations] = exported.base;
    out_.allocation[out_.allocations] = {exported.handle,
                                         static_cast<std::int64_t>(exported.bytes)};
    return out_.allocations++;
  }

  std::byte* origin_;
  int device_;
  CallExports& exports_;
  ipc::DirectLayout& out_;
  AllocationBases& bases_;
};

}  // namespace

bool describe_in_place(const Object& object, CallExports& exports, ipc::DirectLayout& out,
                       AllocationBases& bases, std::string& why) {
  if (!object.plan || object.bytes() <= 0 || !object.plan->supported || !object.gpu ||
      object.view.device == nullptr || object.view.info.kind != runtime::MemoryKind::Device) {
    why = "not an object in device memory";
    return false;
  }
  const auto blocks = ipc::flatten(object.plan->form, object.plan->bounds.extent, object.count,
                                   ipc::DirectPolicy::kMaxSegments);
  if (blocks.empty()) {
    why = "more blocks than a record holds";
    return false;
  }
  ipc::DirectLayout layout;
  AllocationBases found{};
  Segmenter segmenter(object.view.device, object.view.info.device, exports, layout, found);
  for (const canon::StridedBlock& sb : blocks) {
    if (!segmenter.add(sb, why)) return false;
  }
  if (!consistent(layout, object.bytes())) {
    why = "an object reaching outside its allocations";
    return false;
  }
  out = layout;
  bases = found;
  return true;
}

std::shared_ptr<const MappedForm> mapped_form_of(const ipc::DirectLayout& layout,
                                                 const AllocationBases& bases) {
  auto fresh = std::make_shared<MappedForm>();
  fresh->form = ipc::mapped_form(layout, bases.data());
  if (layout.segments == 1) return fresh;  // strided: no tables to keep
  MappedForms& r = mapped_forms();
  std::lock_guard lock(r.mutex);
  for (auto it = r.recent.begin(); it != r.recent.end(); ++it) {
    if ((*it)->form == fresh->form) {
      r.recent.splice(r.recent.begin(), r.recent, it);
      return r.recent.front();
    }
  }
  r.recent.push_front(fresh);
  if (r.recent.size() > kMaxMappedForms) r.recent.pop_back();
  return fresh;
}

}  // namespace strider::transfer
