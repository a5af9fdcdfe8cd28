#!/usr/bin/env bash
# Runs the demo of a build tree: strider-explain on the box example, then the 2-rank
# halo exchange with Strider preloaded. Usage: scripts/run-demo.sh BUILD_DIR
set -euo pipefail
if [[ "${1:-}" == "--help" || $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR   (e.g. build/openmpi)"; exit 0
fi
build=$1
mpiexec=$(grep '^MPIEXEC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)
flags=()
grep -q '^STRIDER_MPI_IS_OPENMPI:INTERNAL=1' "$build/CMakeCache.txt" && flags=(--oversubscribe --allow-run-as-root)
echo "== strider-explain: one box, two constructions =="
"$mpiexec" -n 1 "${flags[@]}" "$build/tools/strider-explain" \
  'subarray(C,[1024,512,256],[47,13,100],[0,0,0],byte)' \
  'hvector(47,1,131072,hvector(13,1,256,vector(100,1,1,byte)))'
echo "== 3D halo exchange, 2 ranks, Strider preloaded (STRIDER_HOST_ENGINE=${STRIDER_HOST_ENGINE:-auto}) =="
"$mpiexec" -n 2 "${flags[@]}" env LD_PRELOAD="$PWD/$build/src/libstrider.so" \
  STRIDER_HOST_ENGINE="${STRIDER_HOST_ENGINE:-auto}" "$build/examples/halo3d"
# What this build left out for a missing optional package (cmake/SkipNotes.cmake).
if [[ -s $build/strider-skipped.txt ]]; then
  echo "== not built here (optional packages missing) =="
  sed 's/^/  /' "$build/strider-skipped.txt"
fi
