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

}  // namespace strider::transfer

// Inside an interposed MPI_X: the function to forward to.
#define STRIDER_NEXT(name)                                                               \
  ([]() {                                                                                \
    static auto* const next = ::strider::transfer::resolve_next(#name, &name, &P##name); \
    return next;                                                                         \
  }())
