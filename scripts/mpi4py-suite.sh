#!/usr/bin/env bash
# An external oracle: mpi4py's own test suite (test/main.py of the mpi4py sdist, the version
# .venv-mpi holds) on the MPICH wheel (.venv-mpi, scripts/install-wheel-mpi.sh), run without
# Strider and then with build/mpich-wheel's libstrider.so preloaded under the given Strider
# settings (default: STRIDER_P2P_HOST=pack STRIDER_COLL_HOST=pack, which send host buffers
# through Strider's own paths). Fails where any test's result differs between the two runs
# (each rank's "test ... ok/FAIL/ERROR/skipped" lines), or where either run stops early.
# The sdist is downloaded once into .deps/mpi4py-suite/ (git-ignored). Logs there too.
# Usage: [NP=2] [TIMEOUT=900] scripts/mpi4py-suite.sh [VAR=value ...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv-mpi lib=$root/build/mpich-wheel/src/libstrider.so
work=$root/.deps/mpi4py-suite np=${NP:-2}
[[ -x $venv/bin/mpiexec && -f $lib ]] ||
  { echo "mpi4py-suite: needs .venv-mpi (make deps) and $lib (build mpich-wheel)" >&2; exit 2; }
settings=("$@")
[[ ${#settings[@]} -gt 0 ]] || settings=(STRIDER_P2P_HOST=pack STRIDER_COLL_HOST=pack)
version=$("$venv/bin/python" -c 'import mpi4py; print(mpi4py.__version__)')
src=$work/mpi4py-$version
mkdir -p "$work"
if [[ ! -f $src/test/main.py ]]; then
  "$venv/bin/python" -m pip download -q --no-deps --no-binary :all: "mpi4py==$version" -d "$work" &&
    tar xzf "$work/mpi4py-$version.tar.gz" -C "$work" ||
    { echo "mpi4py-suite: could not fetch the mpi4py $version sdist" >&2; exit 2; }
fi
# Each rank's output to its own file (the ranks' lines would interleave).
cat >"$work/rank.sh" <<'WRAP'
#!/bin/sh
p=$1; shift
exec "$@" >"$p.rank${PMI_RANK:-0}" 2>&1
WRAP
chmod +x "$work/rank.sh"
run() {  # name, env assignments...
  local name=$1; shift
  timeout "${TIMEOUT:-900}" env -u LD_LIBRARY_PATH -u MPI4PY_MPIABI "$venv/bin/mpiexec" -n "$np" \
    "$work/rank.sh" "$work/$name" env "$@" "$venv/bin/python" "$src/test/main.py" -v
  echo "mpi4py-suite: $name exit $?"
  for f in "$work/$name".rank*; do grep -E '^(Ran|OK|FAILED)' "$f" | tr '\n' ' '; echo; done
}
results() { grep -E ' \.\.\. ' "$1" | sed -E 's/ in [0-9.]+s//' | sort; }
run without LD_PRELOAD=
run with LD_PRELOAD="$lib" "${settings[@]}"
status=0
for f in "$work"/without.rank*; do
  g=$work/with.${f##*.}
  grep -qE '^Ran ' "$g" || { echo "mpi4py-suite: ${g##*/} stopped early"; status=1; continue; }
  if ! diff <(results "$f") <(results "$g") >"$g.diff"; then
    echo "mpi4py-suite: ${g##*/} differs from the run without Strider:"; head -20 "$g.diff"
    status=1
  fi
done
[[ $status == 0 ]] && echo "mpi4py-suite: every test's result as without Strider (${settings[*]})"
exit $status
