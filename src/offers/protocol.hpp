// The offer protocol's hooks in the point-to-point calls (docs/same-node-p2p.md). On the
// communicators that have an agreed name (comm_ledgers.hpp), between processes of one node, when
// the board exists and the thread level is below MPI_THREAD_MULTIPLE; everywhere else every hook
// does nothing and costs a load or a lookup.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "offers/receive_state.hpp"
#include "transfer/direct_object.hpp"
#include "transfer/wire.hpp"

namespace strider::offers {

struct CommLedgers;

// MPI_Init (collective over MPI_COMM_WORLD) / MPI_Finalize.
void start();
void stop();
bool active(MPI_Comm comm);
// A communicator was just made by the same call on each member: names it (collective over it
// where offers were agreed on at MPI_Init; comm_ledgers.hpp).
void comm_made(MPI_Comm comm);

// --- sends ---
// One message as numbered: `index` is nothing when offers cannot be taken for it.
struct NumberedSend {
  CommLedgers* ledgers;
  int dest, tag;
  std::optional<std::uint64_t> index;
  // Passes the send's result on; a failed send may or may not have left, so its stream is not
  // trusted again.
  int sent(int rc) const;
};
// Numbers one message (every send on the communicator, whoever moves it).
NumberedSend number_send(MPI_Comm comm, int dest, int tag);
// Takes the receiver's offer for message `index` if there is one, and packs the object into its
// landing buffer. True when the caller must then send a notice (notice_*) instead of the bytes;
// `rc` is then the fill's error (the notice is still sent: the receiver waits for it).
bool take(const transfer::Object& object, MPI_Comm comm, int dest, int tag, std::uint64_t index,
          int& rc);

// An offer taken by a send whose write waits for a flush (calls/deferred_sends.hpp): the claim
// and where the write goes, mapped and pinned until fill_pending or drop_pending.
struct PendingFill {
  Claim claim;
  MPI_Comm comm = MPI_COMM_NULL;
  int receiver = -1;  // world rank
  int node = -1;      // node rank
  transfer::Object object;
  bool in_place = false;         // into the receive buffer in its layout, else the landing buffer
  std::byte* landing = nullptr;  // the landing buffer, mapped
  std::vector<const std::byte*> pinned;            // in place: the receive buffer's allocations
  std::shared_ptr<const transfer::MappedForm> to;  // in place: its layout over them
  int rc = MPI_SUCCESS;                            // the write's error
  bool written_in_place = false;
};
// take() without the write: true when the offer is claimed (`pending` then holds it for
// fill_pending or drop_pending); false when the message goes as data. `pending` may be a record
// used before: its write's fields are reset first. `deferred`: a deferred send
// (calls/deferred_sends.hpp), written at a flush with the others of its burst; take() itself
// passes false.
bool claim_pending(const transfer::Object& object, MPI_Comm comm, int dest, int tag,
                   std::uint64_t index, PendingFill& pending, bool deferred);
// Writes the claimed offers (those on one GPU by one kernel where there are several) and marks
// each filled or failed, then makes the outcomes visible before any notice is sent. `kept[i]`:
// false when the receiver withdrew the offer meanwhile (nothing failed; the data must go by the
// MPI instead of the notice).
void fill_pending(std::span<PendingFill* const> fills, std::vector<char>& kept);
// A claimed offer that will not be written (its notice could not be made): marked failed.
void drop_pending(PendingFill& pending);
inline const void* notice_buffer() { return nullptr; }
constexpr int kNoticeCount = 0;
inline MPI_Datatype notice_type() { return MPI_BYTE; }
// A persistent send Strider does not serve (its starts are not numbered) / a cancel of a request
// that is or may be a send (a cancel the MPI carries out leaves a gap in a stream's numbering;
// which stream is not known for an untracked request: every stream is poisoned).
void persistent_send(MPI_Comm comm, int dest, int tag);
void send_may_be_cancelled();

// --- receives ---
// Counts a receive operation being posted (ticket 0 where offers are off).
Watch watch(MPI_Comm comm, int source, int tag);
// It completed with `status` and `error`.
void observe(Watch& watch, const MPI_Status& status, int error);
// A message matched by MPI_Mprobe / MPI_Improbe.
void matched_probe(MPI_Comm comm, const MPI_Status& status);
// A persistent receive Strider does not serve on the communicator (its starts are not counted):
// no offer is made there again. Those it serves are counted at each start (plan_offer).
void persistent_receive(MPI_Comm comm);

// Counts a receive Strider finishes and, where certain, plans its offer (into `in`): true when
// one is planned. Call after prepare_incoming and before the MPI's receive is posted.
// `nonblocking`: its unpack may share an arrival wave's kernel (a blocking receive's never does).
bool plan_offer(transfer::Incoming& in, int source, int tag, bool nonblocking);
// Publishes the planned offer. Call only once the MPI has accepted the receive: a notice then
// always meets that receive, never one posted after a receive the MPI refused.
void publish(transfer::Incoming& in);
// While one lives in this thread, the offers published are those of one MPI call (MPI_Startall's
// receives): the application queued nothing between them, so whether its legacy default stream
// is idle (what a write in place must follow) is asked once per GPU for all of them, not once per
// offer (about 2.8 us each on an H100).
class PublishedTogether {
 public:
  PublishedTogether();
  ~PublishedTogether();
  PublishedTogether(const PublishedTogether&) = delete;
  PublishedTogether& operator=(const PublishedTogether&) = delete;
  // Whether the default stream of `device` is idle: asked once per GPU while `together` lives.
  static bool default_stream_idle(int device);

 private:
  std::vector<std::pair<int, bool>> idle_;  // (GPU, idle) asked so far
  PublishedTogether* outer_;
};
// (When the receive completes, OfferedReceive::settle, receive_state.hpp, unpacks the data from
// the landing buffer if it came by the offer and sets the status's count.)
// Several receives one completion call saw complete (an arrival wave), with their statuses and
// the MPI's errors: those that made offers are settled together (one board sync), the data the
// senders left in device landing buffers unpacked by one kernel, the others delivered each.
// Each is marked unpacked; a receive whose bytes came by the MPI is left for its wire's unpack.
void settle_wave(std::span<transfer::Incoming* const> ins, std::span<MPI_Status* const> statuses,
                 std::span<const int> errors);
// MPI_Cancel on the receive: false when its offer was taken (the receive must complete).
bool may_cancel(transfer::Incoming& in);

}  // namespace strider::offers
