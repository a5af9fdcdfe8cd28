#include "transfer/cuda_aware.hpp"

#include <dlfcn.h>

#include "runtime/log.hpp"
#include "transfer/settings.hpp"

namespace strider::transfer {
namespace {

bool ask() {
  if (const auto forced = runtime::forced(settings().mpi_cuda_aware)) return *forced;
  // Open MPI (mpi-ext.h) and MPICH both name it so; absent elsewhere.
  using Query = int (*)();
  auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  const bool aware = query != nullptr && query() == 1;
  runtime::log(runtime::LogLevel::Info, "the MPI is %sCUDA-aware (%s)", aware ? "" : "not ",
               query ? "MPIX_Query_cuda_support" : "no MPIX_Query_cuda_support");
  return aware;
}

}  // namespace

bool mpi_cuda_aware() {
  static const bool aware = ask();
  return aware;
}

}  // namespace strider::transfer
