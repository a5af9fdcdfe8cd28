// MPI_Type_commit builds the plan; MPI_Type_free drops it (the handle may be reused at once).
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

using strider::transfer::settings;

STRIDER_EXPORT int MPI_Type_commit(MPI_Datatype* type) {
  const strider::calls::EntryCall entry;
  const int rc = STRIDER_NEXT(MPI_Type_commit)(type);
  if (rc == MPI_SUCCESS && !settings().disabled) strider::transfer::on_commit(*type);
  return rc;
}

STRIDER_EXPORT int MPI_Type_free(MPI_Datatype* type) {
  const strider::calls::EntryCall entry;
  if (!settings().disabled && type != nullptr) strider::transfer::on_free(*type);
  return STRIDER_NEXT(MPI_Type_free)(type);
}
