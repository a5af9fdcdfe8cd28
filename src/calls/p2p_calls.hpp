// The shapes every point-to-point entry point shares, over the count type (int for the classic
// calls, MPI_Count for the MPI-4 `_c` ones): decide whether Strider moves the buffer, pack or
// prepare the wire buffer, call the MPI with it, and finish or track the operation.
#pragma once

#include <mpi.h>

#include <climits>

#include "calls/completion.hpp"
#include "calls/deferred_sends.hpp"
#include "calls/early_arrivals.hpp"
#include "calls/p2p_operations.hpp"
#include "calls/posted_receive.hpp"
#include "offers/protocol.hpp"
#include "runtime/profile.hpp"
#include "transfer/requests.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// Whether this send is Strider's; counts the ones that are not.
template <class Count>
bool packed_send(const void* buf, Count count, MPI_Datatype type, int dest, MPI_Comm comm,
                 transfer::Object& object) {
  const runtime::Timed timed(runtime::Phase::Classify);
  if (dest != MPI_PROC_NULL &&
      transfer::p2p_object(buf, count, type, false, {comm, dest}, object)) {
    return true;
  }
  transfer::counters().sends_forwarded++;
  return false;
}

template <class Count>
bool packed_recv(void* buf, Count count, MPI_Datatype type, bool from_nobody,
                 const transfer::Peer& peer, transfer::Object& object) {
  const runtime::Timed timed(runtime::Phase::Classify);
  if (!from_nobody && transfer::p2p_object(buf, count, type, true, peer, object)) return true;
  transfer::counters().recvs_forwarded++;
  return false;
}

// MPI_Send, Ssend, Rsend, Bsend: `next` is the MPI's call. (Bsend: the MPI copies the packed
// bytes into the attached buffer, so the wire buffer is free after it returns.)
// Every send is numbered for the same-node offers (offers/protocol.hpp): one that takes
// its receiver's offer sends a notice instead of its bytes. A send that fails leaves its stream
// untrusted (NumberedSend::sent).
template <class Next, class Count>
int blocking_send(Next next, const void* buf, Count count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm) {
  transfer::ProgressOrphans progress;
  const offers::NumberedSend numbered = offers::number_send(comm, dest, tag);
  transfer::Object object;
  if (!packed_send(buf, count, type, dest, comm, object)) {
    return numbered.sent(next(buf, count, type, dest, tag, comm));
  }
  int rc = MPI_SUCCESS;
  if (numbered.index && offers::take(object, comm, dest, tag, *numbered.index, rc)) {
    const int notice = next(offers::notice_buffer(), Count{offers::kNoticeCount},
                            offers::notice_type(), dest, tag, comm);
    return rc != MPI_SUCCESS ? rc : numbered.sent(notice);
  }
  transfer::Outgoing out;
  rc = transfer::pack_outgoing(object, {comm, dest}, out);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);
  rc = next(out.wire.data(), Count{out.shape.count}, out.shape.type, dest, tag, comm);
  release(out);
  return numbered.sent(rc);
}

// MPI_Isend and Irsend (`init`: the MPI's persistent init of the same mode), Ibsend and Issend
// (`init` null: never deferred; a deferred Issend would be the MPI's persistent synchronous
// send, whose cancel crashes MPICH 5.0.2 over UCX). Deferred where it may be
// (deferred_sends.hpp): packed and started by the flush at the thread's next MPI call. Otherwise
// packed now, after the deferred sends are started: the standard lets a send read its buffer at any
// time until completion, and packing before the MPI sees the message keeps the order of sends.
template <class Next, class Count>
int nonblocking_send(Next next, SendInit init, const void* buf, Count count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const PostingTurn turn;  // first: the progress thread may be in the MPI
  if (request == nullptr) return next(buf, count, type, dest, tag, comm, request);  // the MPI's
  const runtime::Timed timed(runtime::Phase::Isend);
  transfer::ProgressOrphans progress;
  const offers::NumberedSend numbered = offers::number_send(comm, dest, tag);
  transfer::Object object;
  if (!packed_send(buf, count, type, dest, comm, object)) {
    flush_deferred_sends();
    return numbered.sent(next(buf, count, type, dest, tag, comm, request));
  }
  int rc = MPI_SUCCESS;
  const bool deferrable = init && may_defer(object);
  if (numbered.index && deferrable &&
      defer_offered_send(init, object, {comm, dest}, dest, tag, numbered, request, rc)) {
    return rc;
  }
  if (numbered.index && !deferrable && offers::take(object, comm, dest, tag, *numbered.index, rc)) {
    // Filled already: the notice's request holds nothing of Strider's, and is tracked only so
    // that a cancel of it is refused. It goes after the sends deferred before it.
    flush_deferred_sends();
    const int notice = next(offers::notice_buffer(), Count{offers::kNoticeCount},
                            offers::notice_type(), dest, tag, comm, request);
    if (notice == MPI_SUCCESS)
      transfer::requests().track(*request, std::make_unique<NoticeOperation>());
    return rc != MPI_SUCCESS ? rc : numbered.sent(notice);
  }
  if (deferrable) return defer_send(init, object, {comm, dest}, dest, tag, numbered, request);
  flush_deferred_sends();
  transfer::Outgoing out;
  rc = transfer::pack_outgoing(object, {comm, dest}, out);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);
  rc = next(out.wire.data(), Count{out.shape.count}, out.shape.type, dest, tag, comm, request);
  if (rc != MPI_SUCCESS) return numbered.sent(rc);  // `out` releases its wire buffer
  transfer::requests().track(*request, std::make_unique<SendOperation>(std::move(out)));
  return MPI_SUCCESS;
}

