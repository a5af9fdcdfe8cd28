// What the MPIs' library version texts say (texts as Open MPI 4.1.4, MPICH 4.0.2 and the MPICH
// 5.0.2 wheel print them).
#include "runtime/mpi_library.hpp"

#include <gtest/gtest.h>

namespace strider::runtime {
namespace {

TEST(MpiLibrary, OpenMpi) {
  const MpiLibrary m = parse_mpi_library(
      "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022");
  EXPECT_EQ(m.family, MpiFamily::OpenMpi);
  EXPECT_EQ(m.major, 4);
  EXPECT_EQ(m.minor, 1);
  EXPECT_EQ(m.patch, 4);
  EXPECT_EQ(m.name.rfind("Open MPI v4.1.4", 0), 0u);
}

TEST(MpiLibrary, Mpich) {
  const MpiLibrary m4 = parse_mpi_library(
      "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n"
      "MPICH ABI:\t14:2:2\n");
  EXPECT_EQ(m4.family, MpiFamily::Mpich);
  EXPECT_EQ(m4.major, 4);
  EXPECT_EQ(m4.minor, 0);
  EXPECT_EQ(m4.patch, 2);
  EXPECT_EQ(m4.name, "MPICH Version:\t4.0.2");
  const MpiLibrary m5 = parse_mpi_library("MPICH Version:      5.0.2\nMPICH Release date: 2025");
  EXPECT_EQ(m5.family, MpiFamily::Mpich);
  EXPECT_EQ(m5.major, 5);
  EXPECT_EQ(m5.patch, 2);
}

TEST(MpiLibrary, OtherAndEmpty) {
  const MpiLibrary intel = parse_mpi_library("Intel(R) MPI Library 2021.10 for Linux* OS\n");
  EXPECT_EQ(intel.family, MpiFamily::Other);
  EXPECT_EQ(intel.major, 0);
  const MpiLibrary none = parse_mpi_library("");
  EXPECT_EQ(none.family, MpiFamily::Other);
  EXPECT_TRUE(none.name.empty());
}

TEST(AbiMismatch, EachBuildServesItsOwnAbiOnly) {
  const MpiLibrary mpich = parse_mpi_library("MPICH Version:      5.0.2\nMPICH Release date: ...");
  const MpiLibrary open_mpi = parse_mpi_library("Open MPI v4.1.4, package: Debian OpenMPI");
  const MpiLibrary intel = parse_mpi_library("Intel(R) MPI Library 2021.10 for Linux* OS");
  // Matching builds and libraries: served.
  EXPECT_EQ(abi_mismatch("MPICH", mpich, "/usr/lib/libmpich.so.12"), nullptr);
  EXPECT_EQ(abi_mismatch("MPICH", mpich, "/venv/lib/libmpi.so.12"), nullptr);
  EXPECT_EQ(abi_mismatch("MPICH", intel, "/opt/intel/lib/release/libmpi.so.12"), nullptr);
  EXPECT_EQ(abi_mismatch("Open MPI", open_mpi, "/usr/lib/libmpi.so.40"), nullptr);
  EXPECT_EQ(abi_mismatch("MPI-5 standard", mpich, "/venv/lib/libmpi_abi.so.1"), nullptr);
  // Only the file's name counts, not its folders.
  EXPECT_EQ(abi_mismatch("MPICH", mpich, "/opt/libmpi_abi_tools/lib/libmpi.so.12"), nullptr);
  // An unknown library file says nothing about the ABI.
  EXPECT_EQ(abi_mismatch("MPI-5 standard", mpich, ""), nullptr);
  // Mismatches.
  EXPECT_NE(abi_mismatch("MPICH", open_mpi, "/usr/lib/libmpi.so.40"), nullptr);
  EXPECT_NE(abi_mismatch("Open MPI", mpich, "/usr/lib/libmpich.so.12"), nullptr);
  EXPECT_NE(abi_mismatch("MPICH", mpich, "/venv/lib/libmpi_abi.so.1"), nullptr);
  EXPECT_NE(abi_mismatch("Open MPI", open_mpi, "/opt/ompi6/lib/libmpi_abi.so.1"), nullptr);
  EXPECT_NE(abi_mismatch("MPI-5 standard", mpich, "/venv/lib/libmpi.so.12"), nullptr);
  EXPECT_NE(abi_mismatch("MPI-5 standard", open_mpi, "/usr/lib/libmpi.so.40"), nullptr);
}

}  // namespace
}  // namespace strider::runtime
