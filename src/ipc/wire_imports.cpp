#include "ipc/wire_imports.hpp"

#include <iterator>
#include <utility>

namespace strider::ipc {

WireImports::WireImports(Mapper mapper, std::size_t max_mappings, std::size_t max_bytes)
    : mapper_(std::move(mapper)), max_mappings_(max_mappings), max_bytes_(max_bytes) {}

std::byte* WireImports::pin(const WireHandle& handle, std::size_t bytes, int device,
                            std::string& error) {
  std::lock_guard lock(mutex_);
  for (auto it = recent_.begin(); it != recent_.end(); ++it) {
    if (it->device == device && it->handle.bytes == handle.bytes) {
      recent_.splice(recent_.begin(), recent_, it);
      ++it->pins;
      return it->mapped;
    }
  }
  bool clash = false;
  std::byte* mapped = mapper_.open(handle, device, error, clash);
  if (mapped == nullptr && clash) {
    close_unpinned(device);
    clash = false;
    mapped = mapper_.open(handle, device, error, clash);
  }
  if (mapped == nullptr) return nullptr;
  recent_.push_front({handle, device, mapped, bytes, 1});
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
  mapper_.close(it->mapped, it->device);
  bytes_ -= it->bytes;
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
