// The entry points of MPI-4's large-count collectives (`_c`): parameter-list helpers and the
// persistent form, MPI_<Name>_init_c, shared by collectives_mpi4.cpp (scalar counts) and
// collectives_mpi4_arrays.cpp (count arrays).
#pragma once

#include <mpi.h>

#include "calls/deferred_sends.hpp"
#include "calls/persistent_requests.hpp"
#include "collective/form.hpp"
#include "interpose/export.hpp"
#include "transfer/next.hpp"
#include "transfer/requests.hpp"

// A blocking form's parameter list (or argument list) with the nonblocking form's request, or
// the persistent form's info and request, appended; and a parenthesized list unwrapped.
#define STRIDER_WITH_REQUEST(...) (__VA_ARGS__, MPI_Request * request)
#define STRIDER_AND_REQUEST(...) (__VA_ARGS__, request)
#define STRIDER_WITH_INFO(...) (__VA_ARGS__, MPI_Info info, MPI_Request * request)
#define STRIDER_AND_INFO(...) (__VA_ARGS__, info, request)
#define STRIDER_ARGS(...) __VA_ARGS__

// MPI_<Name>_init_c, where the MPI has persistent collectives: PARAMS and ARGS the blocking
// form's parameter and argument lists, BUFFERS its buffers (parenthesized), and `...` the body of
// the persistent form's serve(form) (calls/persistent_requests.hpp), in which `next()` is the
// MPI's own init on the application's arguments.
#if STRIDER_HAVE_MPI4_PERSISTENT_COLL
#define STRIDER_LARGE_COUNT_INIT(Name, IName, BUFFERS, PARAMS, ARGS, ...)                        \
  STRIDER_EXPORT int MPI_##Name##_init_c STRIDER_WITH_INFO PARAMS {                              \
    const strider::calls::EntryCall entry;                                                       \
    strider::transfer::ProgressOrphans progress;                                                 \
    const auto next = [&] { return STRIDER_NEXT(MPI_##Name##_init_c) STRIDER_AND_INFO ARGS; };   \
    return strider::calls::persistent_collective(                                                \
        comm, "MPI_" #Name "_init_c", "MPI_" #IName "_c", {STRIDER_ARGS BUFFERS}, info, request, \
        [&](const strider::collective::Form& form) { __VA_ARGS__ }, next);                       \
  }
#else
#define STRIDER_LARGE_COUNT_INIT(...)
#endif

// The three `_c` entry points of a collective: PARAMS and ARGS the blocking form's parameter and
// argument lists, BUFFERS its buffers (parenthesized), and SERVE a callable, called as
// SERVE(form, original) in each form, `original` the application's own call to the MPI in it.
#define STRIDER_LARGE_COUNT_ENTRIES(Name, IName, BUFFERS, PARAMS, ARGS, SERVE)                    \
  STRIDER_EXPORT int MPI_##Name##_c PARAMS {                                                      \
    const strider::calls::EntryCall entry;                                                        \
    strider::transfer::ProgressOrphans progress;                                                  \
    return (SERVE)(strider::collective::Form{},                                                   \
                   [&] { return STRIDER_NEXT(MPI_##Name##_c) ARGS; });                            \
  }                                                                                               \
  STRIDER_EXPORT int MPI_##IName##_c STRIDER_WITH_REQUEST PARAMS {                                \
    const strider::calls::EntryCall entry;                                                        \
    strider::transfer::ProgressOrphans progress;                                                  \
    const auto original = [&] { return STRIDER_NEXT(MPI_##IName##_c) STRIDER_AND_REQUEST ARGS; }; \
    if (request == nullptr) return original(); /* the MPI reports it */                           \
    return (SERVE)(strider::collective::Form{request}, original);                                 \
  }                                                                                               \
  STRIDER_LARGE_COUNT_INIT(Name, IName, BUFFERS, PARAMS, ARGS, return (SERVE)(form, next);)
