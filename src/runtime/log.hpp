// Logging to stderr, each line prefixed with the MPI rank, filtered by STRIDER_LOG.
#pragma once

#include "runtime/config.hpp"

namespace strider::runtime {

bool log_enabled(LogLevel level);

// printf-style; one line per call (a newline is added).
void log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

// Called once MPI knows the rank; before that, lines carry the launcher's rank variable if any.
void set_log_rank(int rank);

// Prints the configuration problems (invalid variable values) once.
void report_config_problems();

}  // namespace strider::runtime
