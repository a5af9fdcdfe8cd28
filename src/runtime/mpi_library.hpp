// The MPI the process runs on, asked at run time (MPI_Get_library_version, which the standard
// allows before MPI_Init), and the ABI this build of Strider was compiled for. Behaviours that
// differ between MPIs are chosen from the former, not from the headers Strider was built with,
// so that one build serves every MPI of its ABI (e.g. MPICH 4 and 5, or MPICH and its
// derivatives).
#pragma once

#include <string>
#include <string_view>

namespace strider::runtime {

enum class MpiFamily { OpenMpi, Mpich, Other };

struct MpiLibrary {
  MpiFamily family = MpiFamily::Other;
  int major = 0, minor = 0, patch = 0;  // 0 where the text names no version
  std::string name;                     // the text's first line
};

// Pure: what a library version text says ("Open MPI v4.1.4, ...", "MPICH Version: 4.0.2 ...").
MpiLibrary parse_mpi_library(std::string_view text);

// The process's MPI (asked once; an empty MpiLibrary where the MPI cannot say).
const MpiLibrary& mpi_library();

// The ABI this build was compiled for: "Open MPI", "MPICH" or "MPI-5 standard".
const char* built_abi();

const char* to_string(MpiFamily family);

// Pure: why the MPI `mpi`, whose functions live in `library_file` (empty where unknown), cannot
// be served by a build for the ABI `built` (built_abi()), or null where nothing says so: an Open
// MPI build on MPICH or the reverse, a native build on an MPI-5 standard ABI library
// (libmpi_abi) or the reverse. MPIs that name no family (an MPICH derivative) pass.
const char* abi_mismatch(std::string_view built, const MpiLibrary& mpi,
                         std::string_view library_file);

}  // namespace strider::runtime
