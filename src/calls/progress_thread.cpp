#include "calls/progress_thread.hpp"

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "calls/deferred_sends.hpp"
#include "runtime/log.hpp"
#include "runtime/mpi_library.hpp"
#include "transfer/settings.hpp"

namespace strider::calls {
namespace {

using Clock = std::chrono::steady_clock;

// After it last saw sends queued the thread looks again every quiet spell for this long, then
// sleeps until a send is queued: a burst loop wakes no one, and an idle process costs nothing.
constexpr auto kAwakeAfterWork = std::chrono::milliseconds(10);

struct Progress {
  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
  bool stop = false;
  bool running = false;
  std::atomic<bool> asleep{false};
};

Progress& progress() {
  static Progress* p = new Progress;  // never destroyed: a thread may outlive static destruction
  return *p;
}

bool wanted() {
  const transfer::Settings& s = transfer::settings();
  return deferral_built() && !s.disabled && s.bursts && s.progress_us > 0;
}

void run(std::chrono::nanoseconds quiet) {
  Progress& p = progress();
  auto last_work = Clock::now();
  std::unique_lock lock(p.mutex);
  while (!p.stop) {
    lock.unlock();
    if (sends_queued()) last_work = Clock::now();
    const std::chrono::nanoseconds due = flush_if_quiet(quiet);
    const bool awake = Clock::now() - last_work < kAwakeAfterWork;
    lock.lock();
    if (p.stop) break;
    if (due.count() > 0 || awake) {
      p.wake.wait_for(lock, due.count() > 0 ? due : quiet);
      continue;
    }
    // Asleep, then a last look: a send queued in between saw `asleep` or is seen here.
    p.asleep.store(true, std::memory_order_seq_cst);
    if (sends_queued()) {
      p.asleep.store(false);
      continue;
    }
    p.wake.wait(lock, [&p] { return p.stop || !p.asleep.load(); });
  }
}

// Whether the MPI's MPI_THREAD_SERIALIZED costs what MPI_THREAD_SINGLE does, so that Strider may
// ask for it on the application's behalf: MPICH takes its locks under MPI_THREAD_MULTIPLE only.
// Open MPI 4.1 is not asked: at any level above MPI_THREAD_SINGLE it takes its thread-safe
// request path, under which its MPI_Waitall hangs on a truncated receive (FUNNELED and
// SERIALIZED as MULTIPLE, without Strider: tests/mpi/p2p_test.cpp, TruncationIsReported, 4
// ranks, Open MPI 4.1.4). There the thread runs where the application asks for SERIALIZED or
// MULTIPLE itself.
bool serialized_costs_nothing() {
  return runtime::mpi_library().family == runtime::MpiFamily::Mpich;
}

// Whether the process may run on more than one CPU. A rank bound to one core (as mpirun binds
// by default) would run the thread only by taking that core from the application (on H100
// hosts so bound, a halo computing 1 ms between posting and completing gained nothing from the
// thread, and one run of its Waitany loop was 40% slower). There the sends wait for the next MPI
// call (B2).
bool spare_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return true;
  return CPU_COUNT(&set) > 1;
}

}  // namespace

int thread_level_to_ask(int required) {
  return wanted() && serialized_costs_nothing() && spare_cpu() && required < MPI_THREAD_SERIALIZED
             ? MPI_THREAD_SERIALIZED
             : required;
}

void start_progress_thread(int provided) {
  Progress& p = progress();
  if (!wanted() || provided < MPI_THREAD_SERIALIZED || p.running) return;
  if (!spare_cpu()) {
    runtime::log(runtime::LogLevel::Info,
                 "no progress thread: this process may run on one CPU only (deferred sends start "
                 "at its next MPI call)");
    return;
  }
  const std::chrono::microseconds quiet(transfer::settings().progress_us);
  progress_thread_running(true);
  p.stop = false;
  p.running = true;
  p.thread = std::thread(run, std::chrono::duration_cast<std::chrono::nanoseconds>(quiet));
  runtime::log(runtime::LogLevel::Debug,
               "progress thread on: deferred sends start after %d us without an MPI call",
               transfer::settings().progress_us);
}

void stop_progress_thread() {
  Progress& p = progress();
  if (!p.running) return;
  {
    std::lock_guard lock(p.mutex);
    p.stop = true;
    p.asleep.store(false);
  }
  p.wake.notify_one();
  p.thread.join();
  p.running = false;
  progress_thread_running(false);
}

void progress_posted() {
  Progress& p = progress();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!p.asleep.load(std::memory_order_seq_cst)) return;
  {
    std::lock_guard lock(p.mutex);
    p.asleep.store(false);
  }
  p.wake.notify_one();
}

}  // namespace strider::calls
