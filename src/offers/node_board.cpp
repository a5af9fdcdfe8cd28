#include "offers/node_board.hpp"

#include <atomic>
#include <cstring>
#include <new>

#include "runtime/node_comm.hpp"

namespace strider::offers {
namespace {

struct Header {
  std::int64_t slots = 0;
  std::int64_t landing_bytes = 0;
  std::int64_t node_size = 0;
};

std::int64_t tally_bytes(int node_size) {
  return static_cast<std::int64_t>(node_size) * NodeBoard::kTallyBuckets *
         static_cast<std::int64_t>(sizeof(std::uint64_t));
}

std::int64_t region_bytes(int node_size, int slots, std::int64_t landing_bytes) {
  return static_cast<std::int64_t>(sizeof(Header)) + tally_bytes(node_size) +
         slots * (static_cast<std::int64_t>(sizeof(Slot)) + landing_bytes);
}

// A region's parts: header, tallies, slots, landing areas.
std::uint64_t* tallies_of(std::byte* base) {
  return reinterpret_cast<std::uint64_t*>(base + sizeof(Header));
}
std::byte* slots_of(std::byte* base, std::int64_t node_size) {
  return base + sizeof(Header) + tally_bytes(static_cast<int>(node_size));
}

}  // namespace

bool NodeBoard::create(int slots, std::int64_t landing_bytes, std::string& why) {
  int world_rank = 0, world_size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (runtime::node_communicator(MPI_COMM_WORLD, &node_) != MPI_SUCCESS) {
    why = "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed";
    return false;
  }
  int node_size = 0;
  PMPI_Comm_rank(node_, &my_node_rank_);
  PMPI_Comm_size(node_, &node_size);
  std::vector<int> world_of_node(static_cast<std::size_t>(node_size));
  PMPI_Allgather(&world_rank, 1, MPI_INT, world_of_node.data(), 1, MPI_INT, node_);
  node_rank_of_world_.assign(static_cast<std::size_t>(world_size), -1);
  for (int n = 0; n < node_size; ++n) node_rank_of_world_[world_of_node[n]] = n;

  node_size_ = node_size;
  next_open_ = 0;
  next_take_.assign(static_cast<std::size_t>(node_size), 0);
  const std::int64_t bytes = region_bytes(node_size, slots, landing_bytes);
  void* base = nullptr;
  // Every process keeps its own region (no contiguity needed across processes).
  MPI_Info info = MPI_INFO_NULL;
  PMPI_Info_create(&info);
  PMPI_Info_set(info, "alloc_shared_noncontig", "true");
  const int rc =
      PMPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, node_, &base, &window_);
  PMPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    window_ = MPI_WIN_NULL;
    PMPI_Comm_free(&node_);
    why = "MPI_Win_allocate_shared failed";
    return false;
  }
  auto* mine = static_cast<std::byte*>(base);
  new (mine) Header{slots, landing_bytes, node_size};
  std::memset(tallies_of(mine), 0, static_cast<std::size_t>(tally_bytes(node_size)));
  auto* first = reinterpret_cast<Slot*>(slots_of(mine, node_size));
  for (int i = 0; i < slots; ++i) new (first + i) Slot{};
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
  PMPI_Win_sync(window_);
  PMPI_Barrier(node_);  // every header written before anyone reads it
  PMPI_Win_sync(window_);

  regions_.resize(static_cast<std::size_t>(node_size));
  for (int n = 0; n < node_size; ++n) {
    MPI_Aint size = 0;
    int unit = 0;
    void* peer = nullptr;
    PMPI_Win_shared_query(window_, n, &size, &unit, &peer);
    Region& r = regions_[n];
    r.base = static_cast<std::byte*>(peer);
    if (r.base != nullptr && size >= static_cast<MPI_Aint>(sizeof(Header))) {
      const auto* h = reinterpret_cast<const Header*>(r.base);
      r.slots = static_cast<int>(h->slots);
      r.landing_bytes = h->landing_bytes;
      r.tallies = h->node_size == node_size ? tallies_of(r.base) : nullptr;
    }
  }
  return true;
}

void NodeBoard::destroy() {
  if (window_ == MPI_WIN_NULL) return;
  PMPI_Win_unlock_all(window_);
  PMPI_Win_free(&window_);
  PMPI_Comm_free(&node_);
  regions_.clear();
}

int NodeBoard::node_rank(int world_rank) const {
  if (world_rank < 0 || world_rank >= static_cast<int>(node_rank_of_world_.size())) return -1;
  return node_rank_of_world_[world_rank];
}

Slots NodeBoard::slots(int node_rank) const {
  const Region& r = regions_[node_rank];
  return Slots(reinterpret_cast<Slot*>(slots_of(r.base, node_size_)), r.slots);
}

int NodeBoard::open_offer(const Terms& terms) {
  Slots own = slots(my_node_rank_);
  const int slot = own.open(terms, next_open_);
  if (slot >= 0) next_open_ = (slot + 1) % own.count();
  return slot;
}

std::optional<Claim> NodeBoard::take_offer(int node_rank, const MessageId& message,
                                           std::int64_t bytes, bool& offered) {
  Slots theirs = slots(node_rank);
  auto claim = theirs.take(message, bytes, offered, next_take_[node_rank]);
  if (claim) next_take_[node_rank] = (claim->index_in_board + 1) % theirs.count();
  return claim;
}

std::byte* NodeBoard::landing(int node_rank, int slot) const {
  const Region& r = regions_[node_rank];
  if (r.landing_bytes == 0) return nullptr;
  return slots_of(r.base, node_size_) + r.slots * sizeof(Slot) + slot * r.landing_bytes;
}

std::int64_t NodeBoard::landing_bytes(int node_rank) const {
  return regions_[node_rank].landing_bytes;
}

// A fence, not MPI_Win_sync: the regions are ordinary shared memory, coherent between the
// node's processes, and every word two processes race on is an atomic (board.hpp); what is left
// is to order this process's plain loads and stores around them, which a full fence (also a
// compiler barrier) does without a call into the MPI.
void NodeBoard::sync() const { std::atomic_thread_fence(std::memory_order_seq_cst); }

std::uint64_t* NodeBoard::tally(int owner, int sender, std::uint64_t stream_hash) const {
  const Region& r = regions_[owner];
  if (r.tallies == nullptr || sender < 0 || sender >= node_size_) return nullptr;
  return r.tallies + sender * kTallyBuckets + stream_hash % kTallyBuckets;
}

void NodeBoard::count_offer(int sender, std::uint64_t stream_hash) const {
  // One writer (this process): a relaxed increment that readers see whole.
  if (std::uint64_t* t = tally(my_node_rank_, sender, stream_hash)) {
    std::atomic_ref<std::uint64_t>(*t).fetch_add(1, std::memory_order_relaxed);
  }
}

std::uint64_t NodeBoard::offers_to_me(int receiver, std::uint64_t stream_hash) const {
  std::uint64_t* t = tally(receiver, my_node_rank_, stream_hash);
  return t ? std::atomic_ref<std::uint64_t>(*t).load(std::memory_order_relaxed) : 0;
}

}  // namespace strider::offers
