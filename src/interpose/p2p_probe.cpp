// The matching probes, MPI_Mprobe and MPI_Improbe: they match a message as a receive does, so
// the same-node offers' receive ledger counts what they matched (offers/protocol.hpp).
// MPI_Probe and MPI_Iprobe match nothing and go to the MPI unseen.
#include <mpi.h>

#include "calls/completion.hpp"
#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "offers/protocol.hpp"
#include "transfer/next.hpp"

using namespace strider::transfer;

STRIDER_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                              MPI_Status* status) {
  const strider::calls::EntryCall entry;
  if (!strider::offers::active(comm))
    return STRIDER_NEXT(MPI_Mprobe)(source, tag, comm, message, status);
  strider::calls::Status st(status);
  const int rc = STRIDER_NEXT(MPI_Mprobe)(source, tag, comm, message, st.use);
  if (rc == MPI_SUCCESS && message != nullptr && *message != MPI_MESSAGE_NO_PROC) {
    strider::offers::matched_probe(comm, *st.use);
  }
  return rc;
}

STRIDER_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                               MPI_Status* status) {
  const strider::calls::EntryCall entry;
  if (!strider::offers::active(comm)) {
    return STRIDER_NEXT(MPI_Improbe)(source, tag, comm, flag, message, status);
  }
  strider::calls::Status st(status);
  const int rc = STRIDER_NEXT(MPI_Improbe)(source, tag, comm, flag, message, st.use);
  if (rc == MPI_SUCCESS && flag != nullptr && *flag && message != nullptr &&
      *message != MPI_MESSAGE_NO_PROC) {
    strider::offers::matched_probe(comm, *st.use);
  }
  return rc;
}
