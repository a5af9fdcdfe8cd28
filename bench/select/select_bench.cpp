// bench/select: what the runtime's method selection costs per call (CPU only: no MPI, no GPU).
// interpose/wire.cpp's method_for does, per GPU send or receive under `auto`:
//   model::object_shape(plan shape, count) + Selector::choose(shape, placement, aware, side)
// which is a per-thread memo lookup once a (shape, placement, side) has been seen. Measured:
//   hit:  that steady state, cycling a working set of 64 distinct (element shape, count) pairs
//         whose choices are all memoized (both sides, so 128 memo entries);
//   miss: the work behind a memo miss, model::predict + model::choose, no memo.
// Time: steady_clock around batches of 1000 calls; median, p10 and p90 of ns per call over the
// batches, after warm-up.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "model/cost_model.hpp"
#include "model/object_shape.hpp"
#include "model/selector.hpp"

namespace {

using namespace strider;

constexpr int kCallsPerBatch = 1000;
constexpr int kBatches = 400;  // >= 200 batches per figure
constexpr int kWarmupBatches = 50;
constexpr std::size_t kWorkingSet = 64;

struct Options {
  std::string perf;  // empty: built-in defaults
  std::string out;   // empty: no CSV
};

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  CLI::App app{
      "Per-call cost of Strider's transfer-method selection on this CPU: object_shape +\n"
      "Selector::choose on a memo hit (64 distinct objects cycled, both sides), and predict +\n"
      "choose (what a memo miss adds). Median, p10, p90 of ns per call over " +
          std::to_string(kBatches) + " batches of " + std::to_string(kCallsPerBatch) +
          " calls.\nExit status: 0 done; 2 a usage error or an unusable --perf file.",
      "strider_bench_select"};
  app.add_option("--perf", opt.perf,
                 "the perf file to load (strider-measure's JSON); default: built-in defaults");
  app.add_option("--out", opt.out, "also write the figures as CSV");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 1 : 2;
  }
  return 0;
}

// One object as the runtime sees it: the plan's element shape and the call's count.
struct Object {
  model::ElementShape element;
  std::int64_t count = 1;
};

// 64 distinct objects spread over the shapes the runtime meets: 2D and 3D strided elements,
// block lists, contiguous elements in strided and dense arrays, at several sizes and counts.
std::vector<Object> working_set() {
  std::vector<Object> out;
  const std::int64_t blocks[] = {1, 4, 16, 64, 256, 1024, 4096, 12};
  const std::int64_t counts[] = {1, 7, 64, 1000};
  for (std::int64_t block : blocks) {
    for (std::int64_t count : counts) {
      model::ElementShape e;
      const std::size_t kind = out.size() % 4;
      const std::int64_t n = 256 + static_cast<std::int64_t>(out.size());  // blocks per element
      e.block = block;
      e.stride = block * (kind == 1 ? 8 : 2);
      e.size = block * n;
      e.extent = e.stride * n;
      e.dims = kind == 1 ? 3 : 2;
      e.irregular = kind == 2;
      if (kind == 3) {  // one dense block per element: contiguous or strided by the extent
        e.size = block * 16;
        e.extent = count % 2 == 0 ? e.size : 2 * e.size;
        e.stride = e.extent;
        e.dims = 1;
      }
      out.push_back({e, count});
    }
  }
  // The loops above give 8 x 4 = 32; a second pass with other counts fills the set to 64.
  for (std::size_t i = 0; out.size() < kWorkingSet; ++i) {
    Object o = out[i];
    o.count += 3;
    out.push_back(o);
  }
  return out;
}

// Distinct object shapes (memo keys per side) among `objects`.
std::size_t distinct_shapes(const std::vector<Object>& objects) {
  std::vector<model::ObjectShape> seen;
  for (const Object& o : objects) {
    const model::ObjectShape s = model::object_shape(o.element, o.count);
    if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
  }
  return seen.size();
}

struct Figures {
  double median = 0, p10 = 0, p90 = 0;  // ns per call
};

