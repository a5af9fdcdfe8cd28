#!/usr/bin/env bash
# Issue 20's GPU runs (correctness first) in two device calls of under 10 minutes each; the
# second must follow the first while the machine is still warm (the build is kept there).
#   PHASE=tests: build (sm_90) this tree and, from .before/ (a `git archive` of the commit to
#     compare with, git-ignored), that tree's libstrider.so alone; the GPU tests (the 4-rank
#     virtual-node runs, label vnodes, included) into ctest-gpu.txt.
#   PHASE=bench: with two ranks, Strider preloaded:
#     - reductions and broadcasts per memory kind (bench/coll_kinds), this tree's library
#       against .before's, same run: reduce_before.csv / reduce_after.csv;
#     - the suite's memory layouts for item 3 (scripts/gpu-coll-kinds.sh, touch host and
#       device, same-node on and off): coll_kinds_all.csv;
#     - the cross-GPU block rule (STRIDER_DIRECT_MIN_BLOCK): bench/pingpong (writes in place,
#       blocks 1-512 B) and bench/halo's Neighbor_alltoallw (reads in place) with the rule at
#       its default (4 B), at 1 B and at 256 B (the rule before it was measured):
#       minblock_*.csv.
# Results under $OUT (default ./gpu-out), at most 8 files (CSV archived past that).
# Usage: PHASE=tests|bench scripts/gpu-correctness-targets.sh
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/correctness-$PHASE.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } | tee "$log"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
lib=$PWD/$build/src/libstrider.so

if [[ $PHASE == tests ]]; then
  gpu_build correctness || exit 1
  echo "== built in $((SECONDS - start)) s" | tee -a "$log"
  gpu_build_before "$log"
  gpu_tests "$log" 420
  tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
  exit 0
fi

run_tail=30  # run (gpu-build-env.sh): the last 30 lines of each run into the log

ck=$build/bench/strider_bench_coll_kinds
for which in before after; do
  l=$lib
  [[ $which == before ]] && l=$PWD/$before/src/libstrider.so
  [[ -e $l ]] || { echo "== no $which library" | tee -a "$log"; continue; }
  run "reductions, $which" 100 LD_PRELOAD="$l" -- $ck --colls allreduce,bcast \
    --kinds device,device managed,managed device,registered --touch device \
    --counts 1,1024,65530 --time-limit 80 --out "$OUT/reduce_$which.csv"
done
OUT=$OUT/extras BUDGET=200 scripts/gpu-coll-kinds.sh $build >/dev/null 2>&1
cp "$OUT/extras/coll_kinds_all.csv" "$OUT/" 2>/dev/null
tail -40 "$OUT/extras/gpu-coll-kinds.txt" >>"$log" 2>/dev/null
if ((gpus >= 2)); then
  for block in default 1 256; do
    envs=(LD_PRELOAD="$lib")
    [[ $block != default ]] && envs+=(STRIDER_DIRECT_MIN_BLOCK=$block)
    run "pingpong, cross-GPU rule $block" 120 "${envs[@]}" -- $build/bench/strider_bench_pingpong \
      --budget-ms 150 --out "$OUT/minblock_pingpong_$block.csv"
    run "halo alltoallw, cross-GPU rule $block" 90 "${envs[@]}" -- $build/bench/strider_bench_halo \
      --n 64 256 --iters 10 --forms alltoallw --csv "$OUT/minblock_halo_$block.csv"
  done
fi
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
if (($(find "$OUT" -maxdepth 1 -type f | wc -l) > 8)); then
  (cd "$OUT" && tar czf results.tar.gz ./*.csv && rm -f ./*.csv)
fi
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
