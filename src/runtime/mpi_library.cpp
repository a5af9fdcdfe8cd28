#include "runtime/mpi_library.hpp"

#include <mpi.h>

#include <cctype>
#include <cstdlib>

namespace strider::runtime {
namespace {

// The first "a.b[.c]" at or after `at`.
void read_version(std::string_view text, std::size_t at, MpiLibrary& out) {
  while (at < text.size() && !std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  int* parts[3] = {&out.major, &out.minor, &out.patch};
  for (int k = 0; k < 3 && at < text.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(text[at]))) break;
    int value = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      value = value * 10 + (text[at++] - '0');
    }
    *parts[k] = value;
    if (at >= text.size() || text[at] != '.') break;
    ++at;
  }
}

}  // namespace

MpiLibrary parse_mpi_library(std::string_view text) {
  MpiLibrary out;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  std::string_view first = text.substr(0, text.find('\n'));
  while (!first.empty() &&
         (std::isspace(static_cast<unsigned char>(first.back())) || first.back() == '\0')) {
    first.remove_suffix(1);
  }
  out.name = std::string(first);
  if (text.starts_with("Open MPI")) {
    out.family = MpiFamily::OpenMpi;
    read_version(text, 8, out);
  } else if (text.starts_with("MPICH")) {
    out.family = MpiFamily::Mpich;
    read_version(text, text.find("Version"), out);
  }
  return out;
}

const MpiLibrary& mpi_library() {
  // Leaked: MPI_Finalize may run from an atexit handler (config.cpp).
  static const MpiLibrary* library = new MpiLibrary([] {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS || length <= 0) {
      return MpiLibrary{};
    }
    return parse_mpi_library(std::string_view(text, static_cast<std::size_t>(length)));
  }());
  return *library;
}

const char* built_abi() {
#if defined(MPI_ABI_VERSION)
  return "MPI-5 standard";
#elif defined(OPEN_MPI)
  return "Open MPI";
#elif defined(MPICH_VERSION)
  return "MPICH";
#else
  return "unknown";
#endif
}

const char* abi_mismatch(std::string_view built, const MpiLibrary& mpi,
                         std::string_view library_file) {
  const std::size_t slash = library_file.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? library_file : library_file.substr(slash + 1);
  const bool standard_library = base.starts_with("libmpi_abi");
  if (built == "MPI-5 standard") {
    if (!library_file.empty() && !standard_library) {
      return "built for the MPI-5 standard ABI, but the MPI's library is a native one";
    }
    return nullptr;
  }
  if (standard_library)
    return "built for a native ABI, but the MPI's library is the MPI-5 standard ABI's";
  if (built == "MPICH" && mpi.family == MpiFamily::OpenMpi) {
    return "built for MPICH's ABI, but the MPI is Open MPI";
  }
  if (built == "Open MPI" && mpi.family == MpiFamily::Mpich) {
    return "built for Open MPI's ABI, but the MPI is MPICH";
  }
  return nullptr;
}

const char* to_string(MpiFamily family) {
  switch (family) {
    case MpiFamily::OpenMpi:
      return "Open MPI";
    case MpiFamily::Mpich:
      return "MPICH";
    case MpiFamily::Other:
      break;
  }
  return "another MPI";
}

}  // namespace strider::runtime
