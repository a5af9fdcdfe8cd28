#include "offers/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "ipc/wire_ipc.hpp"
#include "offers/comm_ledgers.hpp"
#include "offers/node_board.hpp"
#include "runtime/log.hpp"
#include "runtime/profile.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/direct_object.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/perf_model.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_view.hpp"

namespace strider::offers {
namespace {

using runtime::LogLevel;

// Offers a process can have open at once (a 3D halo of 8 quantities posts 26 x 8 receives; a
// slot is about 2 KiB), and the host landing area per slot in host mode (the GPU path lands in
// device wires instead; 4 MiB of landing per process).
constexpr int kSlots = 256;
constexpr std::int64_t kHostLandingBytes = std::int64_t{16} << 10;
// How long a sender whose receiver has been offering on the stream waits for the next offer
// before it sends the data through the MPI (claim_offer). A receiver posts its next receive a
// moment after its last one completed, and with in-place writes that completion does no GPU
// work, so a ping-pong's sender comes back first. Under what the data path costs a GPU message
// (a launch + sync on each side).
constexpr std::chrono::microseconds kOfferWait{20};

struct Protocol {
  bool naming = false;  // the same on every process of the world: communicators get names
  bool on = false;      // this process makes and takes offers
  int world_rank = -1;
  NodeBoard board;
  // By world rank: processes whose landing buffers this one cannot map, and those that cannot
  // map this one's.
  std::unordered_set<int> unmappable;
  std::unordered_set<int> declined;
  // By world rank: receivers whose receive buffers this process could not map (their offers
  // then land in landing buffers).
  std::unordered_set<int> no_in_place;
};

Protocol& protocol() {
  static Protocol* p = new Protocol;  // outlives static destruction at exit
  return *p;
}

// The communicator's state where offers are on for it (alive for the call: the communicator
// is); shared_ledgers for what outlives the call.
CommLedgers* ledgers(MPI_Comm comm) {
  if (!protocol().on) return nullptr;
  const auto* found = ledgers_of(comm);
  return found ? found->get() : nullptr;
}

std::shared_ptr<CommLedgers> shared_ledgers(MPI_Comm comm) {
  if (!protocol().on) return nullptr;
  const auto* found = ledgers_of(comm);
  return found ? *found : nullptr;
}

// A process of this node, this one included (its messages to itself take offers too: the offer
// is in its own slots, the landing buffer or receive buffer its own memory), by world rank; -1
// for anything else.
int node_rank_of(int world_rank) { return protocol().board.node_rank(world_rank); }

// Whether rank `rank` of the communicator is a process of this node: only their streams can have
// offers, so only theirs are counted (the ledgers stay as small as the node's traffic).
bool counted(const CommLedgers& l, int rank) { return node_rank_of(l.world_rank(rank)) >= 0; }

Slots my_slots() {
  const NodeBoard& board = protocol().board;
  return board.slots(board.my_node_rank());
}

// The landing buffer a claim names, mapped for this process (a device landing is pinned until
// release_landing). Null where it cannot be mapped: no CUDA IPC between the two processes
// (containers, GPUs without peer access); the receiver `receiver` (world rank) is then left out
// of offers, with one line in the log.
std::byte* map_landing(int node, int receiver, const Claim& claim) {
  Protocol& p = protocol();
  if (claim.terms.landing == Landing::Board) return p.board.landing(node, claim.index_in_board);
  ipc::WireHandle handle;
  handle.bytes = claim.terms.handle;
  std::string why;
  std::byte* mapped = ipc::import_wire(handle, static_cast<std::size_t>(claim.terms.capacity),
                                       engine::cuda::current_device(), why);
  if (mapped == nullptr) {
    p.unmappable.insert(receiver);
    runtime::log(LogLevel::Info,
                 "same-node offers to world rank %d off (its messages go by the MPI): %s", receiver,
                 why.c_str());
  }
  return mapped;
}

void release_landing(const Claim& claim, std::byte* mapped) {
  if (claim.terms.landing == Landing::Device) ipc::unpin_wire(mapped);
}

// How the GPU engine sees a landing buffer: the board's host memory, or a device wire on
// `device`.
runtime::BufferView landing_view(Landing landing, std::byte* data, int device) {
  return landing == Landing::Board
             ? transfer::wire_view(ipc::WireMemory::Host, data, -1, transfer::Method::Host)
             : transfer::wire_view(ipc::WireMemory::Device, data, device, transfer::Method::Device);
}

// Packs the object into the mapped landing buffer; MPI error code.
int fill_landing(const transfer::Object& object, MPI_Comm comm, const Claim& claim,
                 std::byte* mapped) {
  const auto view = landing_view(claim.terms.landing, mapped, engine::cuda::current_device());
  return transfer::pack_object(object, mapped, view, transfer::HostPacking::Strider, comm);
}

// Whether the performance model prefers an offer to the method this side would use otherwise
// (model/cost_model.hpp), for a message alone or one of a burst. Host mode and types without a
// plan: always.
bool offer_pays(const transfer::Object& object, bool receive, transfer::Method method, bool burst) {
  if (!object.gpu || !object.plan->supported) return true;
  const model::ObjectShape shape = model::object_shape(object.plan->shape, object.count);
  return transfer::perf_model().offer_wins(shape, transfer::mpi_cuda_aware(), receive, method,
                                           burst);
}

// Whether a receive being posted is costed as one of a burst: its unpack would share a wave's
// kernel (STRIDER_BURST), as where the application's last completion call finished at least this
// many receives together (a halo completed by Waitall; not a loop of Wait or Waitany, which
// unpacks each receive alone, nor a ping-pong).
constexpr int kBurstReceives = 4;
bool in_burst() {
  return transfer::settings().bursts &&
         transfer::requests().receives_finished_together() >= kBurstReceives;
}

// Whether this process can write the landing buffer of `terms` from `object`.
bool can_fill(const transfer::Object& object, const Terms& terms) {
  if (terms.landing == Landing::Board) return true;
  return object.gpu && engine::cuda::current_device() >= 0;
}

// A stream's bucket in the receivers' offer tallies (NodeBoard::count_offer).
std::uint64_t stream_hash(std::uint64_t comm, int tag) {
  return comm * 0x9e3779b97f4a7c15ull ^ static_cast<std::uint32_t>(tag);
}

// The sender's claim on the offer for `message` from the receiver at node rank `node`, if it
// made one; the board is not searched where it cannot hold one (SendLedger::no_new_offer).
// Where the receiver has been offering on the stream and no offer is there yet, waits up to
// kOfferWait for it (less often after waits that found nothing: SendLedger), but not in a burst:
// there each wait would add to the others, and a message whose offer is late goes as data.
std::optional<Claim> claim_offer(int node, const MessageId& message, std::int64_t bytes,
                                 SendLedger& sends, int dest, bool burst) {
  NodeBoard& board = protocol().board;
  const std::uint64_t tally = board.offers_to_me(node, stream_hash(message.comm, message.tag));
  if (sends.no_new_offer(dest, message.tag, tally)) {
    sends.note_offer(dest, message.tag, false, tally, false);
    return std::nullopt;
  }
  bool offered = false;
  auto claim = board.take_offer(node, message, bytes, offered);
  // Nor for an offer of this process's own, which it cannot make while it waits.
  const bool wait = !claim && !offered && !burst && node != board.my_node_rank() &&
                    sends.expects_offer(dest, message.tag, tally);
  if (wait) {
    const runtime::Timed timed(runtime::Phase::OfferWait);
    const auto until = std::chrono::steady_clock::now() + kOfferWait;
    while (!claim && !offered && std::chrono::steady_clock::now() < until) {
      claim = board.take_offer(node, message, bytes, offered);
    }
  }
  sends.note_offer(dest, message.tag, offered, tally, wait);
  return claim;
}

// The receive buffer itself in the terms where its sender may write it in place (direct
// layout.hpp): device memory CUDA IPC exports, in few enough segments, and nothing the
// application queued on the default stream still pending (the sender's kernel is not ordered
// after it).
void offer_in_place(const transfer::Object& object, int device, Terms& terms) {
  if (!transfer::settings().same_node_direct || !transfer::gpu_engine_serves(*object.plan)) return;
  transfer::CallExports exports;
  transfer::AllocationBases bases{};
  std::string why;
  if (!transfer::describe_in_place(object, exports, terms.layout, bases, why)) {
    runtime::log(LogLevel::Debug, "same-node receive not offered in place: %s", why.c_str());
    return;
  }
  if (!PublishedTogether::default_stream_idle(device)) return;
  terms.in_place = 1;
  terms.gpu = engine::cuda::device_fingerprint(device);
}

// The GPU an object's kernels run on.
int device_of(const transfer::Object& object) {
  return object.view.info.device >= 0 ? object.view.info.device : engine::cuda::current_device();
}

// Whether the object may be written straight into the receive buffer the terms describe, in the
// receiver's layout (one kernel, no landing buffer): a message of exactly the receive's
// capacity, a GPU object the engine serves, blocks large enough for the link across GPUs, and
// not too many tiny blocks (ipc::DirectPolicy). If so, maps the buffer's allocations (pinned in
// `f.pinned`) and its layout over them (`f.to`).
bool prepare_in_place(const transfer::Object& object, const Terms& terms, PendingFill& f) {
  Protocol& p = protocol();
  const int device = device_of(object);
  if (!terms.in_place || object.bytes() != terms.capacity || !object.gpu || device < 0 ||
      !transfer::gpu_engine_serves(*object.plan) || !consistent(terms.layout, terms.capacity) ||
      p.no_in_place.count(f.receiver) != 0) {
    return false;
  }
  for (std::int64_t a = 0; a < terms.layout.allocations; ++a) {
    // Past the mappings' cache bound it would be mapped anew for every message.
    if (terms.layout.allocation[a].bytes > static_cast<std::int64_t>(ipc::kMaxImportBytes)) {
      return false;
    }
  }
  const std::int64_t smallest =
      std::min(ipc::smallest_block(terms.layout),
               ipc::smallest_block(object.plan->form, object.plan->bounds.extent, object.count));
  if (smallest <= 0 || (terms.gpu != engine::cuda::device_fingerprint(device) &&
                        smallest < ipc::min_block_across_gpus())) {
    return false;
  }
  if (smallest < ipc::DirectPolicy::kTinyBlock &&
      terms.capacity / smallest > ipc::DirectPolicy::kMaxTinyBlocksInPlace) {
    return false;
  }
  transfer::AllocationBases bases{};
  std::string why;
  {
    const runtime::Timed timed(runtime::Phase::ClaimImport);
    for (std::int64_t a = 0; a < terms.layout.allocations; ++a) {
      const ipc::SharedAllocation& shared = terms.layout.allocation[a];
      std::byte* base =
          ipc::import_wire(shared.handle, static_cast<std::size_t>(shared.bytes), device, why);
      if (base == nullptr) {
        // Opening a handle that fails costs tens of microseconds: not again for this receiver.
        // This process's own handle fails only where its export was dropped from the cache
        // (ipc/memory_export.cu), and its next receive exports it again: tried again.
        if (f.receiver != p.world_rank) p.no_in_place.insert(f.receiver);
        runtime::log(f.receiver != p.world_rank ? LogLevel::Info : LogLevel::Debug,
                     "same-node writes in place to world rank %d off (its offers land in landing "
                     "buffers): %s",
                     f.receiver, why.c_str());
        for (const std::byte* m : f.pinned) ipc::unpin_wire(m);
        f.pinned.clear();
        return false;
      }
      bases[a] = base;
      f.pinned.push_back(base);
    }
  }
  if (f.pinned.empty()) return false;
  const runtime::Timed timed_layout(runtime::Phase::ClaimLayout);
  f.to = transfer::mapped_form_of(terms.layout, bases);
  f.in_place = true;
  return true;
}

// The write of a claimed offer as one copy of a batch.
engine::cuda::BatchCopy fill_copy(const PendingFill& f) {
  if (!f.in_place)
    return {transfer::object_side(f.object), transfer::packed_side(f.object, f.landing)};
  return {transfer::object_side(f.object),
          {&f.to->form, 0, &f.to->state, 1, const_cast<std::byte*>(f.pinned.front())}};
}

// Writes one claimed offer by itself: in place by one kernel, or into the landing buffer (also
// where the engine passes an in-place write up; `declined` when that cannot be mapped).
void write_one(PendingFill& f, bool& declined) {
  if (f.in_place) {
    std::string why;
    const int device = device_of(f.object);
    const engine::cuda::Layout to_layout{f.to->form, 0, f.to->state};
    const auto to_view =
        transfer::wire_view(ipc::WireMemory::Device, const_cast<std::byte*>(f.pinned.front()),
                            device, transfer::Method::Device);
    const auto done =
        engine::cuda::copy_layout(f.object.plan->gpu_layout(), f.object.count, f.object.view,
                                  to_layout, 1, to_view, transfer::gpu_policy(), why);
    if (done == engine::cuda::Outcome::Done) {
      f.written_in_place = true;
      return;
    }
    if (done == engine::cuda::Outcome::Failed) {
      f.rc = transfer::report_error(f.comm, "same-node send", why);
      return;
    }
    f.landing = map_landing(f.node, f.receiver, f.claim);
    if (f.landing == nullptr) {
      declined = true;
      return;
    }
  }
  f.rc = fill_landing(f.object, f.comm, f.claim, f.landing);
}

// What a claimed offer holds mapped, let go.
void unmap(PendingFill& f) {
  for (const std::byte* m : f.pinned) ipc::unpin_wire(m);
  f.pinned.clear();
  if (f.landing != nullptr) release_landing(f.claim, f.landing);
  f.landing = nullptr;
}

}  // namespace

void start() {
  const transfer::Settings& cfg = transfer::settings();
  Protocol& p = protocol();
  PMPI_Comm_rank(MPI_COMM_WORLD, &p.world_rank);
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  // Whether to go on is agreed, so that the collectives below (and the naming of every
  // communicator made later) are made by all processes or none.
  int wanted = cfg.same_node && provided != MPI_THREAD_MULTIPLE ? 1 : 0, agreed = 0;
  if (PMPI_Allreduce(&wanted, &agreed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
      !agreed) {
    if (cfg.same_node) {
      runtime::log(LogLevel::Info, "same-node point-to-point offers off: %s",
                   provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE (send order undefined)"
                                                   : "STRIDER_SAME_NODE=0 on another process");
    }
    return;
  }
  // Named from here on, whatever becomes of the board on this node: the naming collectives must
  // be made by every process or none.
  name_world();
  p.naming = true;
  const bool host_mode = cfg.host_p2p == runtime::HostPath::Pack;
  std::string why;
  if (!p.board.create(kSlots, host_mode ? kHostLandingBytes : 0, why)) {
    runtime::log(LogLevel::Info, "same-node point-to-point offers off: %s", why.c_str());
    return;
  }
  p.on = host_mode || engine::cuda::device_count() > 0;
}

void stop() {
  Protocol& p = protocol();
  p.on = false;
  p.naming = false;
  forget_comms();
  p.board.destroy();
}

bool active(MPI_Comm comm) { return ledgers(comm) != nullptr; }

void comm_made(MPI_Comm comm) {
  if (protocol().naming) name_comm(comm);
}

NumberedSend number_send(MPI_Comm comm, int dest, int tag) {
  NumberedSend n{nullptr, dest, tag, std::nullopt};
  if (dest < 0) return n;
  CommLedgers* l = ledgers(comm);
  if (!l || !counted(*l, dest)) return n;
  n.ledgers = l;
  n.index = l->sends.next(dest, tag);
  return n;
}

int NumberedSend::sent(int rc) const {
  if (rc != MPI_SUCCESS && index) ledgers->sends.poison(dest, tag);
  return rc;
}

bool claim_pending(const transfer::Object& object, MPI_Comm comm, int dest, int tag,
                   std::uint64_t index, PendingFill& f, bool deferred) {
  const runtime::Timed timed(runtime::Phase::OfferClaim);
  // A record used before (a spare, a persistent send's) starts with no write of its own.
  f.in_place = false;
  f.landing = nullptr;
  f.pinned.clear();
  f.to.reset();
  f.rc = MPI_SUCCESS;
  f.written_in_place = false;
  Protocol& p = protocol();
  CommLedgers* l = ledgers(comm);
  if (!l || object.oversized) return false;
  const int receiver = l->world_rank(dest);
  const int node = node_rank_of(receiver);
  if (node < 0 || p.unmappable.count(receiver) != 0) return false;
  // Costed as a lone message: the receiver, which offered, costed the burst.
  if (!offer_pays(object, false, transfer::method_for(object, false, {comm, dest}), false)) {
    return false;
  }
  std::optional<Claim> claim;
  {
    const runtime::Timed timed(runtime::Phase::ClaimFind);
    claim = claim_offer(node, MessageId{l->name, p.world_rank, tag, index}, object.bytes(),
                        l->sends, dest, deferred && in_burst());
  }
  if (!claim) return false;
  if (!can_fill(object, claim->terms)) {
    Slots::reopen(*claim);  // nothing written: the message goes as data, the offer unused
    return false;
  }
  f.claim = *claim;
  f.comm = comm;
  f.receiver = receiver;
  f.node = node;
  f.object = object;
  const runtime::Timed timed_map(runtime::Phase::ClaimMap);
  if (!prepare_in_place(object, claim->terms, f)) {
    f.landing = map_landing(node, receiver, *claim);
    if (f.landing == nullptr) {
      Slots::decline(*claim);  // as data, and the receiver stops offering to this process
      return false;
    }
  }
  return true;
}

void fill_pending(std::span<PendingFill* const> fills, std::vector<char>& kept) {
  kept.assign(fills.size(), 1);
  std::vector<char> written(fills.size(), 0);
  // Several GPU writes from one GPU: one kernel (a wave, as transfer::pack_wave).
  std::vector<engine::cuda::BatchCopy> copies;
  std::vector<std::size_t> batched;
  int device = -1;
  for (std::size_t i = 0; fills.size() > 1 && transfer::settings().bursts && i < fills.size();
       ++i) {
    const PendingFill& f = *fills[i];
    if (!f.object.gpu || !transfer::gpu_engine_serves(*f.object.plan) ||
        (!f.in_place && f.claim.terms.landing != Landing::Device)) {
      continue;
    }
    const int d = device_of(f.object);
    if (device < 0) device = d;
    if (d != device) continue;
    copies.push_back(fill_copy(f));
    batched.push_back(i);
  }
  if (transfer::run_wave(copies, device)) {
    for (const std::size_t i : batched) {
      written[i] = 1;
      fills[i]->written_in_place = fills[i]->in_place;
    }
    transfer::counters().pack_waves++;
  }
  Protocol& p = protocol();
  for (std::size_t i = 0; i < fills.size(); ++i) {
    PendingFill& f = *fills[i];
    bool gave_up = false;
    if (!written[i]) write_one(f, gave_up);
    const runtime::Timed timed(runtime::Phase::FillRelease);
    unmap(f);
    if (gave_up) {
      Slots::decline(f.claim);  // as data, and the receiver stops offering to this process
      kept[i] = 0;
      continue;
    }
    kept[i] = f.rc == MPI_SUCCESS ? Slots::fill(f.claim, f.object.bytes(), f.written_in_place)
                                  : Slots::fail(f.claim);
    if (!kept[i]) {
      f.rc = MPI_SUCCESS;  // withdrawn (its receive was refused): the data goes by the MPI
    } else if (f.rc == MPI_SUCCESS) {
      transfer::counters().offers_taken++;
    }
  }
  p.board.sync();  // the outcomes are visible before the notices are
}

void drop_pending(PendingFill& f) {
  unmap(f);
  Slots::fail(f.claim);
  protocol().board.sync();
}

bool take(const transfer::Object& object, MPI_Comm comm, int dest, int tag, std::uint64_t index,
          int& rc) {
  PendingFill f;
  if (!claim_pending(object, comm, dest, tag, index, f, false)) return false;
  PendingFill* one[] = {&f};
  std::vector<char> kept;
  fill_pending(one, kept);
  rc = f.rc;
  return kept[0] != 0;
}

void persistent_send(MPI_Comm comm, int dest, int tag) {
  if (CommLedgers* l = ledgers(comm); l && dest >= 0 && counted(*l, dest)) {
    l->sends.poison(dest, tag);
  }
}

void send_may_be_cancelled() {
  if (protocol().on) for_each_ledgers([](CommLedgers& l) { l.sends.poison_all(); });
}

Watch watch(MPI_Comm comm, int source, int tag) {
  if (source == MPI_PROC_NULL) return Watch{};
  auto l = shared_ledgers(comm);
  if (!l) return Watch{};
  const auto ticket = l->receives.post(source, tag);
  return Watch(ticket, std::move(l));
}

void observe(Watch& watch, const MPI_Status& status, int error) {
  if (watch.ticket == 0) return;
  const std::uint64_t ticket = std::exchange(watch.ticket, 0);
  ReceiveLedger& ledger = watch.ledgers->receives;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  int error_class = MPI_SUCCESS;
  if (error != MPI_SUCCESS) PMPI_Error_class(error, &error_class);
  if (cancelled) {
    ledger.unmatched(ticket);
  } else if ((error_class == MPI_SUCCESS || error_class == MPI_ERR_TRUNCATE) &&
             status.MPI_SOURCE >= 0 && status.MPI_TAG >= 0) {
    if (counted(*watch.ledgers, status.MPI_SOURCE)) {
      ledger.matched(ticket, status.MPI_SOURCE, status.MPI_TAG);
    } else {
      ledger.unmatched(ticket);  // from off the node: its stream never has offers
    }
  } else {
    ledger.lost(ticket);  // what it matched is unknown: no more offers
  }
}

void matched_probe(MPI_Comm comm, const MPI_Status& status) {
  CommLedgers* l = ledgers(comm);
  if (l && status.MPI_SOURCE >= 0 && counted(*l, status.MPI_SOURCE)) {
    l->receives.matched_now(status.MPI_SOURCE, status.MPI_TAG);
  }
}

void persistent_receive(MPI_Comm comm) {
  if (CommLedgers* l = ledgers(comm)) l->receives.poison();
}

bool plan_offer(transfer::Incoming& in, int source, int tag, bool nonblocking) {
  if (source == MPI_PROC_NULL) return false;
  auto l = shared_ledgers(in.comm);
  if (!l) return false;
  Protocol& p = protocol();
  const int sender = l->world_rank(source);  // -1 for MPI_ANY_SOURCE
  const auto index = node_rank_of(sender) >= 0 && in.capacity > 0
                         ? l->receives.offer_index(source, tag)
                         : std::nullopt;
  const auto name = l->name;
  const auto ticket = l->receives.post(source, tag);
  OfferedReceive& r = offered(in);
  r.watch = Watch(ticket, std::move(l));
  if (!index || p.declined.count(sender) != 0 ||
      !offer_pays(in.object, true, in.method, nonblocking && in_burst())) {
    return false;
  }
  // Too large for a host landing area: no offer (and a blocking receive stays one).
  if (!in.object.gpu && in.capacity > p.board.landing_bytes(p.board.my_node_rank())) return false;
  r.offer.planned = MessageId{name, sender, tag, *index};
  r.offer.sender = sender;
  return true;
}

void publish(transfer::Incoming& in) {
  if (!in.extras) return;
  Offer& offer = offered(in).offer;
  if (!offer.planned) return;
  const runtime::Timed timed(runtime::Phase::OfferPublish);
  Protocol& p = protocol();
  Terms terms;
  terms.message = *std::exchange(offer.planned, std::nullopt);
  terms.capacity = in.capacity;
  terms.unit = in.object.plan->bounds.size;
  const int me = p.board.my_node_rank();
  Offer made;
  if (in.object.gpu) {
    const int device = in.object.view.info.device >= 0 ? in.object.view.info.device
                                                       : engine::cuda::current_device();
    std::string why;
    ipc::WireHandle handle;
    bool landing = false;
    {
      const runtime::Timed timed(runtime::Phase::OfferLanding);
      // A persistent receive keeps its last start's landing buffer (settled: no sender holds it).
      const std::size_t bytes = static_cast<std::size_t>(in.capacity);
      if (offer.slot < 0 && offer.wire.data() != nullptr &&
          offer.wire.memory == ipc::WireMemory::Device && offer.wire.device == device &&
          offer.wire.block.capacity >= bytes) {
        made.wire = std::move(offer.wire);
      }
      landing = device >= 0 &&
                (made.wire.data() != nullptr ||
                 ipc::acquire_wire(ipc::WireMemory::Device, device, bytes, made.wire, why)) &&
                ipc::export_wire(made.wire, handle, why);
    }
    if (!landing) {
      // Once at Info (the receives go by the MPI), then at Debug.
      static bool said = false;
      runtime::log(std::exchange(said, true) ? LogLevel::Debug : LogLevel::Info,
                   "no same-node offer for a GPU receive (it goes by the MPI): %s", why.c_str());
      return;
    }
    made.landing = Landing::Device;
    terms.landing = Landing::Device;
    terms.handle = handle.bytes;
    const runtime::Timed timed(runtime::Phase::OfferInPlace);
    offer_in_place(in.object, device, terms);
  } else {
    if (in.capacity > p.board.landing_bytes(me)) return;
    made.landing = Landing::Board;
    terms.landing = Landing::Board;
  }
  {
    const runtime::Timed timed(runtime::Phase::OfferOpen);
    made.slot = p.board.open_offer(terms);
    if (made.slot < 0) return;  // every slot in use: this receive goes without
    p.board.count_offer(node_rank_of(offer.sender),
                        stream_hash(terms.message.comm, terms.message.tag));
  }
  if (made.landing == Landing::Board) made.board = p.board.landing(me, made.slot);
  made.sender = offer.sender;
  offer = std::move(made);
  transfer::counters().offers_made++;
}

namespace {
thread_local PublishedTogether* together = nullptr;
}  // namespace

PublishedTogether::PublishedTogether() : outer_(std::exchange(together, this)) {}
PublishedTogether::~PublishedTogether() { together = outer_; }

bool PublishedTogether::default_stream_idle(int device) {
  if (together != nullptr) {
    for (const auto& [d, idle] : together->idle_) {
      if (d == device) return idle;
    }
  }
  transfer::counters().default_stream_checks++;
  const bool idle = engine::cuda::default_stream_idle(device);
  if (together == nullptr) return idle;
  together->idle_.emplace_back(device, idle);
  return idle;
}

OfferedReceive& offered(transfer::Incoming& in) {
  if (!in.extras) in.extras = std::make_unique<OfferedReceive>();
  return static_cast<OfferedReceive&>(*in.extras);  // only this layer makes a receive's extras
}

namespace {

// The outcome of a completed receive's offer (the slot emptied; the board synced by the
// caller): nothing where the bytes came by the MPI (not taken, or declined).
std::optional<Outcome> offer_outcome(Offer& offer) {
  Protocol& p = protocol();
  const Outcome outcome = my_slots().settle(std::exchange(offer.slot, -1));
  if (outcome.phase == Phase::Declined) p.declined.insert(offer.sender);
  if (outcome.phase == Phase::Retracted || outcome.phase == Phase::Declined) return std::nullopt;
  return outcome;
}

// Delivers what the sender wrote: unpacked from the landing buffer unless `unpacked` (a wave did
// it) or written in place, and the status's count set. MPI error code.
int deliver(transfer::Incoming& in, const Offer& offer, MPI_Status& status, const Outcome& outcome,
            bool unpacked) {
  if (outcome.phase != Phase::Filled && outcome.phase != Phase::Written) {
    return transfer::report_error(in.comm, "same-node receive",
                                  "the sender could not write the message");
  }
  const std::int64_t unit = in.object.plan->bounds.size;
  const int full = static_cast<int>(outcome.bytes / unit);
  int rc = MPI_SUCCESS;
  // Written: the sender wrote it in place.
  if (!unpacked && outcome.phase != Phase::Written && full > 0) {
    std::byte* data = offer.landing == Landing::Device ? offer.wire.data() : offer.board;
    const auto view = landing_view(offer.landing, data, offer.wire.device);
    rc = transfer::unpack_object(transfer::element_range(in.object, 0, full), data, view,
                                 transfer::HostPacking::Strider, in.comm);
  }
  if (rc == MPI_SUCCESS) rc = PMPI_Status_set_elements_x(&status, MPI_BYTE, outcome.bytes);
  if (rc == MPI_SUCCESS) in.status_bytes = outcome.bytes;
  if (rc == MPI_SUCCESS) {
    transfer::counters().offers_used++;
    if (outcome.phase == Phase::Written) transfer::counters().offers_in_place++;
  }
  return rc;
}

}  // namespace

bool OfferedReceive::settle(transfer::Incoming& in, MPI_Status& status, int error, int& rc) {
  observe(watch, status, error);
  if (offer.slot < 0) return false;
  protocol().board.sync();
  const std::optional<Outcome> outcome = offer_outcome(offer);
  if (!outcome) return false;  // not filled: the bytes came by the MPI
  rc = deliver(in, offer, status, *outcome, false);
  return true;
}

void settle_wave(std::span<transfer::Incoming* const> ins, std::span<MPI_Status* const> statuses,
                 std::span<const int> errors) {
  if (!transfer::settings().bursts || ins.size() < 2 || !protocol().on) return;
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    transfer::Incoming& in = *ins[i];
    if (!in.extras || in.unpacked || errors[i] != MPI_SUCCESS) continue;
    OfferedReceive& r = offered(in);
    if (r.offer.slot >= 0) {
      live.push_back(i);
    } else {
      // No offer: its bytes are in the wire. Seen now, so that the wire's wave may take it.
      observe(r.watch, *statuses[i], errors[i]);
    }
  }
  // One live offer too: settled here, if its bytes came by the MPI its wire joins the wave.
  if (live.empty()) return;
  const runtime::Timed timed(runtime::Phase::SettleWave);
  protocol().board.sync();  // once for the wave
  // Landing buffers on one GPU, whole messages: unpacked by one kernel; the rest now, each.
  std::vector<engine::cuda::BatchCopy> copies;
  std::vector<std::pair<std::size_t, Outcome>> batched;
  int device = -1;
  for (const std::size_t i : live) {
    transfer::Incoming& in = *ins[i];
    OfferedReceive& r = offered(in);
    observe(r.watch, *statuses[i], errors[i]);
    const std::optional<Outcome> outcome = offer_outcome(r.offer);
    if (!outcome) continue;  // the bytes came by the MPI: its wire is unpacked as usual
    const int d = r.offer.wire.device;
    if (outcome->phase == Phase::Filled && r.offer.landing == Landing::Device &&
        outcome->bytes == in.object.bytes() && in.object.gpu && in.object.view.device &&
        transfer::gpu_engine_serves(*in.object.plan) && d == in.object.view.info.device &&
        (device < 0 || d == device)) {
      device = d;
      copies.push_back({transfer::packed_side(in.object, r.offer.wire.data()),
                        transfer::object_side(in.object)});
      batched.emplace_back(i, *outcome);
      continue;
    }
    in.unpack_rc = deliver(in, r.offer, *statuses[i], *outcome, false);
    in.unpacked = true;
  }
  const bool waved = transfer::run_wave(copies, device);
  if (waved) transfer::counters().unpack_waves++;
  for (const auto& [i, outcome] : batched) {
    transfer::Incoming& in = *ins[i];
    in.unpack_rc = deliver(in, offered(in).offer, *statuses[i], outcome, waved);
    in.unpacked = true;
  }
}

bool may_cancel(transfer::Incoming& in) {
  if (!in.extras) return true;
  const Offer& offer = offered(in).offer;
  if (offer.slot < 0) return true;
  return my_slots().retract(offer.slot);
}

// A watch dropped before its receive completed (the MPI refused the receive): matched nothing.
void drop(Watch& watch) {
  if (watch.ticket != 0 && watch.ledgers) watch.ledgers->receives.unmatched(watch.ticket);
  watch.ticket = 0;
  watch.ledgers.reset();
}

Watch& Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    drop(*this);
    ticket = std::exchange(other.ticket, 0);
    ledgers = std::move(other.ledgers);
  }
  return *this;
}

Watch::~Watch() { drop(*this); }

// An offer dropped before its receive completed: one that was only planned (the MPI refused
// the receive) was never seen by a sender; a published one, dropped only should Strider fail
// past posting, is withdrawn.
void withdraw(Offer& offer) {
  offer.planned.reset();
  if (offer.slot >= 0 && protocol().on) my_slots().settle(offer.slot);
  offer.slot = -1;
}

Offer& Offer::operator=(Offer&& other) noexcept {
  if (this != &other) {
    withdraw(*this);
    slot = std::exchange(other.slot, -1);
    planned = std::exchange(other.planned, std::nullopt);
    landing = other.landing;
    sender = other.sender;
    wire = std::move(other.wire);
    board = other.board;
  }
  return *this;
}

Offer::~Offer() { withdraw(*this); }

}  // namespace strider::offers
