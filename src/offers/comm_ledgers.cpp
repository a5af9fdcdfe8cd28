#include "offers/comm_ledgers.hpp"

#include <unordered_map>

namespace strider::offers {
namespace {

// No lock: offers are off under MPI_THREAD_MULTIPLE, and named only where they are on.
struct Book {
  std::unordered_map<MPI_Comm, std::shared_ptr<CommLedgers>> by_comm;
  // The last lookup (a burst asks about one communicator hundreds of times in a row); `cached`
  // may be null (unnamed). Dropped whenever by_comm changes.
  MPI_Comm cached_comm = MPI_COMM_NULL;
  const std::shared_ptr<CommLedgers>* cached = nullptr;
  void changed() {
    cached_comm = MPI_COMM_NULL;
    cached = nullptr;
  }
  std::uint64_t next_name = 1;  // 0 is MPI_COMM_WORLD
  int keyval = MPI_KEYVAL_INVALID;
};

Book& book() {
  static Book* b = new Book;  // outlives static destruction at exit
  return *b;
}

// MPI_Comm_free (or MPI_Finalize) on a named communicator: a later communicator with the same
// handle starts unnamed. Operations still pending on it keep its ledgers alive.
int forget(MPI_Comm comm, int, void*, void*) {
  book().by_comm.erase(comm);
  book().changed();
  return MPI_SUCCESS;
}

std::vector<int> world_ranks_of(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world(ranks.size(), -1);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  MPI_Group group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Group_translate_ranks(group, size, ranks.data(), world_group, world.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world_group);
  for (int& w : world) w = w == MPI_UNDEFINED ? -1 : w;  // a spawned process
  return world;
}

}  // namespace

void name_world() {
  Book& b = book();
  auto world = std::make_shared<CommLedgers>();
  world->name = 0;
  world->world_ranks = world_ranks_of(MPI_COMM_WORLD);
  b.by_comm[MPI_COMM_WORLD] = std::move(world);
  b.changed();
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &b.keyval, nullptr) != MPI_SUCCESS) {
    b.keyval = MPI_KEYVAL_INVALID;
  }
}

void name_comm(MPI_Comm comm) {
  Book& b = book();
  int inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return;
  // A communicator reaching into another MPI_COMM_WORLD (spawned or connected processes, which
  // agreed on offers apart) is left unnamed; every member sees that alike.
  std::vector<int> world_ranks = world_ranks_of(comm);
  for (const int w : world_ranks) {
    if (w < 0) return;
  }
  // The largest next name of the members; each member's next name then passes it. A process's
  // names only grow, so two communicators that share a process never share a name.
  std::uint64_t name = 0;
  if (PMPI_Allreduce(&b.next_name, &name, 1, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) return;
  b.next_name = name + 1;
  // Named only where it will be forgotten when freed (a reused handle must not inherit it).
  if (b.keyval == MPI_KEYVAL_INVALID ||
      PMPI_Comm_set_attr(comm, b.keyval, nullptr) != MPI_SUCCESS) {
    return;
  }
  auto ledgers = std::make_shared<CommLedgers>();
  ledgers->name = name;
  ledgers->world_ranks = std::move(world_ranks);
  b.by_comm[comm] = std::move(ledgers);
  b.changed();
}

const std::shared_ptr<CommLedgers>* ledgers_of(MPI_Comm comm) {
  Book& b = book();
  if (comm == b.cached_comm && comm != MPI_COMM_NULL) return b.cached;
  const auto it = b.by_comm.find(comm);
  b.cached_comm = comm;
  b.cached = it == b.by_comm.end() ? nullptr : &it->second;
  return b.cached;
}

void for_each_ledgers(const std::function<void(CommLedgers&)>& fn) {
  for (auto& [comm, ledgers] : book().by_comm) fn(*ledgers);
}

void forget_comms() {
  Book& b = book();
  b.by_comm.clear();
  b.changed();
  if (b.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&b.keyval);
  b.keyval = MPI_KEYVAL_INVALID;
}

}  // namespace strider::offers
