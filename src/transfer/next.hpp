// The next definition of an MPI symbol: the MPI library's, or the next tool's when several
// PMPI-style tools are stacked. Resolved once per symbol (thread-safe static init), by name
// alone: libstrider.so names no MPI library and takes no address of a PMPI_ function at link
// time, so it loads before any MPI and serves whichever the process brings, also one loaded
// privately (RTLD_LOCAL, as mpi4py does), which the first resolution makes global.
#pragma once

namespace strider::transfer {

// The next definition of `name` after Strider (never `self`), else the MPI's `pmpi_name`. Where
// neither is found the process stops with a message naming it (called only when the application
// calls `name`, which its MPI therefore has).
void* resolve_next_symbol(const char* name, const char* pmpi_name, const void* self);

template <class Fn>
Fn* resolve_next(const char* name, const char* pmpi_name, Fn* self) {
  return reinterpret_cast<Fn*>(
      resolve_next_symbol(name, pmpi_name, reinterpret_cast<const void*>(self)));
}

// The file of the MPI library the process runs on (dladdr of its PMPI_Get_library_version),
// empty where none is found; asked once, after MPI_Init.
const char* mpi_library_file();

}  // namespace strider::transfer

// Inside an interposed MPI_X: the function to forward to.
#define STRIDER_NEXT(name)                                                                \
  ([]() {                                                                                 \
    static auto* const next = ::strider::transfer::resolve_next(#name, "P" #name, &name); \
    return next;                                                                          \
  }())
