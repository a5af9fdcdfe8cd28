#!/usr/bin/env bash
# Runs the host-side benchmarks of one build tree and writes their CSVs and a markdown summary.
set -euo pipefail

usage() {
  cat <<EOF
usage: $(basename "$0") [--quick] BUILD_DIR OUT_DIR

Runs, with 1 MPI rank and the launcher of BUILD_DIR's CMakeCache.txt:
  strider_bench_commit     without Strider, then with LD_PRELOAD=libstrider.so (defaults)
  strider_bench_host_pack  with LD_PRELOAD=libstrider.so STRIDER_HOST_ENGINE=on
and writes, where MPI is openmpi or mpich (from BUILD_DIR's configuration):
  OUT_DIR/commit_MPI.csv     commit time per construction, without (strider=0) and with (1)
  OUT_DIR/host_pack_MPI.csv  Strider's CPU engine against the system MPI's pack/unpack
  OUT_DIR/host_MPI.md        both as tables, with the date, CPU and MPI version

  --quick  few repetitions (CI smoke run; the numbers mean little)
  --help   this text
EOF
}

quick=()
args=()
for arg in "$@"; do
  case $arg in
    -h | --help) usage; exit 0 ;;
    --quick) quick=(--quick) ;;
    -*) echo "unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *) args+=("$arg") ;;
  esac
done
if [[ ${#args[@]} -ne 2 ]]; then
  usage >&2
  exit 2
fi
build=$(realpath "${args[0]}")
mkdir -p "${args[1]}"
out=$(realpath "${args[1]}")

cache=$build/CMakeCache.txt
[[ -f $cache ]] || { echo "$build is not a configured build tree (no CMakeCache.txt)" >&2; exit 1; }
cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1; }

# STRIDER_MPI_NAME when cached; else the requested STRIDER_MPI; else what the probe found.
mpi=$(cache_get STRIDER_MPI_NAME)
[[ -n $mpi ]] || mpi=$(cache_get STRIDER_MPI)
if [[ -z $mpi ]]; then
  if [[ $(cache_get STRIDER_MPI_IS_OPENMPI) == 1 ]]; then mpi=openmpi; else mpi=mpich; fi
fi

mpiexec=$(cache_get MPIEXEC_EXECUTABLE)
np_flag=$(cache_get MPIEXEC_NUMPROC_FLAG)
launcher=("$mpiexec" "${np_flag:--n}" 1)
# Open MPI refuses to start as root unless told.
if [[ $mpi == openmpi && $(id -u) == 0 ]]; then launcher+=(--allow-run-as-root); fi

lib=$build/src/libstrider.so
commit_bin=$build/bench/strider_bench_commit
pack_bin=$build/bench/strider_bench_host_pack
for f in "$mpiexec" "$lib" "$commit_bin" "$pack_bin"; do
  [[ -e $f ]] || { echo "missing $f: build the tree first (ninja -C $build)" >&2; exit 1; }
done

# The environment is the experiment: no inherited Strider settings or preloads.
clean_env=(env -u LD_PRELOAD -u STRIDER_DISABLE -u STRIDER_HOST_ENGINE -u STRIDER_LOG)
launch() { "${launcher[@]}" "${clean_env[@]}" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

date=$(date -u '+%Y-%m-%d %H:%M UTC')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
cores=$(nproc)
mpi_version=$(launch "$commit_bin" --mpi-version | head -n 1)
src=$(cache_get CMAKE_HOME_DIRECTORY)
rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git --no-optional-locks -C "$src" status --porcelain -uno 2>/dev/null) ]]; then
  rev="$rev + uncommitted changes"
fi

echo "== commit time, $mpi: without Strider" >&2
launch "$commit_bin" "${quick[@]}" --out "$tmp/commit0.csv"
echo "== commit time, $mpi: with Strider" >&2
launch LD_PRELOAD="$lib" "$commit_bin" "${quick[@]}" --out "$tmp/commit1.csv" 2>"$tmp/verdicts"
cat "$tmp/commit0.csv" >"$out/commit_$mpi.csv"
tail -n +2 "$tmp/commit1.csv" >>"$out/commit_$mpi.csv"

echo "== host pack, $mpi: Strider's CPU engine vs the MPI" >&2
launch LD_PRELOAD="$lib" STRIDER_HOST_ENGINE=on "$pack_bin" "${quick[@]}" \
  --out "$out/host_pack_$mpi.csv"

md=$out/host_$mpi.md
{
  echo "# Strider host benchmarks: $mpi"
  echo
  note=""
  [[ ${#quick[@]} -eq 0 ]] || note="; QUICK RUN (few repetitions)"
  echo "$date; CPU: $cpu ($cores cores); MPI: $mpi_version; Strider source: $rev$note"
  echo
  echo "## Commit time"
  echo
  echo "create + MPI_Type_commit + MPI_Type_free, median over repetitions, microseconds;" \
    "with = LD_PRELOAD=libstrider.so, default settings. Goal: added <= 5 us for depth <= 4."
  echo
  echo "| construction | depth | without (us) | with (us) | added (us) | ratio |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk -F, 'NR == FNR { if (FNR > 1) without[$3] = $5; next }
    FNR > 1 { printf "| %s | %d | %.2f | %.2f | %.2f | %.2f |\n", $3, $4, without[$3], $5,
              $5 - without[$3], $5 / without[$3] }' "$tmp/commit0.csv" "$tmp/commit1.csv"
  echo
  others=$(sed -n 's/^# strider: \([^ ]*\) \(.*\)$/\1 (\2)/p' "$tmp/verdicts" | grep -v '(planned)' |
    paste -sd, - || true)
  if [[ -n $others ]]; then
    echo "Not planned by Strider (left to the MPI): $others"
  else
    echo "Strider planned every construction."
  fi
  echo
  echo "## Host pack"
  echo
  echo "LD_PRELOAD=libstrider.so STRIDER_HOST_ENGINE=on; median microseconds per call;" \
    "Strider = MPI_Pack/MPI_Unpack (its CPU engine), MPI = PMPI_Pack/PMPI_Unpack;" \
    "speedup = MPI / Strider (< 1: the MPI is faster); block = contiguous run (mean if irregular)."
  echo
  echo "| case | packed B | block B | blocks | Strider pack | MPI pack | pack speedup" \
    "| Strider unpack | MPI unpack | unpack speedup | served |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F, 'FNR > 1 { printf "|"; for (i = 2; i <= NF; ++i) printf " %s |", $i; printf "\n" }' \
    "$out/host_pack_$mpi.csv"
  echo
  awk -F, 'FNR > 1 && $2 !~ /^WARNING/ {
      # Below 0.95: more than the run-to-run noise.
      if ($8 < 0.95) slow_p = slow_p " " $2; if ($11 < 0.95) slow_u = slow_u " " $2
      if ($12 != 1) unserved = unserved " " $2 }
    $2 ~ /^WARNING/ { warn = warn " " $2 }
    END {
      print "The MPI packs more than 5% faster than Strider in:" (slow_p ? slow_p : " none") "."
      print ""
      print "The MPI unpacks more than 5% faster than Strider in:" (slow_u ? slow_u : " none") "."
      if (unserved) { print ""; print "NOT served by Strider:" unserved "." }
      if (warn) { print ""; print "WARNINGS (Strider and the MPI disagree):" warn "." }
    }' "$out/host_pack_$mpi.csv"
} >"$md"
echo "wrote $out/commit_$mpi.csv $out/host_pack_$mpi.csv $md" >&2
