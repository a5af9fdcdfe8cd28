#!/usr/bin/env bash
# One call on a GPU machine for the same-node path (issue 12): build (sm_90), the GPU tests (not
# the soak test), then bench/transpose and bench/halo with two ranks and Strider preloaded, each
# run once with STRIDER_SAME_NODE=1 (GPU to GPU through CUDA IPC) and once with 0 (through host
# memory). Results under $OUT (default ./gpu-out): ctest-gpu.txt, {transpose,halo}_same_node.csv,
# {transpose,halo}_host.csv, same-node.txt (the log), extras.tar.gz (build logs).
# Usage: scripts/gpu-same-node.sh   Env: OUT, TEST_TIMEOUT (s, 240), TRANSPOSE_ARGS, HALO_ARGS
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/same-node.txt
gpu_begin all || exit 1
gpu_tests "$log" 240
# Which path the collective tests took, from Strider's counters.
for t in gpu_collective_test_device gpu_collective_test_mixed gpu_collective_test_managed gpu_collective_test_async; do
  ctest --test-dir $build -R "^$t\$" -V 2>&1 | grep -E "GPU to GPU|FAILED|Failure" | head -6 | sed "s/^/$t: /" | tee -a "$log"
done
lib=$build/src/libstrider.so
read -ra transpose_args <<<"${TRANSPOSE_ARGS:---n 64 128 256 --n2d 1024 4096 --iters 20}"
read -ra halo_args <<<"${HALO_ARGS:---n 64 128 --global 64 128 --iters 5 --forms pack,alltoallw,expert}"
for bench in transpose halo; do
  for mode in 1 0; do
    name=$([[ $mode == 1 ]] && echo same_node || echo host)
    echo "== $bench, STRIDER_SAME_NODE=$mode ($((SECONDS - start)) s)" | tee -a "$log"
    if [[ $bench == transpose ]]; then bench_args=("${transpose_args[@]}"); else bench_args=("${halo_args[@]}"); fi
    timeout 150 mpirun.openmpi --allow-run-as-root -n 2 -x LD_PRELOAD="$lib" -x STRIDER_SAME_NODE=$mode \
      $build/bench/strider_bench_$bench "${bench_args[@]}" --csv "$OUT/${bench}_$name.csv" 2>&1 | tee -a "$log"
  done
done
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
