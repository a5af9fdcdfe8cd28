#!/usr/bin/env bash
# One call on a GPU machine: build the library and the per-call benchmarks (sm_90), then time
# where a small GPU MPI_Pack's fixed cost goes (bench/call_cost, under each CUDA scheduling mode,
# with and without Strider) and bench/pack's small and contiguous rows, also as TEMPI's
# bench-mpi-pack times them (--tempi). Results under $OUT (default ./gpu-out).
# Usage: scripts/gpu-percall.sh [--help]     Env: OUT, BUILD (build folder), PACK_FILTERS
set -uo pipefail
if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
OUT=${OUT:-$PWD/gpu-out}
build=${BUILD:-build/gpu-openmpi}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
deps=()
[[ -d .deps/googletest ]] && deps+=(-DSTRIDER_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
[[ -d .deps/CLI11 ]] && deps+=(-DSTRIDER_CLI11_INCLUDE_DIR="$PWD/.deps/CLI11")
[[ -d .deps/nlohmann_json ]] && deps+=(-DSTRIDER_JSON_INCLUDE_DIR="$PWD/.deps/nlohmann_json")
cmake -S . -B "$build" -G Ninja -DSTRIDER_MPI=openmpi -DSTRIDER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" >"$OUT/configure.txt" 2>&1 || {
  tail -20 "$OUT/configure.txt"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target strider strider_bench_call_cost strider_bench_pack \
  >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
lib=$PWD/$build/src/libstrider.so
run1() { mpirun.openmpi --allow-run-as-root -n 1 "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/percall.txt"
for sched in auto spin yield blocking; do
  echo "== call_cost, Strider preloaded, sched $sched" | tee -a "$OUT/percall.txt"
  run1 env LD_PRELOAD="$lib" "$build/bench/strider_bench_call_cost" --sched "$sched" \
    --out "$OUT/call_cost_$sched.csv" 2>&1 | tee -a "$OUT/percall.txt"
done
echo "== pack bench (--tempi)" | tee -a "$OUT/percall.txt"
for f in ${PACK_FILTERS:-_1KiB _64KiB contig}; do
  run1 env LD_PRELOAD="$lib" "$build/bench/strider_bench_pack" --tempi --filter "$f" \
    --out "$OUT/pack_$f.csv" 2>&1 | tee -a "$OUT/percall.txt"
done
