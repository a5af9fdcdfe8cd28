#include "calls/persistent_p2p.hpp"

#include "transfer/requests.hpp"

namespace strider::calls {

int prepare_persistent_send(const transfer::Object& object, const transfer::Peer& peer, int tag,
                            bool synchronous, PersistentTransfer& p) {
  p.receive = false;
  p.comm = peer.comm;
  p.peer = peer.rank;
  p.tag = tag;
  p.synchronous = synchronous;
  p.object = object;
  // The application may free its type after the init; the staged path still needs it.
  int rc = p.held_type.dup(object.type);
  if (rc != MPI_SUCCESS) return rc;
  p.object.type = p.held_type.get();
  rc = transfer::prepare_outgoing(p.object, peer, p.out);
  if (rc == MPI_SUCCESS) transfer::counters().persistent_served++;
  return rc;
}

int prepare_persistent_receive(const transfer::Object& object, const transfer::Peer& peer, int tag,
                               PersistentTransfer& p) {
  p.receive = true;
  p.comm = peer.comm;
  p.peer = peer.rank;
  p.tag = tag;
  const int rc = transfer::prepare_incoming(object, peer, true, p.in);
  if (rc == MPI_SUCCESS) transfer::counters().persistent_served++;
  return rc;
}

}  // namespace strider::calls