// The source and tag a receive names, for the same-node offers (none for a matched message).
struct Envelope {
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
};

// Receives into a wire buffer with `receive(in, status)` (`in` prepared, its wire waiting) and
// unpacks.
template <class Receive>
int receive_and_unpack(const transfer::Object& object, const transfer::Peer& peer,
                       MPI_Status* status, Receive receive) {
  transfer::Incoming in;
  int rc = transfer::prepare_incoming(object, peer, false, in);
  if (rc != MPI_SUCCESS) return rc;
  Status st(status);
  rc = receive(in, *st.use);
  const int unpacked = transfer::complete_incoming(in, *st.use, rc);
  transfer::requests().note_receives_finished(1);  // alone (offers/protocol.cpp in_burst)
  return rc != MPI_SUCCESS ? rc : unpacked;
}

// Receives into a wire buffer with `receive(data, count, type, status)` and unpacks.
template <class Receive>
int blocking_receive(const transfer::Object& object, const transfer::Peer& peer, MPI_Status* status,
                     Receive receive) {
  return receive_and_unpack(object, peer, status, [&](transfer::Incoming& in, MPI_Status& st) {
    return receive(in.wire.data(), in.post.count, in.post.type, &st);
  });
}

// Posts a receive into a wire buffer with `receive(data, count, type, request)`; the completion
// function that sees the request complete unpacks. With an envelope the receive is counted for
// the same-node offers, and makes one where it can once the MPI has accepted it.
template <class Receive>
int nonblocking_receive(const transfer::Object& object, const transfer::Peer& peer,
                        MPI_Request* request, Receive receive, const Envelope* envelope = nullptr) {
  transfer::Incoming in;
  int rc = MPI_SUCCESS;
  {
    const runtime::Timed timed(runtime::Phase::RecvPrepare);
    rc = transfer::prepare_incoming(object, peer, true, in);
  }
  if (rc != MPI_SUCCESS) return rc;
  const bool offering = envelope && offers::plan_offer(in, envelope->source, envelope->tag, true);
  {
    const runtime::Timed timed(runtime::Phase::RecvPost);
    rc = receive(in.wire.data(), in.post.count, in.post.type, request);
  }
  if (rc != MPI_SUCCESS) return rc;  // `in` releases its wire buffer and type
  if (offering) offers::publish(in);
  // An offer's data needs no unpack, and a receive no wave takes gains nothing from one.
  const bool may_join_waves = !offering && transfer::joins_waves(in);
  const std::uint64_t tracked_as =
      transfer::requests().track(*request, std::make_unique<ReceiveOperation>(std::move(in)));
  if (may_join_waves) note_posted(*request, tracked_as);
  return MPI_SUCCESS;
}

// MPI_Recv / MPI_Recv_c. A receive that makes a same-node offer is posted by `posted`, offered,
// then waited for (posted_receive.hpp).
template <class Next, class Irecv, class Count>
int recv(Next next, const PostedReceive<Irecv>& posted, void* buf, Count count, MPI_Datatype type,
         int source, int tag, MPI_Comm comm, MPI_Status* status) {
  transfer::ProgressOrphans progress;
  transfer::Object object;
  if (!packed_recv(buf, count, type, source == MPI_PROC_NULL, {comm, source}, object)) {
    offers::Watch watch = offers::watch(comm, source, tag);
    if (watch.ticket == 0) return next(buf, count, type, source, tag, comm, status);
    Status st(status);
    const int rc = next(buf, count, type, source, tag, comm, st.use);
    offers::observe(watch, *st.use, rc);
    return rc;
  }
  return receive_and_unpack(
      object, {comm, source}, status, [&](transfer::Incoming& in, MPI_Status& st) {
        if (!offers::plan_offer(in, source, tag, false)) {
          return next(in.wire.data(), in.post.count, in.post.type, source, tag, comm, &st);
        }
        MPI_Request request = MPI_REQUEST_NULL;
        const int rc =
            posted.irecv(in.wire.data(), in.post.count, in.post.type, source, tag, comm, &request);
        if (rc != MPI_SUCCESS) {
          // Refused: never posted, nothing offered (its watch is dropped).
          in.extras.reset();
          return rc;
        }
        offers::publish(in);
        return wait_posted(posted, request, st);
      });
}

