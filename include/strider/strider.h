/* Strider's own C API: introspection for applications, tools and tests.
 *
 * An application never needs it: Strider works by interposing MPI calls. Programs that want to
 * report what Strider did may call these functions; to stay runnable without Strider, look
 * them up with dlsym(RTLD_DEFAULT, "strider_get_stats_sized") instead of linking. */
#ifndef STRIDER_STRIDER_H
#define STRIDER_STRIDER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fields are only ever added at the end, so a struct from an older header is a prefix of the
 * library's: strider_get_stats_sized fills as much of it as the caller says it has. */
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
  /* Point-to-point (send-side and receive-side operations, blocking or not). */
  uint64_t sends_packed;      /* sends whose buffer Strider packed into a wire buffer */
  uint64_t recvs_packed;      /* receives Strider unpacked from a wire buffer */
  uint64_t sends_forwarded;   /* sends handed to the MPI unchanged */
  uint64_t recvs_forwarded;   /* receives handed to the MPI unchanged */
  uint64_t transfers_device;  /* packed transfers by method: wire buffer in GPU memory */
  uint64_t transfers_oneshot; /* ... kernel straight into / out of mapped pinned memory */
  uint64_t transfers_staged;  /* ... GPU scratch plus a copy through pinned memory */
  uint64_t transfers_host;    /* ... host buffer packed by the CPU (STRIDER_P2P_HOST=pack) */
  uint64_t requests_pending;  /* Strider's requests not yet observed complete (now) */
  uint64_t pool_host_bytes;   /* pinned host memory the pools hold (now) */
  uint64_t pool_device_bytes; /* device memory the pools hold, all GPUs (now) */
  uint64_t pool_allocations;  /* cudaHostAlloc/cudaMalloc calls the pools made so far */
  /* Collectives (blocking or nonblocking calls). */
  uint64_t collectives_served;    /* run by Strider: packed wires or host mirrors */
  uint64_t collectives_forwarded; /* handed to the MPI unchanged */
  uint64_t
      persistent_refused; /* persistent calls refused: not served, GPU memory (MPI_ERR_BUFFER) */
  uint64_t collectives_same_node; /* of those served, moved GPU to GPU (no host memory) */
  /* Same-node point-to-point offers (docs/same-node-p2p.md). */
  uint64_t offers_made;  /* receives that offered their sender a landing buffer */
  uint64_t offers_taken; /* sends that wrote a receiver's landing or receive buffer itself */
  uint64_t offers_used;  /* receives whose data came by their offer */
  /* Added later (the fields above keep their places). */
  uint64_t collective_pieces_in_place; /* pieces read straight from the sender's buffer in
                                          its layout (no pack, no wire) */
  uint64_t offers_in_place; /* of offers_used, receives the sender wrote straight into, in the
                               receiver's layout (no landing buffer, no unpack) */
  uint64_t offers_streams;  /* streams the offers' ledgers hold now (at most 4096 per
                               communicator and direction) */
  uint64_t offers_streams_forgotten; /* streams forgotten to stay within that bound so far (one
                                        used again takes no more offers) */
  uint64_t reductions_on_gpu;        /* of collectives_same_node, reductions computed on the GPUs */
  uint64_t unpack_waves;      /* completion calls whose GPU receives were unpacked by one kernel */
  uint64_t pack_waves;        /* MPI_Startall calls and flushes of deferred sends whose GPU sends
                                 were packed, or written into same-node offers, by one kernel */
  uint64_t persistent_served; /* persistent point-to-point requests and collectives Strider
                                 moves (GPU buffers, or host ones with STRIDER_P2P_HOST=pack or
                                 STRIDER_COLL_HOST=pack) */
  uint64_t sends_deferred;    /* nonblocking sends packed and started at a later MPI call
                                 (STRIDER_BURST, docs/bursts.md) */
  uint64_t deferred_flushes;  /* MPI calls that packed and started deferred sends */
  uint64_t progress_flushes;  /* flushes of deferred sends made by Strider's progress thread
                                 while the application made no MPI call (STRIDER_PROGRESS_US) */
  uint64_t receives_early;    /* receives unpacked in the wave of a completion call made for
                                 another request, and reported by a later one (docs/bursts.md) */
  uint64_t default_stream_checks; /* questions whether a GPU's legacy default stream is idle,
                                     which a receive offered for writes in place asks: one per
                                     such receive, or per MPI_Startall and GPU */
} strider_stats;

/* Library version, e.g. "0.1.0". */
const char* strider_version(void);

/* Copies the counters into *out, writing at most `size` bytes: pass sizeof(strider_stats) of
 * the header the program was built with. A program built with an older header gets the fields
 * it knows, and nothing is written past them; one built with a newer header than the library
 * gets the library's fields, and the rest of its struct is left as it was. Returns the number
 * of bytes written (the smaller of `size` and the library's sizeof(strider_stats)), or -1 if
 * `out` is NULL and `size` is not 0. */
int strider_get_stats_sized(strider_stats* out, size_t size);

/* Deprecated: use strider_get_stats_sized. Writes only the first 7 counters (types_planned to
 * plans_cached: the struct as this function first shipped with), so that a program built with
 * any header is never written past its struct. Returns 0. */
int strider_get_stats(strider_stats* out);

/* Selects the transfer method for GPU buffers from now on, overriding STRIDER_METHOD: "auto",
 * "device", "oneshot" or "staged". For benchmarks and tests. Returns 0, or -1 for an unknown
 * name (the method is then unchanged). */
int strider_set_method(const char* method);

/* Host buffers in point-to-point from now on, overriding STRIDER_P2P_HOST: 1 packs them as GPU
 * buffers are (Strider's path), 0 hands them to the MPI. For tests. Returns 0. */
int strider_set_p2p_host(int pack);

/* The performance model's view of sending `count` elements of `type` from GPU memory to a peer
 * that unpacks the same object (for tools and benchmarks). Methods are indexed
 * STRIDER_ONESHOT (0), STRIDER_STAGED (1), STRIDER_DEVICE (2); times are in seconds. */
enum { STRIDER_ONESHOT = 0, STRIDER_STAGED = 1, STRIDER_DEVICE = 2, STRIDER_METHODS = 3 };
typedef struct strider_prediction {
  int available[STRIDER_METHODS];    /* device: only on a CUDA-aware MPI */
  double send_side[STRIDER_METHODS]; /* pack (+ copy out of the GPU) */
  double transfer[STRIDER_METHODS];  /* half a round trip of the packed bytes */
  double recv_side[STRIDER_METHODS]; /* (copy into the GPU +) unpack */
  double total[STRIDER_METHODS];     /* send_side + transfer + recv_side */
  int send_choice;                   /* what auto picks on the sending side */
  int recv_choice;                   /* ... and on the receiving side */
  int measured;                      /* 1: from the perf file; 0: built-in defaults */
} strider_prediction;

/* Fills *out for `count` elements of `type` and a peer on the same node (same_node != 0) or
 * another one. Loads the perf file if not yet loaded. Returns 0, or -1 if the type is unknown
 * (uncommitted, invalid) or has no plan (left to the MPI's pack). */
int strider_predict(MPI_Datatype type, int count, int same_node, strider_prediction* out);

/* Writes a description of how Strider handles `type` (bounds, canonical form or the reason it
 * is left to the MPI), NUL-terminated and truncated to `size` bytes. Returns the full length
 * (excluding the NUL), or -1 if the type is unknown (uncommitted or invalid). */
int strider_describe_type(MPI_Datatype type, char* buffer, int size);

#ifdef __cplusplus
}
#endif

#endif /* STRIDER_STRIDER_H */
