#include "ipc/wire_imports.hpp"

#include <iterator>
#include <string_view>
#include <utility>

namespace strider::ipc {

WireImports::WireImports(Mapper mapper, std::size_t max_mappings, std::size_t max_bytes)
    : mapper_(std::move(mapper)), max_mappings_(max_mappings), max_bytes_(max_bytes) {}

std::size_t WireImports::KeyHash::operator()(const Key& k) const {
  const std::string_view bytes(reinterpret_cast<const char*>(k.handle.bytes.data()),
                               k.handle.bytes.size());
  return std::hash<std::string_view>{}(bytes)*31 + std::hash<int>{}(k.device);
}

std::byte* WireImports::pin(const WireHandle& handle, std::size_t bytes, int device,
                            std::string& error) {
  std::lock_guard lock(mutex_);
  if (const auto found = index_.find(Key{device, handle}); found != index_.end()) {
    const auto it = found->second;
    recent_.splice(recent_.begin(), recent_, it);  // iterators stay valid
    ++it->pins;
    return it->mapped;
  }
  bool clash = false, own = false;
  std::byte* mapped = mapper_.open(handle, device, error, clash, own);
  if (mapped == nullptr && clash) {
    close_unpinned(device);
    clash = false;
    mapped = mapper_.open(handle, device, error, clash, own);
  }
  if (mapped == nullptr) return nullptr;
  recent_.push_front({handle, device, mapped, bytes, 1, own});
  index_[Key{device, handle}] = recent_.begin();
  bytes_ += bytes;
  trim();
  return mapped;
}

void WireImports::unpin(const std::byte* mapped) {
  std::lock_guard lock(mutex_);
  for (Mapping& m : recent_) {
    if (m.mapped == mapped && m.pins > 0) {
      --m.pins;
      break;
    }
  }
  trim();
}

void WireImports::close_all() {
  std::lock_guard lock(mutex_);
  while (!recent_.empty()) close(recent_.begin());
}

std::size_t WireImports::mappings() const {
  std::lock_guard lock(mutex_);
  return recent_.size();
}

std::size_t WireImports::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void WireImports::close(std::list<Mapping>::iterator it) {
  if (!it->own) mapper_.close(it->mapped, it->device);
  bytes_ -= it->bytes;
  index_.erase(Key{it->device, it->handle});
  recent_.erase(it);
}

void WireImports::close_unpinned(int device) {
  for (auto it = recent_.begin(); it != recent_.end();) {
    auto next = std::next(it);
    if (it->device == device && it->pins == 0) close(it);
    it = next;
  }
}

void WireImports::trim() {
  auto it = recent_.end();
  while (it != recent_.begin() && (recent_.size() > max_mappings_ || bytes_ > max_bytes_)) {
    --it;
    if (it->pins > 0) continue;
    auto victim = it++;
    close(victim);
  }
}

}  // namespace strider::ipc