// MPI_Irecv / MPI_Irecv_c.
template <class Next, class Count>
int irecv(Next next, void* buf, Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Request* request) {
  const PostingTurn turn;  // first: the progress thread may be in the MPI
  if (request == nullptr) return next(buf, count, type, source, tag, comm, request);  // the MPI's
  const runtime::Timed timed(runtime::Phase::Irecv);
  transfer::ProgressOrphans progress;
  transfer::Object object;
  if (!packed_recv(buf, count, type, source == MPI_PROC_NULL, {comm, source}, object)) {
    offers::Watch watch = offers::watch(comm, source, tag);
    const int rc = next(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS && watch.ticket != 0) {
      transfer::requests().track(*request, std::make_unique<ObservedReceive>(std::move(watch)));
    }
    return rc;
  }
  const Envelope envelope{source, tag};
  return nonblocking_receive(
      object, {comm, source}, request,
      [&](void* wire, int n, MPI_Datatype t, MPI_Request* r) {
        return next(wire, n, t, source, tag, comm, r);
      },
      &envelope);
}

// The peer of a matched message, for error reports and placement (the message handle hides
// both): the world's handler is the best there is, and the sender is not known.
inline transfer::Peer message_peer() { return {MPI_COMM_WORLD, MPI_ANY_SOURCE}; }

// MPI_Mrecv / MPI_Mrecv_c.
template <class Next, class Count>
int mrecv(Next next, void* buf, Count count, MPI_Datatype type, MPI_Message* message,
          MPI_Status* status) {
  transfer::ProgressOrphans progress;
  transfer::Object object;
  if (message == nullptr ||
      !packed_recv(buf, count, type, *message == MPI_MESSAGE_NO_PROC, message_peer(), object)) {
    return next(buf, count, type, message, status);
  }
  return blocking_receive(object, message_peer(), status,
                          [&](void* wire, int n, MPI_Datatype t, MPI_Status* st) {
                            return next(wire, n, t, message, st);
                          });
}

// MPI_Imrecv / MPI_Imrecv_c.
template <class Next, class Count>
int imrecv(Next next, void* buf, Count count, MPI_Datatype type, MPI_Message* message,
           MPI_Request* request) {
  transfer::ProgressOrphans progress;
  transfer::Object object;
  if (message == nullptr || request == nullptr ||
      !packed_recv(buf, count, type, *message == MPI_MESSAGE_NO_PROC, message_peer(), object)) {
    return next(buf, count, type, message, request);
  }
  return nonblocking_receive(object, message_peer(), request,
                             [&](void* wire, int n, MPI_Datatype t, MPI_Request* r) {
                               return next(wire, n, t, message, r);
                             });
}

