// What leaves libstrider.so: the MPI_* entry points and the strider_* API, nothing else
// (src/CMakeLists.txt hides every other symbol).
#pragma once

#define STRIDER_EXPORT extern "C" __attribute__((visibility("default")))

// A nonblocking call made without a request handle is the application's error: it goes to the
// MPI as made, which reports it (Strider would store a request through the null pointer, or take
// the call for its blocking form). ARGS: the call's arguments before `request`. After the
// entry's EntryCall: the progress thread may be in the MPI until then.
#define STRIDER_NULL_REQUEST_IS_THE_MPIS(Name, ...) \
  if (request == nullptr) return STRIDER_NEXT(Name)(__VA_ARGS__, request)
