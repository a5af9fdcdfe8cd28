#!/usr/bin/env bash
# Issue 22 (renovation, no behaviour change) in one device call of under 10 minutes: build this
# tree (sm_90) and, from .before/ (a `git archive` of the commit before the renovation,
# git-ignored), that tree's libstrider.so alone; the GPU tests into ctest-gpu.txt; then
# bench/halo (every form, per-rank 64 and 128, STRIDER_SAME_NODE on) and bench/pingpong with
# two ranks, before and after in turn, twice (before, after, before, after), so that the
# difference can be read against the run-to-run spread: halo_{before,after}_{1,2}.csv, the
# halo's point-to-point forms with STRIDER_SAME_NODE=0 (halo_nooffers_*), and
# pingpong_{before,after}_{1,2}.csv (archived together in bench.tar.gz).
# BENCHES (default "halo nooffers pingpong") picks the benchmarks.
# Usage: [BENCHES=...] scripts/gpu-renovation.sh
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/renovation.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } | tee "$log"
gpu_build renovation || exit 1
echo "== built in $((SECONDS - start)) s" | tee -a "$log"
gpu_build_before "$log"
gpu_tests "$log" 300
run_tail=12
mkdir -p "$OUT/bench"
for round in 1 2; do
  for which in before after; do
    l=$PWD/$build/src/libstrider.so
    [[ $which == before ]] && l=$PWD/$before/src/libstrider.so
    [[ -e $l ]] || continue
    benches=" ${BENCHES:-halo nooffers pingpong} "
    [[ $benches == *" halo "* ]] &&
      run "halo, $which $round" 90 LD_PRELOAD="$l" -- $build/bench/strider_bench_halo --n 64 128 \
      --iters 10 --csv "$OUT/bench/halo_${which}_$round.csv"
    [[ $benches == *" nooffers "* ]] &&
      run "halo without offers, $which $round" 90 LD_PRELOAD="$l" STRIDER_SAME_NODE=0 -- \
      $build/bench/strider_bench_halo --n 64 128 --iters 10 --forms isend,pack,expert \
      --csv "$OUT/bench/halo_nooffers_${which}_$round.csv"
    [[ $benches == *" pingpong "* ]] &&
      run "pingpong, $which $round" 60 LD_PRELOAD="$l" -- $build/bench/strider_bench_pingpong \
      --budget-ms 100 --out "$OUT/bench/pingpong_${which}_$round.csv"
  done
done
tar czf "$OUT/bench.tar.gz" -C "$OUT" bench && rm -rf "$OUT/bench"
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
