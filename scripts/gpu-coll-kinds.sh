#!/usr/bin/env bash
# Issue 20 item 3 on a GPU machine (about 3 minutes at most): runs bench/coll_kinds (built
# beforehand; this script builds nothing) with 2 ranks over the GPU suite's memory layouts
# (managed,registered / device,device / host,host / managed,managed / device,registered), with
# Strider preloaded, with --touch host and --touch device, each with STRIDER_SAME_NODE=1 and =0;
# then the MPI alone (no Strider) on the layouts it can take (no device memory). Writes under
# $OUT (default ./gpu-out): coll_kinds_<touch>_same-node-<0|1>.csv, coll_kinds_nostrider.csv,
# coll_kinds_all.csv (all rows, one header), gpu-coll-kinds.txt (the log: every table).
# Usage: scripts/gpu-coll-kinds.sh [BUILD_DIR] [bench arguments...]
#   BUILD_DIR: the Open MPI + CUDA build tree (default build/gpu-openmpi), with
#   bench/strider_bench_coll_kinds and src/libstrider.so built, e.g.
#     cmake --build build/gpu-openmpi --target strider coll_kinds_bench
#   bench arguments replace the default --quick (e.g. --counts 1,17,1024,65530 --iters 50).
# Env: OUT, RANKS (2), BUDGET (s from the start by which every run ends, 170), KINDS (the
#   layouts, space-separated).
set -uo pipefail
build=build/gpu-openmpi
if [[ $# -gt 0 && $1 != --* ]]; then build=$1; shift; fi
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
args=("$@")
(( ${#args[@]} )) || args=(--quick)
start=$SECONDS
OUT=${OUT:-$PWD/gpu-out}
ranks=${RANKS:-2}
budget=${BUDGET:-170}
read -r -a kinds <<<"${KINDS:-managed,registered device,device host,host managed,managed device,registered}"
bin=$build/bench/strider_bench_coll_kinds
lib=$(realpath -m "$build/src/libstrider.so")
for f in "$bin" "$lib"; do
  [[ -e $f ]] || { echo "missing $f: build it first (see --help)" >&2; exit 2; }
done
mkdir -p "$OUT"
log=$OUT/gpu-coll-kinds.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$log"

# run NAME RUNS_LEFT MPIRUN_ARGS... -- BENCH_ARGS...: one bench run, given an equal share of
# the time left (--time-limit: no new case after it), killed 30 s past it if it hangs.
run() {
  local name=$1 runs_left=$2; shift 2
  local mpi=() ; while [[ $1 != -- ]]; do mpi+=("$1"); shift; done; shift
  local left=$((budget - (SECONDS - start)))
  local share=$(( (left - 5) / runs_left - 5 ))
  if (( share < 10 )); then echo "== $name: out of time, skipped" | tee -a "$log"; return; fi
  echo "== $name ($((SECONDS - start)) s, limit $share s)" | tee -a "$log"
  timeout $((share + 30)) mpirun.openmpi --allow-run-as-root -n "$ranks" "${mpi[@]}" "$bin" \
    "${args[@]}" "$@" --time-limit "$share" --out "$OUT/$name.csv" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  (( rc == 0 )) || echo "== $name: exit $rc (1: wrong data; 124: killed at the time limit)" | tee -a "$log"
}

n=5
for touch in host device; do
  for same in 1 0; do
    run "coll_kinds_${touch}_same-node-$same" $n -x LD_PRELOAD="$lib" -x STRIDER_SAME_NODE=$same \
      -- --kinds "${kinds[@]}" --touch $touch
    n=$((n - 1))
  done
done
# The MPI alone (not CUDA-aware): host-accessible layouts only.
nostrider=()
for l in "${kinds[@]}"; do [[ $l == *device* ]] || nostrider+=("$l"); done
if (( ${#nostrider[@]} )); then run coll_kinds_nostrider 1 -- --kinds "${nostrider[@]}" --touch host; fi

# One CSV of every row (the env and strider columns tell the runs apart).
all=$OUT/coll_kinds_all.csv first=1
: >"$all"
for f in "$OUT"/coll_kinds_*.csv; do
  [[ $f == "$all" || ! -s $f ]] && continue
  if (( first )); then cat "$f"; first=0; else tail -n +2 "$f"; fi >>"$all"
done
# Per run and layout: the sum of the median call times over every (collective, type, count)
# case (a suite's sweep, per call), the worst ratio to host memory, and wrong data.
fmt="%-8s %-6s %-20s %-22s %6s %12s %9s %s\n"
{
  # shellcheck disable=SC2059
  printf "$fmt" strider touch env kinds cases sum_med_us worst_x errors
  awk -F, -v fmt="$fmt" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { k = $c["strider"] SUBSEP $c["touch"] SUBSEP $c["env"] SUBSEP $c["kinds"]
      sum[k] += $c["median_us"]; n[k]++; bad[k] += $c["errors"]
      if ($c["vs_host"] > worst[k]) worst[k] = $c["vs_host"] }
    END { for (k in sum) { split(k, f, SUBSEP)
            printf fmt, f[1], f[2], f[3], f[4], n[k], sprintf("%.1f", sum[k]),
                   sprintf("%.2f", worst[k]), bad[k] } }' "$all" | sort
} | tee -a "$log"
echo "== done in $((SECONDS - start)) s:" "$OUT"/coll_kinds_*.csv | tee -a "$log"