// MPI_Sendrecv / MPI_Sendrecv_c: each side packed or passed as it is, independently, and the
// MPI does the exchange in one call (so its deadlock freedom is kept). Each side takes part in
// the same-node offers as a send and a receive would. A receive side that makes an offer is
// posted by `posted` first and offered, then the send goes by `send` (the MPI's Send of the
// count type) and the receive is waited for: as for MPI_Sendrecv itself, the receive is posted
// before the send can block, so the exchange still cannot deadlock.
template <class Next, class Irecv, class Send, class Count>
int sendrecv(Next next, const PostedReceive<Irecv>& posted, Send send, const void* sendbuf,
             Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status) {
  transfer::ProgressOrphans progress;
  const offers::NumberedSend numbered = offers::number_send(comm, dest, sendtag);
  transfer::Object send_object, recv_object;
  const bool pack_send =
      dest != MPI_PROC_NULL &&
      transfer::p2p_object(sendbuf, sendcount, sendtype, false, {comm, dest}, send_object);
  const bool pack_recv =
      source != MPI_PROC_NULL &&
      transfer::p2p_object(recvbuf, recvcount, recvtype, true, {comm, source}, recv_object);
  if (!pack_send) transfer::counters().sends_forwarded++;  // the packed ones count themselves
  if (!pack_recv) transfer::counters().recvs_forwarded++;
  Status st(status);
  if (!pack_send && !pack_recv) {
    offers::Watch watch = offers::watch(comm, source, recvtag);
    const int rc = next(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, st.use);
    offers::observe(watch, *st.use, rc);
    return numbered.sent(rc);
  }
  transfer::Outgoing out;
  transfer::Incoming in;
  offers::Watch watch;  // for a receive side the MPI fills
  int rc = MPI_SUCCESS;
  bool offering = false;
  if (pack_recv) {
    if ((rc = transfer::prepare_incoming(recv_object, {comm, source}, false, in)) != MPI_SUCCESS) {
      return numbered.sent(rc);
    }
    offering = offers::plan_offer(in, source, recvtag, false);
  } else {
    watch = offers::watch(comm, source, recvtag);
  }
  MPI_Request request = MPI_REQUEST_NULL;  // the offering receive, posted first
  if (offering) {
    rc = posted.irecv(in.wire.data(), in.post.count, in.post.type, source, recvtag, comm, &request);
    if (rc != MPI_SUCCESS) return numbered.sent(rc);  // refused: nothing offered, nothing sent
    offers::publish(in);
  }
  // Last before the call: a taken offer's notice must be sent whatever happens.
  bool notice = false;
  if (pack_send && numbered.index &&
      offers::take(send_object, comm, dest, sendtag, *numbered.index, rc)) {
    notice = true;
  } else if (pack_send &&
             (rc = transfer::pack_outgoing(send_object, {comm, dest}, out)) != MPI_SUCCESS) {
    if (offering) abandon_posted(posted, request, in);
    return numbered.sent(rc);
  }
  const int fill_rc = rc;
  const void* send_data = notice ? offers::notice_buffer() : pack_send ? out.wire.data() : sendbuf;
  const Count send_count = notice      ? Count{offers::kNoticeCount}
                           : pack_send ? Count{out.shape.count}
                                       : sendcount;
  const MPI_Datatype send_type = notice      ? offers::notice_type()
                                 : pack_send ? out.shape.type
                                             : sendtype;
  if (offering) {
    rc = send(send_data, send_count, send_type, dest, sendtag, comm);
    release(out);
    if (numbered.sent(rc) != MPI_SUCCESS) {
      abandon_posted(posted, request, in);
      return rc;
    }
    rc = wait_posted(posted, request, *st.use);
  } else {
    rc = next(send_data, send_count, send_type, dest, sendtag, pack_recv ? in.wire.data() : recvbuf,
              pack_recv ? Count{in.post.count} : recvcount, pack_recv ? in.post.type : recvtype,
              source, recvtag, comm, st.use);
    release(out);
    numbered.sent(rc);
  }
  int result = rc;
  if (!pack_recv) {
    offers::observe(watch, *st.use, rc);
  } else {
    const int unpacked = transfer::complete_incoming(in, *st.use, rc);
    transfer::requests().note_receives_finished(1);  // alone (offers/protocol.cpp in_burst)
    if (result == MPI_SUCCESS) result = unpacked;
  }
  return result != MPI_SUCCESS ? result : fill_rc;
}

// MPI_Sendrecv_replace / _c: `replace` is the MPI's, `exchange` its Sendrecv of the same count
// type. The buffer is packed to send before the received bytes are unpacked into it. Both sides
// are counted for the same-node offers, but neither makes nor takes one.
template <class Replace, class Exchange, class Count>
int sendrecv_replace(Replace replace, Exchange exchange, void* buf, Count count, MPI_Datatype type,
                     int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                     MPI_Status* status) {
  transfer::ProgressOrphans progress;
  const offers::NumberedSend numbered = offers::number_send(comm, dest, sendtag);
  Status st(status);
  transfer::Object object;
  if ((dest == MPI_PROC_NULL && source == MPI_PROC_NULL) ||
      !transfer::p2p_object(buf, count, type, false, {comm, dest}, object)) {
    transfer::counters().sends_forwarded++;
    transfer::counters().recvs_forwarded++;
    offers::Watch watch = offers::watch(comm, source, recvtag);
    const int rc = replace(buf, count, type, dest, sendtag, source, recvtag, comm, st.use);
    offers::observe(watch, *st.use, rc);
    return numbered.sent(rc);
  }
  transfer::Outgoing out;
  transfer::Incoming in;
  int rc = MPI_SUCCESS;
  if (dest != MPI_PROC_NULL &&
      (rc = transfer::pack_outgoing(object, {comm, dest}, out)) != MPI_SUCCESS) {
    return numbered.sent(rc);
  }
  if (source != MPI_PROC_NULL &&
      (rc = transfer::prepare_incoming(object, {comm, source}, false, in)) != MPI_SUCCESS) {
    return numbered.sent(rc);
  }
  offers::offered(in).watch = offers::watch(comm, source, recvtag);
  rc = exchange(out.wire.data(), Count{out.shape.count}, out.shape.type, dest, sendtag,
                in.wire.data(), Count{in.post.count}, in.post.type, source, recvtag, comm, st.use);
  release(out);
  numbered.sent(rc);
  if (source == MPI_PROC_NULL) return rc;
  const int unpacked = transfer::complete_incoming(in, *st.use, rc);
  return rc != MPI_SUCCESS ? rc : unpacked;
}

}  // namespace strider::calls
