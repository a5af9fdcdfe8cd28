// Deferred sends (docs/bursts.md): a nonblocking send on a buffer Strider packs is not packed
// when the application posts it. Strider creates the MPI's persistent send on the send's future
// wire (which reads nothing before MPI_Start), hands the application that request, and queues
// the send. The flush, at the start of the next MPI call the thread makes (every entry point but
// a deferrable send and a receive), packs every queued send with one kernel where they share a
// GPU and starts them in the order they were posted. The completion call that sees one complete
// frees the MPI's request and hands back MPI_REQUEST_NULL, as for any nonblocking send.
// With STRIDER_BURST on and the flush wrappers built; under MPI_THREAD_MULTIPLE only while the
// progress thread runs. One queue serves every thread: a flush by any thread starts them all,
// each thread's in its order, and a call of any thread waits for a flush under way
// (docs/bursts.md, B7). Where the application then makes no MPI call for a while, the progress
// thread flushes instead (progress_thread.hpp).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>

#include "offers/protocol.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

// The caps of one queue: past either, the send that crosses it flushes at once (a flush packs
// at most this much, so MPI_Test stays prompt).
struct BurstPolicy {
  static constexpr std::size_t kMaxSends = 1024;
  static constexpr std::int64_t kMaxBytes = std::int64_t{64} << 20;
};

// The MPI's persistent-send init for a send's mode (MPI_Send_init for MPI_Isend, Rsend_init for
// Irsend): the wire always fits an int count.
using SendInit = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

// Whether a nonblocking send of `object`, which Strider packs, waits for the next flush: its
// plan is Strider's own (the type, which the application may free, is not needed again), the
// settings allow it (and, under MPI_THREAD_MULTIPLE, the progress thread runs), and it is not
// posted from inside another MPI call (EntryCall).
bool may_defer(const transfer::Object& object);

// A deferrable send that takes its receiver's same-node offer (message `numbered.index`, claimed
// now in program order): queued with its write, and `*request` set to the MPI's persistent
// send of its notice. True when an offer was taken (`rc` then the call's result); false, nothing
// done, when the message goes as data.
bool defer_offered_send(SendInit init, const transfer::Object& object, const transfer::Peer& peer,
                        int dest, int tag, const offers::NumberedSend& numbered,
                        MPI_Request* request, int& rc);

// Queues the send (its number for the offers in `numbered`) and sets `*request` to the MPI's
// persistent send on its wire. MPI error code; on an error nothing is queued.
int defer_send(SendInit init, const transfer::Object& object, const transfer::Peer& peer, int dest,
               int tag, const offers::NumberedSend& numbered, MPI_Request* request);

// Whether this build defers sends at all (the flush wrappers were generated).
bool deferral_built();

// Counts an interposed call on this thread while it lives (EntryCall, PostingTurn, the progress
// thread's flush).
class CallCount {
 public:
  CallCount();
  ~CallCount();
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;
};

// Every interposed entry point but the posting ones (which take a PostingTurn) opens with one:
// it starts the deferred sends (after any flush of the progress thread's under way), then calls
// the error handlers that thread's flushes held (on this, the application's thread), and counts
// the call on this thread for as long as it runs, so that a send posted from a callback the MPI
// runs inside it (an error handler, an attribute's copy or delete function, a generalized request's
// query) is not deferred: no flush would come before the outer call returns, and that call may
// block on the send (B2).
class EntryCall {
 public:
  EntryCall();

 private:
  CallCount count_;  // first: counted before the flush, and uncounted however it ends
};

// Taken by the calls that post without flushing first (a deferrable send, a receive, Strider's
// own API). Below MPI_THREAD_MULTIPLE, while the progress thread runs, it holds the queue's lock
// for the call: the thread calls the MPI only between the application's calls, as
// MPI_THREAD_SERIALIZED asks (every other entry point flushes first, and after that nothing is
// queued for the thread to start until the next post); under MULTIPLE it holds nothing. While
// the thread runs, its end dates the application's last post, from which the thread counts a
// quiet spell. Counted on this thread as an EntryCall is.
class PostingTurn {
 public:
  PostingTurn();
  ~PostingTurn();
  PostingTurn(const PostingTurn&) = delete;
  PostingTurn& operator=(const PostingTurn&) = delete;

 private:
  CallCount count_;
  bool held_ = false;
};

// The progress thread runs from now on (`on`) or no longer. Below MPI_THREAD_MULTIPLE the posting
// calls then take turns with it (PostingTurn); under MULTIPLE it calls the MPI beside the
// application, and sends are deferred there only while it runs.
void progress_thread_running(bool on);

// Whether sends are queued (one load).
bool sends_queued();

// The progress thread's step: where sends are queued and the application has posted nothing for
// `quiet`, flushes them on the GPU that was current at the last GPU send queued, and counts it in
// progress_flushes. Returns how long until the queued sends are due (zero where none is queued
// once it returns). The error handlers of the sends it fails run at the application's next
// call, on its thread (EntryCall, PostingTurn).
std::chrono::nanoseconds flush_if_quiet(std::chrono::nanoseconds quiet);

// Packs and starts every queued send, in the order they were posted: the packs into wires by
// one kernel, the writes into same-node offers by another, then every start or notice. A send
// whose pack fails is not started: its completion reports the error, and its communicator's
// error handler is called once every send is started (a handler may send). An offer its receiver
// withdrew meanwhile: the data goes by the MPI under a request of Strider's own. Costs one load
// when nothing is queued or being flushed; a flush under way (another thread's, the progress
// thread's) is waited for, and below MPI_THREAD_MULTIPLE, while the progress thread runs, the
// lock is always taken.
void flush_deferred_sends();

}  // namespace strider::calls
