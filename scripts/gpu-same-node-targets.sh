#!/usr/bin/env bash
# One call on a GPU machine for issue 12's targets (same-node zero-copy): build (sm_90), the GPU
# tests (with the 4-rank virtual-node runs, label vnodes, whose CPU runs follow them), then with
# two ranks and Strider preloaded, each run with STRIDER_SAME_NODE=1 and =0:
#   - bench/pingpong, TEMPI's 2D objects (target: 1 MiB <= 25 us per half round trip on two GPUs);
#   - bench/halo at per-rank 256^3, forms (i) isend, (ii) pack, (iii) alltoallw, (iv) expert
#     (target: (i)-(iii) <= 3x the NVLink+HBM floor);
#   - with two GPUs, also both ranks on one GPU (CUDA_VISIBLE_DEVICES=0): pingpong 1 KiB (target:
#     <= 2x one launch + sync);
#   - bench/gpu_handoff on one GPU (and on two): what handing GPU work from one process to the
#     other costs beside one process's launch + sync (the floor under the 1 KiB target);
#   - strider-measure --quick (MEASURE=0 skips it) into $OUT/perf.json, with its writes into peer
#     memory over CUDA IPC, and strider-explain's offer verdict from that file.
# With MPS=1 everything after the GPU tests runs under an MPS control daemon (the processes
# sharing a GPU share one MPS server instead of time-slicing it), first the point-to-point GPU
# tests again (ctest-mps.txt); the same-node pingpong then runs twice, with offers written in
# place and with STRIDER_SAME_NODE_DIRECT=0 (landing buffers: pingpong_landing.csv).
# Results under $OUT (default ./gpu-out): ctest-gpu.txt, targets.txt (the log), perf.json,
# pingpong_*.csv, halo_*.csv, handoff_*.csv (archived into results.tar.gz past 8 files),
# extras.tar.gz (build logs).
# Usage: scripts/gpu-same-node-targets.sh   Env: OUT, TEST_TIMEOUT (s, 300), PINGPONG_ARGS,
#        HALO_ARGS, HALO_DIRECT_ARGS (the run with in-place reads off), MEASURE=0 (no
#        strider-measure), BENCH=0 (no pingpong or halo: fits one call with the tests and the
#        measurement), HOST=0 (no runs with STRIDER_SAME_NODE=0), MPS=1
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/targets.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } | tee "$log"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "== $gpus GPU(s)" | tee -a "$log"
gpu_build targets || exit 1
echo "== built in $((SECONDS - start)) s" | tee -a "$log"
gpu_tests "$log" 300
# Virtual nodes (STRIDER_TEST_NODE_SIZE=2 on 4 ranks: same-node and remote peers in one call):
# the GPU runs were among the GPU tests above (label vnodes), their CPU runs follow.
echo "== virtual nodes, CPU runs ($((SECONDS - start)) s)" | tee -a "$log"
timeout 200 ctest --test-dir $build -L vnodes -LE gpu --output-on-failure \
  >"$OUT/extras/ctest-vnodes.txt" 2>&1
grep -E "tests passed|\*\*\*Failed|Timeout" "$OUT/extras/ctest-vnodes.txt" | tail -20 | tee -a "$log"
if [[ ${MPS:-0} == 1 ]]; then
  start_mps || exit 1
  echo "== MPS on: the point-to-point GPU tests again ($((SECONDS - start)) s)" | tee -a "$log"
  timeout 200 ctest --test-dir $build -R "^gpu_(p2p|in_place_write)" --output-on-failure -j 2 \
    >"$OUT/ctest-mps.txt" 2>&1
  grep -E "tests passed|\*\*\*Failed|Timeout" "$OUT/ctest-mps.txt" | tail -20 | tee -a "$log"
