// What each commit stage costs per entry, in process and without MPI: building the IR of an
// hindexed type of MPI_INT-like 4-byte elements, the decoder's whole-tree checks (size, span,
// depth), canonicalization, lowering, and freeing. The first repetition runs on fresh memory (page
// faults), the later ones mostly on memory the allocator kept.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "canon/canonicalize.hpp"
#include "ir/constructors.hpp"

namespace {

using namespace strider;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Random lengths 1..8 and gaps 0..7 elements, or runs of 256 blocks of 4 with a random jump.
void blocks(long n, bool runs, std::vector<std::int64_t>& len, std::vector<std::int64_t>& disp) {
  std::mt19937 rng(1);
  len.assign(static_cast<std::size_t>(n), 0);
  disp.assign(static_cast<std::size_t>(n), 0);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < len.size(); ++i) {
    if (runs) {
      if (i > 0 && i % 256 == 0) at += 1 + rng() % 64;
      len[i] = 4;
      disp[i] = 4 * at;
      at += 8;
    } else {
      len[i] = 1 + rng() % 8;
      disp[i] = 4 * at;
      at += len[i] + rng() % 8;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::printf("case,entries,rep,build_ns,checks_ns,canon_ns,lower_ns,free_ns,pieces (per entry)\n");
  for (bool runs : {false, true}) {
    for (long n : {1000L, 10000L, 100000L, 1000000L}) {
      std::vector<std::int64_t> len, disp;
      blocks(n, runs, len, disp);
      for (int rep = 0; rep < reps; ++rep) {
        const double t0 = now_us();
        ir::Node node = ir::hindexed(len, disp, {ir::Node::dense(0, 4), 4});
        const double t1 = now_us();
        volatile std::int64_t sink =
            ir::packed_size(node) + ir::true_span(node).hi + ir::depth(node);
        (void)sink;
        const double t2 = now_us();
        ir::Node canonical = canon::canonicalize(std::move(node));
        const double t3 = now_us();
        auto form = canon::lower(canonical);
        const double t4 = now_us();
        const std::size_t pieces = form ? form->pieces.size() : 0;
        form.reset();
        canonical = ir::Node::empty();
        const double t5 = now_us();
        const double k = 1e3 / static_cast<double>(n);
        std::printf("%s,%ld,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%zu\n", runs ? "runs256" : "random", n, rep,
                    (t1 - t0) * k, (t2 - t1) * k, (t3 - t2) * k, (t4 - t3) * k, (t5 - t4) * k,
                    pieces);
      }
    }
  }
  return 0;
}
