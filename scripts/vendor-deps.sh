#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with the optional build dependencies from this machine's installed
# packages, for a machine that has none and no package registry (a GPU box): CMake finds them
# there by itself. Carry or copy .deps/ along with the tree.
#   .deps/googletest     <- /usr/src/googletest       (Debian: libgtest-dev / googletest)
#   .deps/CLI11/CLI      <- /usr/include/CLI          (Debian: libcli11-dev)
#   .deps/nlohmann_json/nlohmann <- /usr/include/nlohmann (Debian: nlohmann-json3-dev)
# Usage: scripts/vendor-deps.sh [--force]   (--force replaces what .deps/ already holds)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
force=0; [[ ${1:-} == --force ]] && force=1
copy() {  # copy SOURCE DEST PACKAGE
  if [[ -e $2 && $force == 0 ]]; then echo "vendor-deps: $2 already there"; return; fi
  if [[ ! -d $1 ]]; then echo "vendor-deps: $1 not found (install $3): skipped"; return; fi
  rm -rf "$2"; mkdir -p "$(dirname "$2")"; cp -r "$1" "$2"
  echo "vendor-deps: $2 <- $1 ($(du -sh "$2" | cut -f1))"
}
copy /usr/src/googletest .deps/googletest libgtest-dev
copy /usr/include/CLI .deps/CLI11/CLI libcli11-dev
copy /usr/include/nlohmann .deps/nlohmann_json/nlohmann nlohmann-json3-dev
