#!/usr/bin/env bash
# One call on a GPU machine (about 8 minutes at most): build the library and bench/halo +
# bench/transpose (sm_90), run both with 2 ranks and LD_PRELOAD=libstrider.so, plot, and leave
# halo.csv, transpose.csv, the PNGs, gpu-halo.txt (the log) and extras.tar.gz (build logs,
# per-form reruns, runs without Strider) under $OUT (default ./gpu-out). If a run with every
# form fails (a form Strider cannot serve yet), each form is rerun alone so the others still
# give numbers. The expert form also runs without Strider (expert_nostrider CSVs): what
# preloading costs a plain host-memory MPI program.
# Usage: scripts/gpu-halo.sh [--n "64 128 256"] [--global "256 512"] [--n2d "1024 4096 8192"]
#        [--n3d "64 128 256"] [--iters 20]     Env: OUT, BUILD (build folder), RUN_TIMEOUT (s),
#        BUDGET (s from the start by which every run ends, 450)
# Per-rank halo memory is 8 * (N+6)^3 * 8 B (N=512: 8.9 GB); sizes that do not fit the GPU's free
# memory (with both ranks on one GPU when there is only one) are dropped with a note.
set -uo pipefail
n_list="64 128 256"; global_list=""; n2d_list="1024 4096 8192"; n3d_list="64 128 256"; iters=20
while [[ $# -gt 0 ]]; do
  case $1 in
    --n) n_list=$2; shift 2 ;;
    --global) global_list=$2; shift 2 ;;
    --n2d) n2d_list=$2; shift 2 ;;
    --n3d) n3d_list=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --help|-h) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
start=$SECONDS
OUT=${OUT:-$PWD/gpu-out}
build=${BUILD:-build/gpu-openmpi}
run_timeout=${RUN_TIMEOUT:-150}
mkdir -p "$OUT/extras"
log=$OUT/gpu-halo.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0
deps=()
[[ -d .deps/googletest ]] && deps+=(-DSTRIDER_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
[[ -d .deps/CLI11 ]] && deps+=(-DSTRIDER_CLI11_INCLUDE_DIR="$PWD/.deps/CLI11")
[[ -d .deps/nlohmann_json ]] && deps+=(-DSTRIDER_JSON_INCLUDE_DIR="$PWD/.deps/nlohmann_json")
nvidia-smi --query-gpu=name,memory.total,memory.free,driver_version --format=csv,noheader \
  | tee "$log"
cmake -S . -B "$build" -G Ninja -DSTRIDER_MPI=openmpi -DSTRIDER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" >"$OUT/extras/configure.txt" 2>&1 || {
  tail -20 "$OUT/extras/configure.txt"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target strider strider_bench_halo strider_bench_transpose \
  >"$OUT/extras/build.txt" 2>&1 || { tail -30 "$OUT/extras/build.txt"; exit 1; }
echo "== built in $((SECONDS - start)) s" | tee -a "$log"
lib=$PWD/$build/src/libstrider.so
halo=$build/bench/strider_bench_halo
transpose=$build/bench/strider_bench_transpose

# Drop sizes whose arrays + packed buffers do not fit: 64 (N+6)^3 B of arrays and
# about 4 x 1152 N^2 B of packed buffers per rank, ranks sharing a GPU when there is one.
gpus=$(nvidia-smi -L | wc -l)
per_gpu=$(( (2 + gpus - 1) / gpus ))
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | sort -n | head -1)
fits() {  # fits N D: a box of N/D x N x N cells per rank (D = 2: a global N over 2 ranks)
  awk -v n="$1" -v d="$2" -v r="$per_gpu" -v free="$free_mib" 'BEGIN {
    m = n / d; need = 64 * (m + 6) * (n + 6) ^ 2 + 4 * 1152 * n * n + 2 ^ 29;
    exit !(r * need < 0.9 * free * 2 ^ 20) }'
}
keep=""; for n in $n_list; do
  if fits "$n" 1; then keep="$keep $n"; else echo "halo: N=$n per rank dropped (GPU memory)" | tee -a "$log"; fi
done; n_list=$keep
keep=""; for n in $global_list; do
  if fits "$n" 2; then keep="$keep $n"; else echo "halo: global N=$n dropped (GPU memory)" | tee -a "$log"; fi
done; global_list=$keep

# Every run ends by BUDGET s after the start (450: 8 minutes with the plots), whatever
# RUN_TIMEOUT says.
run2() {
  local left=$((${BUDGET:-450} - (SECONDS - start)))
  (( left < 20 )) && { echo "out of time: skipped ${*: -1}" | tee -a "$log"; return 124; }
  timeout "$(( left < run_timeout ? left : run_timeout ))" \
    mpirun.openmpi --allow-run-as-root -n 2 "$@"
}
# bench NAME BINARY ARGS...: all forms with Strider; on failure each form alone.
bench() {
  local name=$1 bin=$2; shift 2
  echo "== $name, all forms, Strider preloaded ($((SECONDS - start)) s)" | tee -a "$log"
  if run2 -x LD_PRELOAD="$lib" "$bin" "$@" --iters "$iters" --csv "$OUT/$name.csv" 2>&1 \
      | tee -a "$log"; then
    return 0
  fi
  echo "== $name: the run with every form failed; each form alone" | tee -a "$log"
  local forms=(isend pack alltoallw expert)
  [[ $name == transpose ]] && forms=(alltoallw alltoall_vector expert)
  local f; for f in "${forms[@]}"; do
    run2 -x LD_PRELOAD="$lib" "$bin" "$@" --iters "$iters" --forms "$f" \
      --csv "$OUT/extras/${name}_$f.csv" >"$OUT/extras/${name}_$f.txt" 2>&1
    echo "$name $f: exit $? ($(tail -1 "$OUT/extras/${name}_$f.txt"))" | tee -a "$log"
  done
  # One CSV of whatever ran, for the plot.
  local first=1; : >"$OUT/$name.csv"
  for f in "${forms[@]}"; do
    [[ -s $OUT/extras/${name}_$f.csv ]] || continue
    if (( first )); then cat "$OUT/extras/${name}_$f.csv"; first=0
    else tail -n +2 "$OUT/extras/${name}_$f.csv"; fi >>"$OUT/$name.csv"
  done
}
halo_sizes=()
[[ -n ${n_list// /} ]] && halo_sizes+=(--n $n_list)
[[ -n ${global_list// /} ]] && halo_sizes+=(--global $global_list)
if (( ${#halo_sizes[@]} )); then
  bench halo "$halo" "${halo_sizes[@]}"
  echo "== halo, expert only, no Strider" | tee -a "$log"
  run2 "$halo" "${halo_sizes[@]}" --iters "$iters" --forms expert \
    --csv "$OUT/extras/halo_expert_nostrider.csv" >>"$log" 2>&1 || echo "(failed: $?)" | tee -a "$log"
fi
bench transpose "$transpose" --n $n3d_list --n2d $n2d_list
echo "== transpose, expert only, no Strider" | tee -a "$log"
run2 "$transpose" --n $n3d_list --n2d $n2d_list --iters "$iters" --forms expert \
  --csv "$OUT/extras/transpose_expert_nostrider.csv" >>"$log" 2>&1 || echo "(failed: $?)" | tee -a "$log"

python3 bench/plot_halo.py --out "$OUT" "$OUT/halo.csv" "$OUT/transpose.csv" 2>&1 | tee -a "$log"
tar -czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done in $((SECONDS - start)) s: $(ls "$OUT" | xargs)"