fi
lib=$build/src/libstrider.so
read -ra pingpong_args <<<"${PINGPONG_ARGS:---budget-ms 800}"
read -ra halo_args <<<"${HALO_ARGS:---n 256 --iters 5 --forms isend,pack,alltoallw,expert}"
read -ra halo_direct_args <<<"${HALO_DIRECT_ARGS:---n 256 --iters 5 --forms alltoallw,expert}"

# The hand-over of GPU work between two processes: on one GPU, and on two where there are two.
run "gpu_handoff, both ranks on one GPU" 120 LD_PRELOAD="$lib" CUDA_VISIBLE_DEVICES=0 -- \
  $build/bench/strider_bench_gpu_handoff --csv "$OUT/handoff_1gpu.csv"
if ((gpus >= 2)); then
  run "gpu_handoff, one GPU per rank" 120 LD_PRELOAD="$lib" -- \
    $build/bench/strider_bench_gpu_handoff --csv "$OUT/handoff_2gpu.csv"
fi
if [[ ${MEASURE:-1} == 1 ]]; then
  echo "== strider-measure --quick ($((SECONDS - start)) s)" | tee -a "$log"
  timeout 300 mpirun.openmpi --allow-run-as-root -n 2 $build/tools/strider-measure --quick \
    --no-progress -o "$OUT/perf.json" 2>&1 | tail -12 | tee -a "$log"
  STRIDER_MPI_CUDA_AWARE=0 timeout 60 mpirun.openmpi --allow-run-as-root -n 1 \
    $build/tools/strider-explain --perf-file "$OUT/perf.json" --count 2 --peer same-node \
    "vector(1024,512,1024,byte)" 2>&1 | tail -12 | tee -a "$log"
fi
for mode in $([[ ${BENCH:-1} == 1 ]] && echo 1 && [[ ${HOST:-1} == 1 ]] && echo 0); do
  tag=$([[ $mode == 1 ]] && echo same_node || echo host)
  run "pingpong, STRIDER_SAME_NODE=$mode" 200 LD_PRELOAD="$lib" STRIDER_SAME_NODE=$mode -- \
    $build/bench/strider_bench_pingpong "${pingpong_args[@]}" --out "$OUT/pingpong_$tag.csv"
  run "halo, STRIDER_SAME_NODE=$mode" 240 LD_PRELOAD="$lib" STRIDER_SAME_NODE=$mode -- \
    $build/bench/strider_bench_halo "${halo_args[@]}" --csv "$OUT/halo_$tag.csv"
  if [[ $mode == 1 ]]; then
    # Offers through landing buffers (no writes in place), and the same-node collectives with
    # every piece through wires (no in-place reads).
    run "pingpong, STRIDER_SAME_NODE_DIRECT=0" 200 LD_PRELOAD="$lib" STRIDER_SAME_NODE=1 \
      STRIDER_SAME_NODE_DIRECT=0 -- $build/bench/strider_bench_pingpong "${pingpong_args[@]}" \
      --out "$OUT/pingpong_landing.csv"
    run "halo alltoallw, STRIDER_SAME_NODE_DIRECT=0" 240 LD_PRELOAD="$lib" STRIDER_SAME_NODE=1 \
      STRIDER_SAME_NODE_DIRECT=0 -- $build/bench/strider_bench_halo "${halo_direct_args[@]}" \
      --csv "$OUT/halo_wires.csv"
  fi
  if ((gpus >= 2)); then
    run "pingpong on one GPU, STRIDER_SAME_NODE=$mode" 200 LD_PRELOAD="$lib" \
      STRIDER_SAME_NODE=$mode CUDA_VISIBLE_DEVICES=0 -- \
      $build/bench/strider_bench_pingpong "${pingpong_args[@]}" --out "$OUT/pingpong_1gpu_$tag.csv"
  fi
done
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
# At most 8 files come back: the CSVs go into one archive when there are too many.
if (($(find "$OUT" -maxdepth 1 -type f | wc -l) > 8)); then
  (cd "$OUT" && tar czf results.tar.gz ./*.csv && rm -f ./*.csv)
fi
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
