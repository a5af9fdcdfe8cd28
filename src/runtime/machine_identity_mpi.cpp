#include <mpi.h>

#include <string>

#include "runtime/machine_identity.hpp"

namespace strider::runtime {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string s(text, static_cast<std::size_t>(length));
  s = s.substr(0, s.find('\n'));
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\0')) {
    s.pop_back();
  }
  return s;
}

}  // namespace strider::runtime
