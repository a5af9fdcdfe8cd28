#include "plan/plan_cache.hpp"

#include <mutex>

namespace strider::plan {

std::shared_ptr<const Plan> PlanCache::find(MPI_Datatype type) const {
  std::shared_lock lock(mutex_);
  auto it = plans_.find(type);
  return it == plans_.end() ? nullptr : it->second;
}

// Replaced or erased plans die after the lock is released: a plan's destructor may free GPU
// tables, which synchronizes the device, and no lookup should wait for that.
void PlanCache::put(MPI_Datatype type, std::shared_ptr<const Plan> plan) {
  std::unique_lock lock(mutex_);
  plans_[type].swap(plan);
}

void PlanCache::erase(MPI_Datatype type) {
  std::shared_ptr<const Plan> dropped;
  std::unique_lock lock(mutex_);
  if (auto it = plans_.find(type); it != plans_.end()) {
    dropped = std::move(it->second);
    plans_.erase(it);
  }
}

void PlanCache::clear() {
  decltype(plans_) dropped;
  std::unique_lock lock(mutex_);
  dropped.swap(plans_);
}

std::size_t PlanCache::size() const {
  std::shared_lock lock(mutex_);
  return plans_.size();
}

}  // namespace strider::plan
