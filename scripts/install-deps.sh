#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Strider needs, when they are missing.
# As root it runs apt-get; otherwise it lists what to install. Packages that cannot be had
# (a machine without a package registry) are reported; the exit status says whether the
# packages for MPI implementation(s) given as arguments are all present afterwards.
#
# Usage: scripts/install-deps.sh [openmpi] [mpich]    (--help for this text)
set -u
if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
mpis=("$@")
[[ ${#mpis[@]} -eq 0 ]] && mpis=(openmpi mpich)

common=(cmake ninja-build g++ make pkg-config libgtest-dev libcli11-dev nlohmann-json3-dev)
declare -A mpi_packages=([openmpi]="libopenmpi-dev openmpi-bin" [mpich]="libmpich-dev mpich")

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

wanted=("${common[@]}")
for m in "${mpis[@]}"; do
  [[ -n "${mpi_packages[$m]:-}" ]] || { echo "install-deps: unknown MPI '$m'" >&2; exit 2; }
  read -r -a pk <<<"${mpi_packages[$m]}"
  wanted+=("${pk[@]}")
done

missing=()
for p in "${wanted[@]}"; do installed "$p" || missing+=("$p"); done
if [[ ${#missing[@]} -eq 0 ]]; then exit 0; fi

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-deps: not a Debian/Ubuntu system; install by hand: ${missing[*]}" >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run 'sudo apt-get install ${missing[*]}' (or run make as root)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >/tmp/strider-apt.log 2>&1; then
  echo "install-deps: apt-get failed (log: /tmp/strider-apt.log)" >&2
fi
still=()
for p in "${missing[@]}"; do installed "$p" || still+=("$p"); done
if [[ ${#still[@]} -gt 0 ]]; then
  echo "install-deps: still missing: ${still[*]}" >&2
  exit 1
fi
exit 0
