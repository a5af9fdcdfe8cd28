#include "transfer/direct_object.hpp"

#include <algorithm>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>

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

// Descriptions of objects, keyed by what decides one: the object's device address, plan, count
// and GPU. An entry watches its plan without keeping it (a plan holds GPU tables, and a type
// made and freed every step would keep 1024 of them alive): an entry whose plan is gone is a
// miss, so a new plan at the same address never takes it. A hit is checked against its
// allocations (ipc::still_exported, one driver query each): a freed and reallocated buffer is
// described anew. Past kMaxDescriptions the cache starts again.
constexpr std::size_t kMaxDescriptions = 1024;

struct DescriptionKey {
  const std::byte* origin = nullptr;
  const plan::Plan* plan = nullptr;
  std::int64_t count = 0;
  int device = -1;
  bool operator==(const DescriptionKey&) const = default;
};

struct DescriptionKeyHash {
  std::size_t operator()(const DescriptionKey& k) const {
    std::size_t h = std::hash<const void*>{}(k.origin);
    h = h * 31 + std::hash<const void*>{}(k.plan);
    h = h * 31 + std::hash<std::int64_t>{}(k.count);
    return h * 31 + std::hash<int>{}(k.device);
  }
};

struct Description {
  std::weak_ptr<const plan::Plan> plan;
  ipc::DirectLayout layout;
  std::vector<ipc::MemoryExport> exports;  // of layout.allocation[a], in order (their bases)
};

struct Descriptions {
  std::mutex mutex;
  std::unordered_map<DescriptionKey, Description, DescriptionKeyHash> by_key;
};

Descriptions& descriptions() {
  static Descriptions* d = new Descriptions;  // never destroyed, as the mapped forms
  return *d;
}

DescriptionKey key_of(const Object& object) {
  return {object.view.device, object.plan.get(), object.count, object.view.info.device};
}

// The cached description of `object`, if one is kept and its allocations are still the ones
// described.
bool cached_description(const Object& object, CallExports& exports, ipc::DirectLayout& out,
                        AllocationBases& bases) {
  Description found;
  Descriptions& d = descriptions();
  const DescriptionKey key = key_of(object);
  {
    std::lock_guard lock(d.mutex);
    const auto it = d.by_key.find(key);
    if (it == d.by_key.end()) return false;
    if (it->second.plan.expired()) {  // that plan was freed: its address may be another's now
      d.by_key.erase(it);
      return false;
    }
    found = it->second;
  }
  for (const ipc::MemoryExport& e : found.exports) {
    if (!ipc::still_exported(e)) {
      std::lock_guard lock(d.mutex);
      d.by_key.erase(key);
      return false;
    }
  }
  bases = {};
  for (std::size_t a = 0; a < found.exports.size(); ++a) {
    bases[a] = found.exports[a].base;
    exports.push_back(found.exports[a]);
  }
  out = found.layout;
  return true;
}

void keep_description(const Object& object, const CallExports& exports,
                      const ipc::DirectLayout& layout, const AllocationBases& bases) {
  Description kept{object.plan, layout, {}};
  for (std::int64_t a = 0; a < layout.allocations; ++a) {
    const auto it = std::find_if(exports.begin(), exports.end(),
                                 [&](const ipc::MemoryExport& e) { return e.base == bases[a]; });
    if (it == exports.end()) return;  // not described from exports: nothing to check a hit by
    kept.exports.push_back(*it);
  }
  Descriptions& d = descriptions();
  std::lock_guard lock(d.mutex);
  if (d.by_key.size() >= kMaxDescriptions) d.by_key.clear();
  d.by_key[key_of(object)] = std::move(kept);
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
  if (cached_description(object, exports, out, bases)) return true;
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
  keep_description(object, exports, layout, found);
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
