#!/usr/bin/env bash
# `make test`'s runner: ctest in BUILD/<mpi> for each MPI given, then a summary of what ran and
# what did not: MPIs tested and skipped (SKIPPED_MPIS: "mpi: why" lines), parts of the build
# left out for a missing package (BUILD/<mpi>/strider-skipped.txt), GPU tests skipped.
# Usage: [SKIPPED_MPIS=...] [CTEST_ARGS=...] scripts/run-tests.sh BUILD MPI...
set -uo pipefail
if [[ $# -lt 2 || ${1:-} == --help ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
root=$1; shift
read -r -a ctest_args <<<"${CTEST_ARGS:-}"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
lines=(); failed=()
for m in "$@"; do
  build=$root/$m
  echo "=== tests against $m ==="
  ctest --test-dir "$build" --output-on-failure -j 2 "${ctest_args[@]}" 2>&1 | tee "$build/ctest.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=("$m")
  # Tally from the log: the totals line, and the names CTest lists as skipped.
  totals=$(grep -E '[0-9]+% tests passed' "$build/ctest.log" | tail -1)
  mapfile -t skipped < <(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$build/ctest.log")
  mapfile -t gpu_tests < <(ctest --test-dir "$build" -N -L gpu 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p')
  gpu_skipped=0
  for t in "${skipped[@]}"; do
    for g in "${gpu_tests[@]}"; do [[ $t == "$g" ]] && { gpu_skipped=$((gpu_skipped + 1)); break; }; done
  done
  line="$m: ${totals:-no totals (see $build/ctest.log)}; ${#skipped[@]} skipped"
  if ((${#gpu_tests[@]} == 0)); then
    line+="; no GPU tests built"
  elif ((gpu_skipped > 0)); then
    why="no GPU here"; ((gpus > 0)) && why="see their output in $build/ctest.log"
    line+=", of them $gpu_skipped of ${#gpu_tests[@]} GPU tests ($why)"
  fi
  lines+=("$line")
done

echo "=== test summary ==="
for l in "${lines[@]}"; do echo "  $l"; done
echo "  MPIs tested: $*"
if [[ -n ${SKIPPED_MPIS:-} ]]; then
  while IFS= read -r s; do echo "  MPI skipped: $s"; done <<<"$SKIPPED_MPIS"
fi
notes=$(for m in "$@"; do cat "$root/$m/strider-skipped.txt" 2>/dev/null; done | sort -u)
if [[ -n $notes ]]; then
  while IFS= read -r n; do echo "  not built: $n"; done <<<"$notes"
else
  echo "  not built: nothing (every optional package found)"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "=== tests FAILED for: ${failed[*]} ==="
  exit 1
fi
echo "=== all tests passed for: $* ==="
