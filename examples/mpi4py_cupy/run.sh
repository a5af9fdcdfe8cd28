#!/usr/bin/env bash
# Runs halo_exchange.py or collectives.py (mpi4py + CuPy, GPU buffers, derived datatypes) on 2
# ranks.
#
# Usage: run.sh [OPTIONS] /path/to/libstrider.so   with Strider preloaded: exit 0 when every
#                                                  byte arrived correctly
#        run.sh [OPTIONS] --without-strider        the same program on the bare MPI: exit 0
#                                                  when it fails ("crashed as expected"), 1 when
#                                                  it passes ("unexpectedly passed")
# Options: --mpi openmpi|mpich|mpich-wheel|mpich-abi
#                                MPI the build uses (default $STRIDER_EXAMPLE_MPI, else
#                                openmpi; selects mpi4py's ABI: the wheel's is MPICH's)
#          --launcher PATH       mpirun to use (default $STRIDER_EXAMPLE_LAUNCHER, else
#                                mpirun.<mpi>, or the wheel's mpiexec for mpich-wheel)
#          --program NAME        halo_exchange.py (default) or collectives.py (mpi4py's
#                                collectives on CuPy arrays against NumPy copies)
#          -- ARGS...            passed to the program (e.g. -- --shape 32 24 20)
# Environment: PYTHON (default python3; the wheel's .venv-mpi/bin/python3 for mpich-wheel),
# STRIDER_EXAMPLE_TIMEOUT (seconds, default 240), STRIDER_WHEEL_PREFIX (default .venv-mpi).
# Exit 77 (skipped) when PYTHON cannot import mpi4py or cupy, or sees no GPU, and for
# mpich-abi (mpi4py's wheels hold no build for the MPI-5 standard ABI).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=with lib="" mpi=${STRIDER_EXAMPLE_MPI:-openmpi} launcher=${STRIDER_EXAMPLE_LAUNCHER:-}
program=halo_exchange.py
script_args=()

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --without-strider) mode=without ;;
    --mpi) mpi=${2:?--mpi needs a value}; shift ;;
    --launcher) launcher=${2:?--launcher needs a value}; shift ;;
    --program) program=${2:?--program needs a value}; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; script_args=("$@"); break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) lib=$1 ;;
  esac
  shift
done
wheel=${STRIDER_WHEEL_PREFIX:-$here/../../.venv-mpi}
default_python=python3 default_launcher=mpirun.$mpi abi=$mpi
case $mpi in
  openmpi) flags=(--allow-run-as-root --oversubscribe) ;;
  mpich) flags=() ;;
  mpich-wheel)
    flags=() abi=mpich default_python=$wheel/bin/python3 default_launcher=$wheel/bin/mpiexec ;;
  mpich-abi)
    echo "SKIP: mpi4py's wheels hold no build for the MPI-5 standard ABI"; exit 77 ;;
  *) echo "run.sh: --mpi must be openmpi, mpich, mpich-wheel or mpich-abi, not '$mpi'" >&2
     exit 2 ;;
esac
python=${PYTHON:-$default_python}
# An absolute path: the launcher may start ranks with another PATH (the GPU box's python3 with
# CuPy is a virtual environment's).
python=$(command -v "$python" || echo "$python")
if [[ $mode == with ]]; then
  [[ -n $lib ]] || { usage >&2; exit 2; }
  [[ -f $lib ]] || { echo "run.sh: no such library: $lib" >&2; exit 2; }
  lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
fi
launcher=${launcher:-$default_launcher}
command -v "$launcher" >/dev/null || { echo "run.sh: launcher '$launcher' not found" >&2; exit 2; }

# Skip cleanly where the example cannot run: no mpi4py or CuPy for this python, or no GPU.
# (Importing mpi4py alone does not start MPI; mpi4py.MPI would.)
if ! probe=$("$python" - 2>&1 <<'EOF'
import sys
try:
    import cupy
    import mpi4py
except Exception as exc:  # ImportError, or CuPy failing to load its CUDA libraries
    print(f"cannot import mpi4py and cupy: {exc!r}")
    sys.exit(1)
try:
    count = cupy.cuda.runtime.getDeviceCount()
except Exception as exc:
    print(f"no GPU: {exc!r}")
    sys.exit(1)
if count == 0:
    print("no GPU: cupy.cuda.runtime.getDeviceCount() == 0")
    sys.exit(1)
print(f"mpi4py {mpi4py.__version__}, CuPy {cupy.__version__}, {count} GPU(s)")
EOF
); then
  echo "SKIP: ${probe##*$'\n'}"
  exit 77
fi
echo "run.sh: $probe"

# mpi4py's binary wheels hold one extension per MPI ABI: pick the launcher's (a no-op for an
# mpi4py built from source). Honour a value the caller set.
export MPI4PY_MPIABI=${MPI4PY_MPIABI:-$abi}
if [[ $mpi == openmpi ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [[ $mode == with ]]; then
  preload=(env "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}")
else
  preload=(env -u LD_PRELOAD)
fi
cmd=("$launcher" "${flags[@]}" -n 2 "${preload[@]}" "$python" "$here/$program"
     "${script_args[@]}")
echo "run.sh: ${cmd[*]}"
timeout --kill-after=15 "${STRIDER_EXAMPLE_TIMEOUT:-240}" "${cmd[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# What the program prints when every byte is correct, and once it has started on the GPU
# buffers (a failure before that is a set-up problem).
case $program in
  halo_exchange.py) success_line="mpi4py+cupy halo exchange: every byte correct"
                    started_line="exchanging halos" ;;
  collectives.py) success_line="mpi4py+cupy collectives: every byte correct"
                  started_line="running collectives" ;;
  *) echo "run.sh: --program must be halo_exchange.py or collectives.py" >&2; exit 2 ;;
esac

if [[ $mode == with ]]; then
  if [[ $rc -eq 0 ]] && grep -aqF "$success_line" "$log"; then
    echo "run.sh: with Strider: passed"
    exit 0
  fi
  echo "run.sh: with Strider: FAILED (exit status $rc)"
  exit 1
fi

# Without Strider the MPI is handed device pointers and should fail. A failure only counts if
# the program got as far as the exchange on the bare MPI (not a set-up problem before it).
if [[ $rc -eq 0 ]] && grep -aqF "$success_line" "$log"; then
  echo "run.sh: without Strider: unexpectedly passed (is this MPI CUDA-aware?)"
  exit 1
fi
if ! grep -aqF "Strider is not loaded" "$log" || ! grep -aqF "$started_line" "$log"; then
  echo "run.sh: without Strider: failed before the exchange (exit status $rc): a set-up" \
       "problem, not the GPU buffers; see the output above"
  exit 1
fi
how="exit status $rc"
[[ $rc -eq 124 || $rc -eq 137 ]] && how="hung: timed out after ${STRIDER_EXAMPLE_TIMEOUT:-240} s"
signal=$(grep -aoE "exited on signal [0-9]+ \([^)]*\)" "$log" | head -1)
[[ -n $signal ]] && how="$how, a rank $signal"
echo "run.sh: without Strider: crashed as expected ($how)"
exit 0
