// The next definition of an MPI symbol: the MPI library's, or the next tool's when several
// PMPI-style tools are stacked. Resolved once per symbol (thread-safe static init).
#pragma once

#include <dlfcn.h>

namespace strider::transfer {

template <class Fn>
Fn* resolve_next(const char* name, Fn* self, Fn* pmpi) {
  void* sym = dlsym(RTLD_NEXT, name);
  // Without a next definition (static link, odd loaders) the profiling entry point is the MPI.
  if (sym == nullptr || sym == reinterpret_cast<void*>(self)) return pmpi;
  return reinterpret_cast<Fn*>(sym);
}

// The same by name alone, with no link-time reference to the PMPI twin (which an MPI may
// declare without defining it): null where neither is found.
template <class Fn>
Fn* resolve_next_by_name(const char* name, const char* pmpi_name, Fn* self) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (sym == nullptr || sym == reinterpret_cast<void*>(self)) sym = dlsym(RTLD_DEFAULT, pmpi_name);
  return reinterpret_cast<Fn*>(sym);
}

}  // namespace strider::transfer

// Inside an interposed MPI_X: the function to forward to.
#define STRIDER_NEXT(name)                                                               \
  ([]() {                                                                                \
    static auto* const next = ::strider::transfer::resolve_next(#name, &name, &P##name); \
    return next;                                                                         \
  }())

// The same for the generated entry points (cmake/flush_wrappers.py).
#define STRIDER_NEXT_BY_NAME(name)                                                                \
  ([]() {                                                                                         \
    static auto* const next = ::strider::transfer::resolve_next_by_name(#name, "P" #name, &name); \
    return next;                                                                                  \
  }())
