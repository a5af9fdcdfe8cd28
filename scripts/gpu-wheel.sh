#!/usr/bin/env bash
# Strider on MPICH 5.0.2 from its PyPI wheel, with CUDA, in one device call: install the carried
# wheels (.whl/: mpich and mpi4py, see below) into /tmp/site; configure and build this tree
# (sm_90) against that MPICH in build/gpu-mpich-wheel (logs under $OUT/extras); the GPU tests but
# the soak test into ctest-gpu-wheel.txt (TEST_TIMEOUT s, default 300; skipped with TESTS=0);
# then examples/mpi4py_cupy/run.sh on the wheel's mpiexec with Strider preloaded
# (mpi4py-cupy-wheel.txt, must pass; EXAMPLE_TIMEOUT s, default 120) and without it
# (mpi4py-cupy-wheel-without.txt, half that time; informational: the bare MPICH is expected to
# fail on GPU pointers), run with the system python3 (CuPy) and PYTHONPATH=/tmp/site first, so
# that the wheel's mpi4py (MPICH ABI) is imported instead of the system one, and with
# LD_LIBRARY_PATH=/tmp/site/lib (mpi4py's MPI.mpich.so needs libmpi.so.12 and has no RUNPATH).
# Main log: wheel.txt; exit codes and elapsed seconds in it.
# pip --target drops a wheel's .data/data/lib (pip puts its home scheme's lib/python there and
# skips the rest of lib/), so libmpi.so* are unpacked from the mpich wheel into /tmp/site/lib by
# hand: /tmp/site is then the MPICH prefix (bin, include, lib) that mpicc and SelectMpi.cmake use.
# Wheels, made here once (git-ignored):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux1_x86_64 -d .whl mpich==5.0.2 mpi4py==4.1.2
# Usage (device, carry .whl and .deps): [TESTS=0] [TEST_TIMEOUT=300] [EXAMPLE_TIMEOUT=120]
#   scripts/gpu-wheel.sh
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
build=build/gpu-mpich-wheel
site=/tmp/site
log=$OUT/wheel.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } |
  tee "$log"

# 1. The wheels: nothing below makes sense without them.
ls .whl/*.whl >/dev/null 2>&1 || { echo "== no .whl/*.whl: carry .whl" | tee -a "$log"; exit 1; }
if ! { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; }; then
  echo "== pip could not install .whl/*.whl" | tee -a "$log"
  exit 1
fi
python3 - "$site" .whl/mpich-*.whl <<'EOF' 2>&1 | tee -a "$log"
import os, sys, zipfile
dest, wheel = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        parts = info.filename.split("/")
        if len(parts) < 4 or not parts[0].endswith(".data") or parts[1:3] != ["data", "lib"]:
            continue
        path = os.path.join(dest, *parts[2:])
        if info.is_dir():
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as out:
            out.write(src.read())
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
EOF
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/hydra_pmi_proxy lib/libmpi.so.12 include/mpi.h; do
  [[ -e $site/$f ]] || { echo "== the MPICH wheel gave no $site/$f" | tee -a "$log"; exit 1; }
done
{ "$site/bin/mpichversion" | head -4; "$site/bin/mpicc" -show; } 2>&1 | tee -a "$log"
# What the examples' ranks see: the wheel's mpi4py on the wheel's libmpi.so.12, the system CuPy.
export LD_LIBRARY_PATH=$site/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PYTHON=$(command -v python3)
export MPI4PY_MPIABI=mpich PYTHON STRIDER_WHEEL_PREFIX=$site
"$PYTHON" - <<'EOF' 2>&1 | tee -a "$log"
import mpi4py
mpi4py.rc.initialize = False
from mpi4py import MPI
print("mpi4py", mpi4py.__version__, "from", mpi4py.__file__)
print(MPI.Get_library_version().splitlines()[0])
if not mpi4py.__file__.startswith("/tmp/site/"):
    print("WARNING: this mpi4py is not the wheel's (/tmp/site)")
import cupy
print("CuPy", cupy.__version__, "from", cupy.__file__)
EOF
echo "== wheels installed after $((SECONDS - start)) s" | tee -a "$log"

# 2. Configure and build (as gpu_build, but on the wheel's MPICH).
built=0
if ! cmake -S . -B "$build" -G Ninja -DSTRIDER_MPI=mpich-wheel -DSTRIDER_WHEEL_PREFIX=$site \
    -DSTRIDER_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" \
    >"$OUT/extras/configure-wheel.txt" 2>&1; then
  echo "== configure failed after $((SECONDS - start)) s" | tee -a "$log"
  tail -20 "$OUT/extras/configure-wheel.txt" | tee -a "$log"
elif ! cmake --build "$build" -j "$(nproc)" >"$OUT/extras/build-wheel.txt" 2>&1; then
  echo "== build failed after $((SECONDS - start)) s" | tee -a "$log"
  grep -E "error|FAILED" "$OUT/extras/build-wheel.txt" | head -20 | tee -a "$log"
  # The library alone, for the example, where only some test or benchmark failed to build.
  cmake --build "$build" --target strider >>"$OUT/extras/build-wheel.txt" 2>&1
else
  built=1
  echo "== built in $((SECONDS - start)) s" | tee -a "$log"
fi
lib=$PWD/$build/src/libstrider.so

# 3. The GPU tests (the mpi4py_cupy ctest entries among them, on PYTHON above).
[[ $built == 1 && ${TESTS:-1} == 1 ]] && gpu_tests "$log" 300 ctest-gpu-wheel.txt

# 4. The mpi4py + CuPy example on the wheel's mpiexec: with Strider (must pass), then without.
example() {
  STRIDER_EXAMPLE_TIMEOUT=$1 examples/mpi4py_cupy/run.sh --mpi mpich-wheel \
    --launcher "$site/bin/mpiexec" "${@:3}" >"$OUT/$2" 2>&1
  local rc=$?
  echo "== mpi4py+cupy example ${*:3}: exit $rc after $((SECONDS - start)) s" | tee -a "$log"
  grep -E "^run.sh: |^SKIP" "$OUT/$2" | tail -4 | tee -a "$log"
}
if [[ -f $lib ]]; then
  example "${EXAMPLE_TIMEOUT:-120}" mpi4py-cupy-wheel.txt "$lib"
else
  echo "== no $lib: the example with Strider not run" | tee -a "$log"
fi
example $((${EXAMPLE_TIMEOUT:-120} / 2)) mpi4py-cupy-wheel-without.txt --without-strider

tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"
