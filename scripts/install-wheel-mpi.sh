#!/usr/bin/env bash
# MPICH 5 from its PyPI wheel (`pip install mpich`, with mpi4py and numpy for the Python
# examples) in a virtual environment, .venv-mpi/ (git-ignored), made once: what `make test`'s
# MPIs mpich-wheel (the wheel's own ABI, mpicc) and mpich-abi (the MPI-5 standard ABI,
# mpicc_abi) are built and run with. Prints the environment's path; exit 3 with the reason on
# stderr when it cannot be had (no Python venv module, PyPI unreachable). --check: says only
# whether it is there, installing nothing. STRIDER_WHEEL_MPICH: the version (default 5.0.2).
# Usage: scripts/install-wheel-mpi.sh [--check]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
venv=$PWD/.venv-mpi
version=${STRIDER_WHEEL_MPICH:-5.0.2}
ready() {
  [[ -x $venv/bin/mpicc && -x $venv/bin/mpicc_abi && -x $venv/bin/mpicxx && -x $venv/bin/mpiexec ]]
}
if ready; then echo "$venv"; exit 0; fi
if [[ ${1:-} == --check ]]; then echo "install-wheel-mpi: $venv has no MPICH wheel" >&2; exit 3; fi
log=/tmp/strider-wheel-mpi.log
if ! python3 -m venv "$venv" >"$log" 2>&1; then
  echo "install-wheel-mpi: python3 cannot make a virtual environment (log: $log)" >&2
  rm -rf "$venv"; exit 3
fi
t=(); command -v timeout >/dev/null && t=(timeout 600)
if ! "${t[@]}" "$venv/bin/pip" install -q --disable-pip-version-check "mpich==$version" mpi4py \
    numpy >>"$log" 2>&1; then
  echo "install-wheel-mpi: pip could not install mpich==$version (PyPI unreachable? log: $log)" >&2
  rm -rf "$venv"; exit 3
fi
ready || { echo "install-wheel-mpi: the wheel has no mpicc, mpicc_abi or mpiexec" >&2; exit 3; }
echo "$venv"
