#!/usr/bin/env bash
# One call on a GPU machine for the same-node point-to-point offers (issue 12,
# docs/same-node-p2p.md): build (sm_90), the GPU tests (not the soak test), then bench/pingpong
# with two ranks and Strider preloaded, once with offers (STRIDER_SAME_NODE=1) and once without
# (0: through host memory as before). Results under $OUT (default ./gpu-out): ctest-gpu.txt,
# pingpong_offers.csv, pingpong_host.csv, offers.txt (the log), extras.tar.gz (build logs).
# Usage: scripts/gpu-offers.sh   Env: OUT, TEST_TIMEOUT (s, 300), PINGPONG_ARGS
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/offers.txt
gpu_begin all || exit 1
gpu_tests "$log" 300
ctest --test-dir $build -R "^gpu_p2p_offers_test_device\$" -V 2>&1 | grep -E "offers made|FAILED|Failure" | head -6 | tee -a "$log"
lib=$build/src/libstrider.so
read -ra pingpong_args <<<"${PINGPONG_ARGS:---budget-ms 1500}"
for mode in 1 0; do
  name=$([[ $mode == 1 ]] && echo offers || echo host)
  echo "== pingpong, STRIDER_SAME_NODE=$mode ($((SECONDS - start)) s)" | tee -a "$log"
  timeout 200 mpirun.openmpi --allow-run-as-root -n 2 -x LD_PRELOAD="$lib" -x STRIDER_SAME_NODE=$mode \
    $build/bench/strider_bench_pingpong "${pingpong_args[@]}" --out "$OUT/pingpong_$name.csv" 2>&1 | tee -a "$log"
done
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
