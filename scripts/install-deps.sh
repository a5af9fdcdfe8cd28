#!/usr/bin/env bash
# Checks what Strider needs and installs what is missing (apt-get, as root, where a package
# registry answers; INSTALL_DEPS=0 never tries). Required: a C++ compiler, CMake, make and the
# MPI implementation(s) given (default: openmpi mpich). Optional, their parts left out with a
# note when missing: Ninja, pkg-config, GoogleTest, CLI11, nlohmann-json (.deps/ counts: see
# scripts/vendor-deps.sh). Exit status 0 when everything required is there afterwards.
# --report: print "ok MPI" or "skip MPI: why" per MPI on stdout; exit 1 only when the compiler,
# CMake or make is missing, or (REQUIRE_ALL_MPIS=1) a Debian MPI is. mpich-wheel and mpich-abi
# (MPICH 5 from PyPI: scripts/install-wheel-mpi.sh) are only ever skipped, with a note.
#
# Usage: scripts/install-deps.sh [--report] [openmpi] [mpich] [mpich-wheel] [mpich-abi]
set -u
cd "$(dirname "$0")/.." || exit 2
report=0
case "${1:-}" in
  --help | -h) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --report) report=1; shift ;;
esac
mpis=("$@")
[[ ${#mpis[@]} -eq 0 ]] && mpis=(openmpi mpich)

have() { command -v "$1" >/dev/null; }
any_file() { for f in "$@"; do [[ -e $f ]] && return 0; done; return 1; }
inc=(/usr/include /usr/local/include)

# name ~ Debian packages ~ probe (a shell command) ~ what is lost without it (optional only)
required=(
  "C++ compiler~g++~have c++ || have g++~"
  "CMake~cmake~have cmake~"
  "make~make~have make~"
)
optional=(
  "Ninja~ninja-build~have ninja~builds use Unix Makefiles instead"
  "pkg-config~pkg-config~have pkg-config~the install test skips its pkg-config check"
  "GoogleTest~libgtest-dev~any_file ${inc[*]/%//gtest/gtest.h} /usr/src/googletest/CMakeLists.txt .deps/googletest/CMakeLists.txt~unit, MPI and GPU tests are not built (or -DSTRIDER_GTEST_SOURCE_DIR=...)"
  "CLI11~libcli11-dev~any_file ${inc[*]/%//CLI/CLI.hpp} .deps/CLI11/CLI/CLI.hpp~strider-measure, bench/select and bench/validate are not built (or -DSTRIDER_CLI11_INCLUDE_DIR=...)"
  "nlohmann-json~nlohmann-json3-dev~any_file ${inc[*]/%//nlohmann/json.hpp} .deps/nlohmann_json/nlohmann/json.hpp~perf files cannot be read (built-in model defaults), no strider-measure (or -DSTRIDER_JSON_INCLUDE_DIR=...)"
)
mpi_entry() {  # the same fields for one MPI implementation (Debian's suffixed binaries)
  case $1 in
    openmpi) echo "Open MPI~libopenmpi-dev openmpi-bin~have mpicc.openmpi && have mpicxx.openmpi && have mpirun.openmpi~" ;;
    mpich) echo "MPICH~libmpich-dev mpich~have mpicc.mpich && have mpicxx.mpich && { have mpirun.mpich || have mpiexec.mpich; }~" ;;
    mpich-wheel | mpich-abi) echo "MPICH 5 wheel~~scripts/install-wheel-mpi.sh --check >/dev/null 2>&1~" ;;
    *) return 1 ;;
  esac
}
for m in "${mpis[@]}"; do
  mpi_entry "$m" >/dev/null || {
    echo "install-deps: unknown MPI '$m' (openmpi, mpich, mpich-wheel, mpich-abi)" >&2; exit 2; }
done
is_wheel() { [[ $1 == mpich-wheel || $1 == mpich-abi ]]; }
wheel_why=""
for m in "${mpis[@]}"; do
  if is_wheel "$m" && [[ ${INSTALL_DEPS:-1} != 0 ]]; then
    wheel_why=$(scripts/install-wheel-mpi.sh 2>&1 >/dev/null)
    break
  fi
done

probe_of() { local rest=${1#*"~"*"~"}; echo "${rest%%"~"*}"; }
packages_of() { local rest=${1#*"~"}; echo "${rest%%"~"*}"; }
missing_entries() { for e in "$@"; do eval "$(probe_of "$e")" 2>/dev/null || echo "$e"; done; }

all=("${required[@]}" "${optional[@]}")
for m in "${mpis[@]}"; do all+=("$(mpi_entry "$m")"); done
mapfile -t missing < <(missing_entries "${all[@]}")

# Try to install what is missing: root, apt-get, and a registry that answers.
pkgs=()
for e in "${missing[@]}"; do read -r -a p <<<"$(packages_of "$e")"; pkgs+=("${p[@]}"); done
if [[ ${#pkgs[@]} -gt 0 && ${INSTALL_DEPS:-1} != 0 ]] && have apt-get && [[ $(id -u) -eq 0 ]]; then
  echo "install-deps: installing ${pkgs[*]}" >&2
  t=(); have timeout && t=(timeout 600)
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${t[@]}" apt-get update -qq && "${t[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } \
      >/tmp/strider-apt.log 2>&1; then
    echo "install-deps: apt-get could not install them (log: /tmp/strider-apt.log)" >&2
  fi
  mapfile -t missing < <(missing_entries "${all[@]}")
fi

status=0
is_missing() { local e; for e in "${missing[@]}"; do [[ $e == "$1" ]] && return 0; done; return 1; }
for e in "${required[@]}"; do
  if is_missing "$e"; then
    echo "install-deps: required ${e%%"~"*} missing (Debian: $(packages_of "$e"))" >&2
    status=1
  fi
done
for e in "${optional[@]}"; do
  is_missing "$e" && echo "install-deps: optional ${e%%"~"*} missing (Debian: $(packages_of "$e")): ${e##*"~"}" >&2
done
hint=""; have apt-get && [[ $(id -u) -ne 0 ]] && hint="; run make as root to install them"
for m in "${mpis[@]}"; do
  e=$(mpi_entry "$m")
  if ! is_missing "$e"; then
    [[ $report == 1 ]] && echo "ok $m"
    continue
  fi
  if is_wheel "$m"; then
    why="no MPICH wheel in .venv-mpi (${wheel_why:-INSTALL_DEPS=0})"
    echo "install-deps: $m: $why" >&2
    [[ $report == 1 ]] && echo "skip $m: $why"
    continue
  fi
  why="${e%%"~"*} not installed (Debian: $(packages_of "$e")$hint)"
  echo "install-deps: $m: $why" >&2
  [[ $report == 1 ]] && echo "skip $m: $why"
  if [[ $report == 0 || ${REQUIRE_ALL_MPIS:-0} == 1 ]]; then status=1; fi
done
exit $status
