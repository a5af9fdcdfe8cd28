#include "collective/wire_types.hpp"

#include <climits>
#include <map>
#include <mutex>

namespace strider::collective {
namespace {

std::mutex g_mutex;
std::map<std::int64_t, MPI_Datatype> g_types;

}  // namespace

MPI_Datatype wire_type(std::int64_t size) {
  if (size == 1) return MPI_BYTE;
  if (size <= 0 || size > INT_MAX) return MPI_DATATYPE_NULL;
  std::lock_guard lock(g_mutex);
  if (auto it = g_types.find(size); it != g_types.end()) return it->second;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (PMPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &t) != MPI_SUCCESS) {
    return MPI_DATATYPE_NULL;
  }
  if (PMPI_Type_commit(&t) != MPI_SUCCESS) {
    PMPI_Type_free(&t);
    return MPI_DATATYPE_NULL;
  }
  g_types.emplace(size, t);
  return t;
}

void free_wire_types() {
  std::lock_guard lock(g_mutex);
  for (auto& [size, t] : g_types) PMPI_Type_free(&t);
  g_types.clear();
}

}  // namespace strider::collective
