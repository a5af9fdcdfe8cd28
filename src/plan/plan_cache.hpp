// Plans keyed by datatype handle. MPI reuses handles after MPI_Type_free, so an entry lives
// exactly from commit to free: erased by our MPI_Type_free and, for frees that bypass it (a
// Fortran binding calling PMPI directly, say), by an MPI attribute delete callback.
#pragma once

#include <mpi.h>

#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "plan/plan.hpp"

namespace strider::plan {

class PlanCache {
 public:
  std::shared_ptr<const Plan> find(MPI_Datatype type) const;
  void put(MPI_Datatype type, std::shared_ptr<const Plan> plan);
  void erase(MPI_Datatype type);
  void clear();
  std::size_t size() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<MPI_Datatype, std::shared_ptr<const Plan>> plans_;
};

}  // namespace strider::plan
