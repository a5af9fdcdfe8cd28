#!/usr/bin/env bash
# Issue 23 item 5 in one device call (two GPUs; carry .ompi-cuda and .deps): Strider on a
# CUDA-aware MPI, the configuration a user would pick instead of Strider. Unpacks the Open MPI
# built --with-cuda by scripts/build-cuda-aware-ompi.sh (.ompi-cuda/*.tar.xz) into /tmp/ompi-cuda
# (relocated with OPAL_PREFIX), builds this tree (sm_90) against it in build/gpu-ompi-cuda, then,
# with STRIDER_MPI_CUDA_AWARE unset (Strider asks the MPI itself; the log line is kept):
#   bench/pingpong with Strider preloaded: every method, the model's choice (auto), the
#     by-hand baseline (b) and the MPI alone on the same device buffers (mpi_alone, PMPI_*);
#   bench/halo without Strider (the MPI alone: every form on device buffers, few iterations, as
#     it copies block by block) and with Strider, same-node offers on and off;
#   bench/pack on one rank: Strider and the MPI alone (PMPI_Pack/Unpack) in one process;
#   the GPU tests but the soak test, on this MPI (ctest-gpu.txt; TEST_TIMEOUT s, default 240).
# Every benchmark checks its data. Log cuda-aware.txt; CSVs and outputs in bench.tar.gz.
# BENCHES picks among "pingpong alone halo pack" (default all; alone: the halo without Strider);
# TESTS=0 skips the tests, TEST_REGEX narrows them, TEST_TIMEOUT (s, default 240) bounds them.
# Usage (device): [BENCHES=...] [TESTS=0] [TEST_REGEX=...] scripts/gpu-cuda-aware.sh
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
build=build/gpu-ompi-cuda
prefix=/tmp/ompi-cuda
log=$OUT/cuda-aware.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } |
  tee "$log"
archive=$(ls .ompi-cuda/openmpi-*-cuda.tar.xz 2>/dev/null | head -1)
[[ -n $archive ]] ||
  { echo "== no .ompi-cuda/*.tar.xz: run scripts/build-cuda-aware-ompi.sh, carry .ompi-cuda" |
    tee -a "$log"; exit 1; }
rm -rf $prefix && mkdir -p $prefix && tar -C $prefix -xf "$archive"
export OPAL_PREFIX=$prefix PATH=$prefix/bin:$PATH
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
MPIRUN=$prefix/bin/mpirun
"$prefix/bin/ompi_info" --parsable --all 2>&1 |
  grep -E "^ompi:version:full|mpi_built_with_cuda_support:value|btl:smcuda:version" |
  tee -a "$log"
# shellcheck disable=SC2034  # read by gpu_build
mpi_args=(-DMPI_C_COMPILER="$prefix/bin/mpicc" -DMPI_CXX_COMPILER="$prefix/bin/mpicxx"
  -DMPIEXEC_EXECUTABLE="$MPIRUN")
gpu_build cuda-aware || { echo "== build failed" | tee -a "$log"; exit 1; }
echo "== built in $((SECONDS - start)) s" | tee -a "$log"
lib=$PWD/$build/src/libstrider.so
b=$OUT/bench
mkdir -p "$b"
unset STRIDER_MPI_CUDA_AWARE

# What Strider concluded about the MPI, from its own log line.
timeout 60 "$MPIRUN" --allow-run-as-root -n 2 -x LD_PRELOAD="$lib" -x STRIDER_LOG=info \
  $build/bench/strider_bench_halo --n 16 --iters 1 --warmup 0 --forms isend \
  --csv "$b/halo_probe.csv" 2>&1 | grep -m2 -i "cuda-aware" | tee -a "$log"

benches=" ${BENCHES:-pingpong alone halo pack} "
has() { [[ $benches == *" $1 "* ]]; }
halo=$build/bench/strider_bench_halo
run_tail=400  # the tables whole in the log
has pingpong && run "pingpong, Strider over the CUDA-aware MPI" 240 LD_PRELOAD="$lib" -- \
  $build/bench/strider_bench_pingpong --out "$b/pingpong.csv"
has alone && run "halo, the MPI alone" 150 -- $halo --n 64 --iters 3 --warmup 1 \
  --csv "$b/halo_alone.csv"
has halo && run "halo, Strider" 120 LD_PRELOAD="$lib" -- $halo --n 64 128 --iters 10 \
  --csv "$b/halo_strider.csv"
has halo && run "halo, Strider, STRIDER_SAME_NODE=0" 120 LD_PRELOAD="$lib" STRIDER_SAME_NODE=0 \
  -- $halo --n 64 128 --iters 10 --csv "$b/halo_strider_nooffers.csv"
has pack && NP=1 run "pack, Strider and the MPI alone" 240 LD_PRELOAD="$lib" -- \
  $build/bench/strider_bench_pack --out "$b/pack.csv"
tar czf "$OUT/bench.tar.gz" -C "$OUT" bench && rm -rf "$b"

[[ ${TESTS:-1} == 1 ]] && gpu_tests "$log" 240
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
