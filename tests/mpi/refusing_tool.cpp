// A PMPI tool stacked under Strider (LD_PRELOAD=libstrider.so:librefusing_tool.so) that makes
// the MPI refuse a receive at the worst moment for the same-node offers: armed for a tag, it
// takes the next receive call with that tag (MPI_Recv, MPI_Irecv or MPI_Sendrecv, as Strider
// forwards it), tells the sender it may send now (a message on the side communicator), waits
// until the sender says it has sent, and only then refuses the receive with MPI_ERR_TAG, as
// the MPI would for a bad argument. A sender that found an offer published before the receive
// reached the MPI has filled it and sent its notice by then (p2p_offers_refusal_test.cpp).
#include <mpi.h>

namespace {

int armed_tag = -1;
MPI_Comm side = MPI_COMM_NULL;

// Ready / sent, on the side communicator (PMPI: Strider never sees them).
constexpr int kReadyTag = 1;
constexpr int kSentTag = 2;

bool refuses(int source, int tag) { return tag == armed_tag && source >= 0; }

int refuse(int source, MPI_Comm comm) {
  armed_tag = -1;
  PMPI_Send(nullptr, 0, MPI_BYTE, source, kReadyTag, side);
  PMPI_Recv(nullptr, 0, MPI_BYTE, source, kSentTag, side, MPI_STATUS_IGNORE);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_TAG);
  return MPI_ERR_TAG;
}

}  // namespace

// The test's side: the next receive with `tag` is refused after the handshake on `side_comm`
// (a communicator of the same group as the receive's, made by the test).
extern "C" void refusing_tool_arm(int tag, MPI_Comm side_comm) {
  armed_tag = tag;
  side = side_comm;
}

// The sender's side of the handshake with rank `receiver` of the side communicator.
extern "C" void refusing_tool_await_ready(int receiver, MPI_Comm side_comm) {
  PMPI_Recv(nullptr, 0, MPI_BYTE, receiver, kReadyTag, side_comm, MPI_STATUS_IGNORE);
}

extern "C" void refusing_tool_sent(int receiver, MPI_Comm side_comm) {
  PMPI_Send(nullptr, 0, MPI_BYTE, receiver, kSentTag, side_comm);
}

extern "C" int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Status* status) {
  if (refuses(source, tag)) return refuse(source, comm);
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

extern "C" int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  if (refuses(source, tag)) return refuse(source, comm);
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

extern "C" int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                            int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                            int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (refuses(source, recvtag)) return refuse(source, comm);
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}
