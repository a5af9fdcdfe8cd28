#!/bin/sh
# finalize_at_exit_test (tests/mpi/CMakeLists.txt): runs `program` on 2 ranks with Strider
# preloaded, each rank under valgrind, and fails where the program fails or valgrind saw an
# invalid read, write or free with Strider in its stacks (the dynamic loader's own reports, such
# as its strncmp reading past a string's end, are not Strider's). Skips (77) without valgrind.
# Usage: finalize_at_exit.sh LIBSTRIDER PROGRAM MPIEXEC [MPIEXEC ARGUMENTS...]
command -v valgrind >/dev/null 2>&1 || exit 77
lib=$1 program=$2
shift 2
d=finalize_at_exit.vg
rm -rf "$d" && mkdir "$d" || exit 1
"$@" env LD_PRELOAD="$lib" STRIDER_P2P_HOST=pack STRIDER_COLL_HOST=pack \
  valgrind -q --log-file="$d/vg.%p" "$program" >"$d/out.txt" 2>&1
rc=$?
cat "$d/out.txt"
# One valgrind report is the lines from its "Invalid ..." line to the next blank report line.
bad=$(awk '/== Invalid (read|write|free)/ { inside = 1; block = "" }
           inside { block = block $0 "\n" }
           inside && /^==[0-9]+== *$/ { if (block ~ /strider/) printf "%s", block; inside = 0 }
           END { if (inside && block ~ /strider/) printf "%s", block }' "$d"/vg.*)
if [ -n "$bad" ]; then
  printf '%s\n' "$bad"
  echo "finalize_at_exit: invalid accesses in Strider's frames"
  exit 1
fi
[ "$rc" -eq 0 ] && grep -q 'No Errors' "$d/out.txt"
