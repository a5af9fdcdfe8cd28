// MPI_Init, MPI_Init_thread, MPI_Finalize: set-up and tear-down around the MPI's own. Where a
// progress thread is wanted the MPI is asked for MPI_THREAD_SERIALIZED at least
// (calls/progress_thread.hpp), and the application is told the level the MPI provided.
#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/lifecycle.hpp"
#include "calls/progress_thread.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/settings.hpp"

using strider::transfer::settings;

STRIDER_EXPORT int MPI_Init(int* argc, char*** argv) {
  const strider::calls::EntryCall entry;
  const int level = strider::calls::thread_level_to_ask(MPI_THREAD_SINGLE);
  int provided = MPI_THREAD_SINGLE;
  const int rc = level == MPI_THREAD_SINGLE
                     ? STRIDER_NEXT(MPI_Init)(argc, argv)
                     : STRIDER_NEXT(MPI_Init_thread)(argc, argv, level, &provided);
  if (rc == MPI_SUCCESS && !settings().disabled) strider::calls::on_init();
  return rc;
}

STRIDER_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const strider::calls::EntryCall entry;
  const int rc = STRIDER_NEXT(MPI_Init_thread)(
      argc, argv, strider::calls::thread_level_to_ask(required), provided);
  if (rc == MPI_SUCCESS && !settings().disabled) strider::calls::on_init();
  return rc;
}

STRIDER_EXPORT int MPI_Finalize(void) {
  const strider::calls::EntryCall entry;
  if (!settings().disabled) {
    strider::calls::on_finalize();
  }
  return STRIDER_NEXT(MPI_Finalize)();
}
