#include "plan/plan_cache.hpp"

#include <mutex>

namespace strider::plan {

std::shared_ptr<const Plan> PlanCache::find(MPI_Datatype type) const {
  std::shared_lock lock(mutex_);
  auto it = plans_.find(type);
  return it == plans_.end() ? nullptr : it->second;
}

void PlanCache::put(MPI_Datatype type, std::shared_ptr<const Plan> plan) {
  std::unique_lock lock(mutex_);
  plans_[type] = std::move(plan);
}

void PlanCache::erase(MPI_Datatype type) {
  std::unique_lock lock(mutex_);
  plans_.erase(type);
}

void PlanCache::clear() {
  std::unique_lock lock(mutex_);
  plans_.clear();
}

std::size_t PlanCache::size() const {
  std::shared_lock lock(mutex_);
  return plans_.size();
}

}  // namespace strider::plan
