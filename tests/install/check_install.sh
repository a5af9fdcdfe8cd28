#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then builds and runs a consumer project through
# find_package(Strider) and checks the pkg-config file.
# Usage: check_install.sh BUILD_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
build=$1; shift
mpiexec=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in lib/libstrider.so include/strider/strider.h bin/strider-explain \
         lib/cmake/Strider/StriderConfig.cmake lib/pkgconfig/strider.pc; do
  [[ -e "$work/prefix/$f" ]] || { echo "missing after install: $f"; exit 1; }
done
if command -v pkg-config >/dev/null; then
  PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --libs strider | grep -q -- "-lstrider"
else
  echo "pkg-config check skipped: pkg-config not found (Debian: pkg-config)"
fi
mpicc=$(grep '^MPI_C_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
cmake -S "$(dirname "$0")/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DMPI_C_COMPILER="$mpicc" -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build "$work/consumer" >/dev/null
STRIDER_HOST_ENGINE=on "$mpiexec" -n 1 "$@" "$work/consumer/consumer"
