# One line per part of the build left out for a missing optional package, printed at configure
# time and kept in <build>/strider-skipped.txt, where `make demo`, `make test` and
# scripts/gpu-check.sh read it back (a rebuild does not configure again).
set(STRIDER_SKIP_NOTES_FILE ${PROJECT_BINARY_DIR}/strider-skipped.txt)
file(WRITE ${STRIDER_SKIP_NOTES_FILE} "")

# strider_skip_note(part...): the parts are joined, so long notes can be split across lines.
# (ARGVn, not ARGV: a ';' in a note must not split it.)
function(strider_skip_note)
  set(text "")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE ${last})
    string(APPEND text "${ARGV${i}}")
  endforeach()
  message(NOTICE "Strider: ${text}")
  file(APPEND ${STRIDER_SKIP_NOTES_FILE} "${text}\n")
endfunction()
