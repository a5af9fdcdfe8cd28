#!/usr/bin/env bash
# One call on a GPU machine for the collectives: build (sm_90), run the GPU tests (the batch
# kernel, collectives, point-to-point; not the soak test) with a time limit, then
# scripts/gpu-halo.sh with what time is left. Everything lands under $OUT (default ./gpu-out):
# ctest-gpu.txt, the halo/transpose CSVs and PNGs, gpu-halo.txt, extras.tar.gz.
# Usage: scripts/gpu-collectives.sh [gpu-halo.sh arguments]   Env: OUT, TEST_TIMEOUT (s, 240)
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/ctest-gpu.txt"
gpu_build all || exit 1
echo "== built in $((SECONDS - start)) s" | tee -a "$OUT/ctest-gpu.txt"
timeout "${TEST_TIMEOUT:-240}" ctest --test-dir $build -L gpu -E soak --output-on-failure -j 2 \
  >>"$OUT/ctest-gpu.txt" 2>&1
echo "== ctest exit $? after $((SECONDS - start)) s" | tee -a "$OUT/ctest-gpu.txt"
grep -E "tests passed|Failed|\*\*\*|Passed|Skipped" "$OUT/ctest-gpu.txt" | tail -40
# The halo runs end by 560 s after this script's start, leaving time for the plots.
BUILD=$build BUDGET=$((560 - (SECONDS - start))) scripts/gpu-halo.sh "$@"
