#include "calls/lifecycle.hpp"

#include <cstdio>

#include "calls/persistent_requests.hpp"
#include "calls/progress_thread.hpp"
#include "collective/same_node.hpp"
#include "collective/wire_types.hpp"
#include "ipc/wire_buffers.hpp"
#include "ipc/wire_ipc.hpp"
#include "offers/protocol.hpp"
#include "runtime/log.hpp"
#include "runtime/mpi_library.hpp"
#include "runtime/profile.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_shape.hpp"

namespace strider::calls {

bool on_init() {
  // Before any handle is used: a build for another ABI would misread every one of them.
  const runtime::MpiLibrary& mpi = runtime::mpi_library();
  const char* library = transfer::mpi_library_file();
  if (const char* why = runtime::abi_mismatch(runtime::built_abi(), mpi, library)) {
    runtime::log(runtime::LogLevel::Warn,
                 "Strider is a pass-through for this process: %s (\"%s\", %s)", why,
                 mpi.name.c_str(), *library ? library : "library unknown");
    transfer::become_pass_through();
    return false;
  }
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  transfer::requests().set_single_caller(provided != MPI_THREAD_MULTIPLE);
  transfer::start();
  offers::start();
  start_progress_thread(provided);
  runtime::log(runtime::LogLevel::Info,
               "Strider active on %s %d.%d.%d (\"%s\", %s), built for the %s ABI; host engine %s",
               runtime::to_string(mpi.family), mpi.major, mpi.minor, mpi.patch, mpi.name.c_str(),
               *library ? library : "library unknown", runtime::built_abi(),
               runtime::to_string(transfer::settings().host_engine));
  return true;
}

void on_finalize() {
  stop_progress_thread();
  if (runtime::profiling()) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    runtime::print_profile(rank);
    const transfer::Counters& c = transfer::counters();
    std::fprintf(stderr,
                 "[strider %d] profile offers made %llu, taken %llu, used %llu, in place %llu\n",
                 rank, static_cast<unsigned long long>(c.offers_made.load()),
                 static_cast<unsigned long long>(c.offers_taken.load()),
                 static_cast<unsigned long long>(c.offers_used.load()),
                 static_cast<unsigned long long>(c.offers_in_place.load()));
    const auto n = [](const std::atomic<std::uint64_t>& v) {
      return static_cast<unsigned long long>(v.load());
    };
    std::fprintf(stderr,
                 "[strider %d] profile packs gpu %llu in %llu waves, staged %llu; unpacks gpu "
                 "%llu in %llu waves, staged %llu, early %llu; transfers one-shot %llu, staged "
                 "%llu, device %llu, host %llu; sends deferred %llu\n",
                 rank, n(c.packs_gpu), n(c.pack_waves), n(c.packs_staged), n(c.unpacks_gpu),
                 n(c.unpack_waves), n(c.unpacks_staged), n(c.receives_early),
                 n(c.transfers_oneshot), n(c.transfers_staged), n(c.transfers_device),
                 n(c.transfers_host), n(c.sends_deferred));
  }
  // Operations whose requests the application freed finish before the MPI goes away.
  transfer::requests().drain_orphans();
  forget_persistent();
  ipc::trim_pools();
  offers::stop();
  collective::free_wire_types();
  collective::free_same_node_keyval();
  ipc::close_wire_imports();
  transfer::free_holed_types();
  transfer::stop();
}

}  // namespace strider::calls
