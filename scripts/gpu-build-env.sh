# Sourced by the one-call GPU scripts: root's mpirun allowed, $OUT and $OUT/extras made, the
# vendored test libraries (.deps, see vendor-deps.sh) found, and gpu_build to configure and build
# the Open MPI + CUDA tree in $build (sm_90), its logs under $OUT/extras, and gpu_tests to run
# the GPU tests, and run to start a two-rank job with its output in the log. Sets `start`.
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/extras"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
build=build/gpu-openmpi
deps=()
mpi_args=()  # another Open MPI than the system's: -DMPI_C_COMPILER=... (gpu-cuda-aware.sh)
[[ -d .deps/googletest ]] && deps+=(-DSTRIDER_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
[[ -d .deps/CLI11 ]] && deps+=(-DSTRIDER_CLI11_INCLUDE_DIR="$PWD/.deps/CLI11")
[[ -d .deps/nlohmann_json ]] && deps+=(-DSTRIDER_JSON_INCLUDE_DIR="$PWD/.deps/nlohmann_json")
start=$SECONDS

# gpu_build NAME: configure and build everything; logs configure-NAME.txt and build-NAME.txt.
gpu_build() {
  cmake -S . -B "$build" -G Ninja -DSTRIDER_MPI=openmpi -DSTRIDER_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" "${mpi_args[@]}" \
    >"$OUT/extras/configure-$1.txt" 2>&1 ||
    { tail -20 "$OUT/extras/configure-$1.txt"; return 1; }
  cmake --build "$build" -j "$(nproc)" >"$OUT/extras/build-$1.txt" 2>&1 ||
    { tail -40 "$OUT/extras/build-$1.txt"; return 1; }
}

# gpu_begin NAME: the machine (GPUs, driver, date) into $log (the caller's), then gpu_build NAME
# and the time it took.
gpu_begin() {
  { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } |
    tee "$log"
  gpu_build "$1" || return 1
  echo "== built in $((SECONDS - start)) s" | tee -a "$log"
}

# gpu_build_before LOG: from .before/ (a `git archive` of the commit to compare with,
# git-ignored), that tree's libstrider.so alone into $before (build/before-openmpi); a line in
# LOG says when it was built, or that it was not.
before=build/before-openmpi
gpu_build_before() {
  [[ -d .before ]] || return 0
  cmake -S .before -B $before -G Ninja -DSTRIDER_MPI=openmpi -DSTRIDER_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" >"$OUT/extras/configure-before.txt" 2>&1 &&
    cmake --build $before -j "$(nproc)" --target strider >"$OUT/extras/build-before.txt" 2>&1 ||
    echo "== the .before library did not build" | tee -a "$1"
  echo "== .before built after $((SECONDS - start)) s" | tee -a "$1"
}

# gpu_tests LOG SECONDS [FILE]: the GPU tests but the soak test, those matching TEST_REGEX where
# it is set (TEST_TIMEOUT s, default SECONDS) into $OUT/FILE (default ctest-gpu.txt); exit code,
# time and summary appended to LOG.
gpu_tests() {
  local file=$OUT/${3:-ctest-gpu.txt}
  timeout "${TEST_TIMEOUT:-$2}" ctest --test-dir $build -L gpu -E soak -R "${TEST_REGEX:-.}" \
    --output-on-failure -j 2 >"$file" 2>&1
  echo "== ctest exit $? after $((SECONDS - start)) s" | tee -a "$1"
  grep -E "tests passed|\*\*\*Failed|Timeout|Not Run|Skipped" "$file" | tail -20 | tee -a "$1"
}

# start_mps: an MPS control daemon for the rest of the script (pipes in /tmp, log under
# $OUT/extras/mps, stopped at exit): processes sharing a GPU then share one MPS server instead
# of time-slicing their contexts. MPS is a system setting Strider never makes; the scripts use
# it to measure that deployment.
start_mps() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/strider-mps-pipe CUDA_MPS_LOG_DIRECTORY=$OUT/extras/mps
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "nvidia-cuda-mps-control -d failed"; return 1; }
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
}

# run NAME TIMEOUT ENV... -- COMMAND...: $NP ranks (default two) under $MPIRUN (default
# mpirun.openmpi, with $MPIRUN_FLAGS), each ENV
# (NAME=VALUE, such as LD_PRELOAD=...) passed to all with -x; the output's last $run_tail lines
# (default 40) appended to $log (the caller's).
# shellcheck disable=SC2154
run() {
  local name=$1 limit=$2
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=(-x "$1"); shift; done
  shift
  echo "== $name ($((SECONDS - start)) s)" | tee -a "$log"
  # shellcheck disable=SC2086  # MPIRUN_FLAGS: words for mpirun (e.g. --bind-to none)
  timeout "$limit" "${MPIRUN:-mpirun.openmpi}" --allow-run-as-root ${MPIRUN_FLAGS:-} -n "${NP:-2}" \
    "${envs[@]}" "$@" 2>&1 |
    tail -"${run_tail:-40}" | tee -a "$log"
}
