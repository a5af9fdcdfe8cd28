// MPI_Init, MPI_Init_thread, MPI_Finalize: set-up and tear-down around the MPI's own.
#include <mpi.h>

#include "interpose/export.hpp"
#include "runtime/config.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_buffers.hpp"

using strider::runtime::config;

STRIDER_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = STRIDER_NEXT(MPI_Init)(argc, argv);
  if (rc == MPI_SUCCESS && !config().disabled) strider::transfer::on_init();
  return rc;
}

STRIDER_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = STRIDER_NEXT(MPI_Init_thread)(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && !config().disabled) strider::transfer::on_init();
  return rc;
}

STRIDER_EXPORT int MPI_Finalize(void) {
  if (!config().disabled) {
    // Operations whose requests the application freed finish before the MPI goes away.
    strider::transfer::requests().drain_orphans();
    strider::transfer::trim_pools();
    strider::transfer::on_finalize();
  }
  return STRIDER_NEXT(MPI_Finalize)();
}
