#include "transfer/collective/same_node.hpp"

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transfer/collective/batch.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_ipc.hpp"
#include "transfer/wire_view.hpp"

namespace strider::transfer::collective {
namespace {

// ---- step 1: the communicator's verdict, cached as an attribute -----------------------------

std::mutex g_keyval_mutex;
int g_keyval = MPI_KEYVAL_INVALID;

int delete_verdict(MPI_Comm, int, void* value, void*) {
  delete static_cast<bool*>(value);
  return MPI_SUCCESS;
}

int keyval() {
  std::lock_guard lock(g_keyval_mutex);
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_verdict, &g_keyval, nullptr) !=
          MPI_SUCCESS) {
    g_keyval = MPI_KEYVAL_INVALID;
  }
  return g_keyval;
}

// Collective on the first call for `comm`. A duplicate asks again (the null copy function).
bool same_node_comm(MPI_Comm comm, int size) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return false;  // every rank alike: the MPI refused a key
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found) {
    return *static_cast<bool*>(value);
  }
  int mine = runtime::config().same_node && engine::cuda::device_count() > 0;
  MPI_Comm node = MPI_COMM_NULL;
  int node_size = 0;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
      PMPI_Comm_size(node, &node_size) != MPI_SUCCESS || node_size != size) {
    mine = 0;
  }
  if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
  int all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
  PMPI_Comm_set_attr(comm, key, new bool(all != 0));
  return all != 0;
}

// ---- step 2: the record each rank publishes --------------------------------------------------

struct Header {
  std::int32_t ready = 0;
  std::int32_t unused = 0;
  WireHandle wire;
};
// Per peer: where the piece for that peer starts in the sender's wire, and its packed bytes.
struct Slot {
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

std::size_t record_bytes(int n) {
  return sizeof(Header) + sizeof(Slot) * static_cast<std::size_t>(n);
}

const Header& header_of(const std::vector<std::byte>& all, int rank, int n) {
  return *reinterpret_cast<const Header*>(all.data() + record_bytes(n) * rank);
}
const Slot& slot_of(const std::vector<std::byte>& all, int rank, int peer, int n) {
  return reinterpret_cast<const Slot*>(all.data() + record_bytes(n) * rank + sizeof(Header))[peer];
}

// The device every GPU piece of the call lives on; -1 when they are not all on one GPU's memory
// the batch kernel takes.
int call_device(const Call& call, const Side& source) {
  int device = -1;
  const auto take = [&](const Side& side) {
    for (const Piece& p : side.pieces()) {
      if (p.bytes() == 0) continue;
      Piece probe = p;
      probe.skip = false;
      if (!batchable(probe)) return false;
      const int d = p.object.view.info.device;
      if (d < 0 || (device >= 0 && d != device)) return false;
      device = d;
    }
    return true;
  };
  if (!take(source) || !take(call.recv)) return -1;
  return device < 0 ? 0 : device;  // a call of empty pieces: any GPU will do
}

}  // namespace

bool same_node_alltoall(MPI_Comm comm, const Group& g, Call* call, bool in_place, int& rc) {
  if (g.inter || g.size < 2 || !same_node_comm(comm, g.size)) return false;
  const int n = g.size, me = g.rank;

  // Step 2: can this rank take part?
  Side* source = call ? (in_place ? &call->recv : &call->send) : nullptr;
  std::vector<std::byte> mine(record_bytes(n));
  auto& head = *reinterpret_cast<Header*>(mine.data());
  auto* slots = reinterpret_cast<Slot*>(mine.data() + sizeof(Header));
  WireBuffer wire;
  int device = -1;
  std::string why;
  if (source && call->recv.gpu() && source->gpu() && source->converted() &&
      call->recv.converted() && (device = call_device(*call, *source)) >= 0) {
    const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(source->bytes(), 1));
    if (acquire_wire(WireMemory::Device, device, bytes, wire, why) &&
        export_wire(wire, head.wire, why)) {
      head.ready = 1;
      for (int p = 0; p < n; ++p) {
        const Piece& piece = source->pieces()[p];
        slots[p] = {piece.offset, p == me ? 0 : piece.bytes()};
      }
    }
  }
  std::vector<std::byte> all(record_bytes(n) * static_cast<std::size_t>(n));
  if (PMPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                     static_cast<int>(mine.size()), MPI_BYTE, comm) != MPI_SUCCESS) {
    return false;  // every rank sees its own failure; the usual path then reports
  }
  for (int r = 0; r < n; ++r) {
    if (!header_of(all, r, n).ready) return false;
  }

  // Step 3: map the peers' wires, check the sizes, pack.
  std::vector<const std::byte*> sources(static_cast<std::size_t>(n), nullptr);
  int ready = 1;
  for (int p = 0; p < n && ready; ++p) {
    if (p == me) continue;
    const Slot& in = slot_of(all, p, me, n);
    if (in.bytes != call->recv.pieces()[p].bytes()) {
      ready = 0;
      break;
    }
    if (in.bytes == 0) continue;
    std::byte* mapped = import_wire(header_of(all, p, n).wire, why);
    if (!mapped) {
      ready = 0;
      break;
    }
    sources[p] = mapped + in.offset;
  }
  // The own piece: copied directly unless in place (where it stays).
  if (!in_place && call->send.pieces()[me].bytes() != call->recv.pieces()[me].bytes()) ready = 0;
  if (ready) {
    std::vector<Piece> outgoing = source->pieces();
    for (int p = 0; p < n; ++p) outgoing[p].skip = p == me;
    if (pack_batch(outgoing, wire_view(wire, Method::Device), comm) != MPI_SUCCESS) ready = 0;
  }
  int all_ready = 0;
  if (PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all_ready = 0;
  if (!all_ready) {
    if (!why.empty()) {
      runtime::log(runtime::LogLevel::Info, "same-node all-to-all not taken: %s", why.c_str());
    }
    return false;
  }

  // Step 4: unpack from the peers' wires; the own piece straight across; then the barrier.
  counters().collectives_served++;
  counters().collectives_same_node++;
  std::vector<Piece> incoming = call->recv.pieces();
  for (int p = 0; p < n; ++p) incoming[p].skip = p == me;
  const Piece* own_from = in_place ? nullptr : &call->send.pieces()[me];
  const Piece* own_to = in_place ? nullptr : &call->recv.pieces()[me];
  rc = unpack_batch_from(incoming, sources, own_from, own_to, device, comm);
  if (PMPI_Barrier(comm) != MPI_SUCCESS && rc == MPI_SUCCESS) rc = MPI_ERR_OTHER;
  return true;
}

void free_same_node_keyval() {
  std::lock_guard lock(g_keyval_mutex);
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
  g_keyval = MPI_KEYVAL_INVALID;
}

}  // namespace strider::transfer::collective
