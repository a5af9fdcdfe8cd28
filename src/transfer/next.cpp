#include "transfer/next.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace strider::transfer {
namespace {

// The MPI library sonames, the build's own ABI first; the others too, so that an MPI of another
// ABI is found and reported at MPI_Init (lifecycle.cpp) rather than missed.
#if defined(MPI_ABI_VERSION)
constexpr const char* kSonames[] = {"libmpi_abi.so.1", "libmpi_abi.so.0", "libmpi_abi.so",
                                    "libmpi.so.12",    "libmpich.so.12",  "libmpi.so.40"};
#elif defined(OPEN_MPI)
constexpr const char* kSonames[] = {"libmpi.so.40", "libmpi.so", "libmpi.so.12", "libmpich.so.12",
                                    "libmpi_abi.so.1"};
#else
constexpr const char* kSonames[] = {"libmpi.so.12", "libmpich.so.12", "libmpi.so",
                                    "libmpi_abi.so.1", "libmpi.so.40"};
#endif

// An MPI the process loaded privately, made global so that Strider's lazily bound PMPI_ calls
// find it (dlopen of a loaded library with RTLD_NOLOAD | RTLD_GLOBAL only promotes it). Null
// where the MPI is already global or none is loaded (yet: asked again next time).
void* private_mpi() {
  static std::mutex mutex;
  static void* found = nullptr;
  std::lock_guard lock(mutex);
  if (found != nullptr) return found;
  for (const char* soname : kSonames) {
    found = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL);
    if (found != nullptr) return found;
  }
  return nullptr;
}

}  // namespace

void* resolve_next_symbol(const char* name, const char* pmpi_name, const void* self) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (sym == self) sym = nullptr;
  if (sym == nullptr) sym = dlsym(RTLD_DEFAULT, pmpi_name);
  if (sym == nullptr) {
    if (void* mpi = private_mpi()) {
      sym = dlsym(mpi, name);
      if (sym == self || sym == nullptr) sym = dlsym(mpi, pmpi_name);
    }
  }
  if (sym == nullptr) {
    // Calling on would jump to address 0: say what is missing instead.
    std::fprintf(stderr,
                 "[strider] fatal: no MPI definition of %s found in this process (is its MPI "
                 "library loaded? LD_BIND_NOW must be unset)\n",
                 name);
    std::abort();
  }
  return sym;
}

const char* mpi_library_file() {
  // Asked after MPI_Init, when the MPI is global (a private one was promoted by then).
  // Leaked: MPI_Finalize may run from an atexit handler (runtime/config.cpp).
  static const std::string* file = new std::string([] {
    Dl_info info{};
    void* sym = dlsym(RTLD_DEFAULT, "PMPI_Get_library_version");
    if (sym == nullptr || dladdr(sym, &info) == 0 || info.dli_fname == nullptr) {
      return std::string();
    }
    return std::string(info.dli_fname);
  }());
  return file->c_str();
}

}  // namespace strider::transfer
