// strider-measure: measures this machine for Strider's performance model and writes the perf
// file the runtime reads ($STRIDER_PERF_FILE or ${XDG_CACHE_HOME:-~/.cache}/strider/perf.json).
// Two ranks, one GPU each (or both on one GPU); run once per machine and rank placement.
#include <cuda_runtime.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "measure/gpu_measure.hpp"
#include "measure/gpu_object.hpp"
#include "measure/peer_measure.hpp"
#include "measure/perf_file.hpp"
#include "measure/progress.hpp"
#include "measure/transfer_measure.hpp"
#include "model/loggops.hpp"
#include "model/perf_json.hpp"
#include "runtime/machine_identity.hpp"
#include "transfer/cuda_aware.hpp"

namespace {

using namespace strider;

struct Options {
  std::string output;
  std::string from;
  bool loggp = false;
  std::int64_t loggp_block = 64;
  double max_ms = 50;
  bool quick = false;
  bool progress = true;
};

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

std::string loggops_tables(const model::PerfData& data) {
  std::string out;
  for (const auto& [method, samples] : data.loggops) {
    out += model::describe(method, model::fit_loggops(samples), samples) + "\n";
  }
  return out;
}

// --from: prints what a file holds; no MPI, no GPU.
int print_file(const Options& o) {
  std::string text;
  if (!model::read_text_file(o.from, text)) {
    std::cerr << "strider-measure: cannot read " << o.from << "\n";
    return 1;
  }
  model::PerfData data;
  std::string error;
  if (!model::from_json_text(text, data, error)) {
    std::cerr << "strider-measure: " << o.from << ": " << error << "\n";
    return 1;
  }
  std::cout << measure::summarize(data);
  if (o.loggp) {
    if (data.loggops.empty()) {
      std::cout << "no LogGOPS timings in this file (measure with --loggp)\n";
    } else {
      std::cout << "\nLogGOPS fit per method (ping-pong: half a round trip)\n"
                << loggops_tables(data);
    }
  }
  return 0;
}

// Whether every rank has `mine` (both ranks must take the same branches).
bool on_every_rank(bool mine) {
  int local = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

int measure_machine(const Options& o, int rank) {
  int gpus = 0;
  const bool has_gpu = cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0;
  if (!on_every_rank(has_gpu)) {
    std::cerr << "strider-measure: rank " << rank << (has_gpu ? ": a peer has" : ": has")
              << " no GPU\n";
    return 1;
  }
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (local == nullptr) local = std::getenv("MPI_LOCALRANKID");
  measure::check_cuda(cudaSetDevice((local ? std::atoi(local) : rank) % gpus), "cudaSetDevice");
  measure::check_cuda(cudaFree(nullptr), "cudaFree");  // creates the context before timing

  measure::RepeatLimits limits;
  limits.max_seconds = o.max_ms / 1e3;
  if (o.quick) limits = {1, 3, 10, 0.005};
  // As the runtime decides it (MPIX_Query_cuda_support or STRIDER_MPI_CUDA_AWARE), and only
  // if both ranks agree: a device ping-pong needs both.
  const bool aware = on_every_rank(transfer::mpi_cuda_aware());
  const model::Placement placement = measure::detect_placement();
  const bool same_node = placement == model::Placement::SameNode;
  const double total = 1 + measure::copies_weight() + measure::pack_tables_weight() +
                       measure::pingpong_weight() * (aware ? 2 : 1) +
                       (same_node ? measure::peer_write_weight() : 0) +
                       (o.loggp ? measure::loggops_weight(aware) : 0);
  measure::Progress progress(total, rank == 0 && o.progress);
  const measure::Advance advance = [&](double w, const std::string& what) {
    progress.advance(w, what);
  };

  model::PerfData data;
  if (rank == 0) {
    // The GPU-local measurements, one rank at a time so that nothing else shares the bus.
    data.launch_sync = measure::measure_launch_sync(limits);
    advance(1, "launch + sync");
    measure::measure_copies(data, limits, advance);
    measure::measure_pack_tables(data, limits, advance);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  model::TransferTables transfers{measure::measure_pingpong(false, limits, advance), std::nullopt,
                                  std::nullopt};
  if (aware) transfers.device = measure::measure_pingpong(true, limits, advance);
  if (same_node) transfers.peer_write = measure::measure_peer_write(limits, advance);
  data.transfers[placement] = transfers;
  if (o.loggp) data.loggops = measure::measure_loggops(aware, o.loggp_block, limits, advance);
  progress.finish();
  if (rank != 0) return 0;

  const auto identity = runtime::machine_identity();
  if (!identity) {
    std::cerr << "strider-measure: cannot identify the GPU\n";
    return 1;
  }
  data.machine = *identity;
  data.cuda_runtime = runtime::cuda_runtime_version();
  data.created = now_iso8601();
  data.tool = std::string("strider-measure ") + STRIDER_VERSION + (o.quick ? " --quick" : "");
  const std::string kept = measure::merge_other_placements(o.output, data);
  if (const std::string invalid = model::validate(data); !invalid.empty()) {
    std::cerr << "strider-measure: measurements invalid (" << invalid << "); nothing written\n";
    return 1;
  }
  measure::save_perf_file(o.output, data);
  std::cout << "strider-measure: wrote " << o.output << " (" << model::to_string(placement)
            << " ranks" << (kept.empty() ? "" : "; kept " + kept + " transfers of the old file")
            << ", " << measure::format_duration(progress.elapsed_seconds()) << ")\n"
            << measure::summarize(data);
  if (o.loggp) {
    std::cout << "\nLogGOPS fit per method (ping-pong: half a round trip)\n"
              << loggops_tables(data);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.output = model::perf_file_path([](const char* n) { return std::getenv(n); });
  CLI::App app{
      "Measures this machine for Strider's performance model: pinned copies, launch + sync, GPU\n"
      "pack and unpack times (device memory and mapped host memory) over block lengths 1 B -\n"
      "4 KiB, objects 64 B - 64 MiB, 2D and 3D shapes, two stride ratios, and ping-pongs of\n"
      "1 B - 64 MiB between the two ranks (host buffers; GPU buffers too on a CUDA-aware MPI),\n"
      "and on one node a kernel's writes of 1 B - 64 MiB into the other rank's GPU memory over\n"
      "CUDA IPC (what a same-node offer's pack pays).\n"
      "Run with exactly two ranks: mpirun -n 2 strider-measure. Ranks on one node measure the\n"
      "same-node transfers, on two nodes the remote ones; both end up in one file.\n"
      "Exit status: 0 written, 1 an error (no GPU, CUDA or MPI failure), 2 a usage error.",
      "strider-measure"};
  app.add_option("-o,--output", o.output, "perf file to write")->capture_default_str();
  app.add_flag("--loggp", o.loggp,
               "also time each transfer method's overheads and gaps, and print the fitted "
               "LogGOPS parameters with their ping-pong prediction error per size");
  app.add_option("--loggp-block", o.loggp_block,
                 "block length (bytes) of the GPU objects of the LogGOPS timings")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-ms", o.max_ms, "time budget per measured point, in ms (min 7 repetitions)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 10000.0));
  app.add_flag("--quick", o.quick, "few repetitions: a rough file in a fraction of the time");
  app.add_flag("!--no-progress", o.progress, "no progress bar");
  app.add_option("--from", o.from,
                 "print what an existing perf file holds (with --loggp: its LogGOPS fit); "
                 "measures nothing, needs no MPI launch or GPU");
  CLI11_PARSE(app, argc, argv);
  if (!o.from.empty()) return print_file(o);
  if (o.output.empty()) {
    std::cerr << "strider-measure: no output path (set HOME, XDG_CACHE_HOME or --output)\n";
    return 2;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  if (size != 2) {
    if (rank == 0) std::cerr << "strider-measure: run with exactly 2 ranks (mpirun -n 2)\n";
    status = 2;
  } else {
    try {
      status = measure_machine(o, rank);
    } catch (const std::exception& e) {
      std::cerr << "strider-measure: rank " << rank << ": " << e.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}