// ns per call of `batch` (which makes kCallsPerBatch calls), over kBatches after warm-up.
template <typename Batch>
Figures time_batches(Batch&& batch) {
  for (int i = 0; i < kWarmupBatches; ++i) batch();
  std::vector<double> per_call;
  per_call.reserve(kBatches);
  for (int i = 0; i < kBatches; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    batch();
    const auto t1 = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kCallsPerBatch);
  }
  std::sort(per_call.begin(), per_call.end());
  auto at = [&per_call](double q) {
    return per_call[static_cast<std::size_t>(q * static_cast<double>(per_call.size() - 1) + 0.5)];
  };
  return {at(0.5), at(0.1), at(0.9)};
}

// Accumulates every choice so the compiler cannot drop the calls.
volatile std::uint64_t g_sink = 0;

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;

  model::LoadedModel loaded =
      opt.perf.empty() ? model::LoadedModel{model::built_in_defaults(), "built-in defaults", ""}
                       : model::load_model(opt.perf, std::nullopt);
  if (!loaded.warning.empty()) {
    std::fprintf(stderr, "select: %s\n", loaded.warning.c_str());
    return 2;
  }
  const std::string source = loaded.source;
  const model::PerfData data = loaded.data;  // the miss figure works on its own copy
  model::Selector selector([&loaded] { return loaded; }, nullptr);

  const std::vector<Object> objects = working_set();
  const model::Placement placement = model::Placement::SameNode;
  const bool aware = false;  // the GPU box's MPI; both figures are the same code path either way

  // Memo hit: what method_for does per call once the working set's choices are memoized.
  // Each object is asked for on both sides: the side flips once per pass over the set.
  std::size_t next = 0;
  std::uint64_t passes = 0;
  auto advance = [&] {
    if (++next == objects.size()) {
      next = 0;
      ++passes;
    }
  };
  const Figures hit = time_batches([&] {
    std::uint64_t acc = 0;
    for (int i = 0; i < kCallsPerBatch; ++i) {
      const Object& o = objects[next];
      const bool receive = (passes & 1) != 0;
      advance();
      const model::ObjectShape shape = model::object_shape(o.element, o.count);
      acc += static_cast<std::uint64_t>(selector.choose(shape, placement, aware, receive));
    }
    g_sink = g_sink + acc;
  });

  // Miss: the prediction and choice a memo miss computes (without the memo's insertion).
  const Figures miss = time_batches([&] {
    std::uint64_t acc = 0;
    for (int i = 0; i < kCallsPerBatch; ++i) {
      const Object& o = objects[next];
      const bool receive = (passes & 1) != 0;
      advance();
      const model::ObjectShape shape = model::object_shape(o.element, o.count);
      const model::Prediction p = model::predict(data, shape, placement, aware);
      acc += static_cast<std::uint64_t>(model::choose(p, receive));
    }
    g_sink = g_sink + acc;
  });

  std::printf(
      "model: %s; working set %zu objects (%zu distinct shapes) x 2 sides; %d batches "
      "of %d calls\n",
      source.c_str(), objects.size(), distinct_shapes(objects), kBatches, kCallsPerBatch);
  std::printf("  memo hit (object_shape + Selector::choose): median %.1f ns, p10 %.1f, p90 %.1f\n",
              hit.median, hit.p10, hit.p90);
  std::printf("  miss (object_shape + predict + choose):     median %.1f ns, p10 %.1f, p90 %.1f\n",
              miss.median, miss.p10, miss.p90);
  std::printf("selection: median %.1f ns per call (memo hit), %.1f ns (miss)\n", hit.median,
              miss.median);

  if (!opt.out.empty()) {
    std::ofstream csv(opt.out);
    csv << "case,model,median_ns,p10_ns,p90_ns,batches,calls_per_batch,working_set\n";
    for (const auto& [name, f] : {std::pair{"memo_hit", hit}, std::pair{"miss", miss}}) {
      csv << name << ',' << '"' << source << '"' << ',' << f.median << ',' << f.p10 << ',' << f.p90
          << ',' << kBatches << ',' << kCallsPerBatch << ',' << objects.size() << '\n';
    }
    if (!csv) {
      std::perror(opt.out.c_str());
      return 2;
    }
  }
  return 0;
}
