/* Strider's own C API: introspection for applications, tools and tests.
 *
 * An application never needs it: Strider works by interposing MPI calls. Programs that want to
 * report what Strider did may call these functions; to stay runnable without Strider, look
 * them up with dlsym(RTLD_DEFAULT, "strider_get_stats") instead of linking. */
#ifndef STRIDER_STRIDER_H
#define STRIDER_STRIDER_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strider_stats {
  uint64_t types_planned;     /* committed types Strider can pack */
  uint64_t types_unsupported; /* committed types left to the MPI */
  uint64_t packs_host;        /* MPI_Pack calls served by the host engine */
  uint64_t unpacks_host;      /* MPI_Unpack calls served by the host engine */
  uint64_t packs_forwarded;   /* MPI_Pack calls forwarded to the MPI */
  uint64_t unpacks_forwarded; /* MPI_Unpack calls forwarded to the MPI */
  uint64_t plans_cached;      /* plans in the cache now */
  uint64_t packs_gpu;         /* MPI_Pack calls served by the GPU engine */
  uint64_t unpacks_gpu;       /* MPI_Unpack calls served by the GPU engine */
  uint64_t packs_staged;      /* MPI_Pack calls on GPU buffers staged through host memory */
  uint64_t unpacks_staged;    /* MPI_Unpack calls on GPU buffers staged through host memory */
} strider_stats;

/* Library version, e.g. "0.1.0". */
const char* strider_version(void);

/* Copies the counters into *out. Returns 0. */
int strider_get_stats(strider_stats* out);

/* Writes a description of how Strider handles `type` (bounds, canonical form or the reason it
 * is left to the MPI), NUL-terminated and truncated to `size` bytes. Returns the full length
 * (excluding the NUL), or -1 if the type is unknown (uncommitted or invalid). */
int strider_describe_type(MPI_Datatype type, char* buffer, int size);

#ifdef __cplusplus
}
#endif

#endif /* STRIDER_STRIDER_H */
