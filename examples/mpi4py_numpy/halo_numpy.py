#!/usr/bin/env python3
"""Halo exchange of numpy arrays with mpi4py and MPI derived datatypes, 2 ranks, host memory.

The CPU twin of examples/mpi4py_cupy, for any MPI mpi4py runs on (the MPICH wheel from PyPI
in CI). Each rank owns a C-ordered float64 array of shape (NZ, NY, NX) filled from a per-rank
seed; the peer plays every neighbour. The datatypes are those mpi4py builds, with the
large-count constructors where the MPI has them (MPI-4: MPI_Type_vector_c, ...):

  1. x faces: Create_subarray, blocking Sendrecv;
  2. y faces: Create_vector of rows, z edge columns: Create_vector(NZ, 1, NY*NX),
     a Create_indexed_block of corner points, and a Create_struct of a row and a point,
     Create_resized to the array's extent: all at once with Isend / Irecv and one Waitall.

Every rank checks every byte it received and that nothing outside its halo changed. With
Strider preloaded (LD_PRELOAD=libstrider.so, STRIDER_P2P_HOST=pack so that Strider moves host
buffers too) it also reads Strider's counters and fails unless Strider planned every datatype
the program made (types_planned grows, types_unsupported stays 0) and packed the messages.
Rank 0 prints "mpi4py+numpy halo exchange: every byte correct" on success.
"""

import argparse
import ctypes
import sys

import numpy as np
from mpi4py import MPI

SUCCESS = "mpi4py+numpy halo exchange: every byte correct"


class Stats(ctypes.Structure):
    """The first fields of strider_stats (include/strider/strider.h), in its order."""

    _fields_ = [(name, ctypes.c_uint64) for name in (
        "types_planned", "types_unsupported", "packs_host", "unpacks_host", "packs_forwarded",
        "unpacks_forwarded", "plans_cached", "packs_gpu", "unpacks_gpu", "packs_staged",
        "unpacks_staged", "sends_packed", "recvs_packed")]


def strider_stats():
    """Strider's counters if libstrider.so is loaded in this process, else None."""
    try:
        fn = ctypes.CDLL(None).strider_get_stats_sized
    except (AttributeError, OSError):
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    s = Stats()
    fn(ctypes.byref(s), ctypes.sizeof(s))
    return s


def field(seed, shape):
    return np.random.default_rng(seed).random(shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3, default=(12, 10, 9),
                        metavar=("NZ", "NY", "NX"))
    parser.add_argument("--expect-strider", action="store_true",
                        help="fail unless Strider is loaded and planned every datatype")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != 2:
        print("run with 2 ranks", file=sys.stderr)
        return 2
    peer = 1 - rank
    nz, ny, nx = args.shape
    before = strider_stats()
    if args.expect_strider and before is None:
        print(f"rank {rank}: Strider is not loaded", file=sys.stderr)
        return 1

    a = field(100 + rank, (nz, ny, nx))
    original = a.copy()
    theirs = field(100 + peer, (nz, ny, nx))
    d = MPI.DOUBLE
    made = []

    def commit(t):
        t.Commit()
        made.append(t)
        return t

    # 1. x faces: the interior plane x = 1 goes to the peer's halo x = NX-1, and back.
    xface = commit(d.Create_subarray((nz, ny, nx), (nz, ny, 1), (0, 0, 1)))
    xhalo = commit(d.Create_subarray((nz, ny, nx), (nz, ny, 1), (0, 0, nx - 1)))
    comm.Sendrecv([a, 1, xface], peer, 1, [a, 1, xhalo], peer, 1)

    # 2. y faces, z edge columns, corner points, a struct: nonblocking, one Waitall.
    ny_x = ny * nx
    yrow = commit(d.Create_vector(nz, nx, ny_x))  # the plane y = const
    column = commit(d.Create_vector(nz, 1, ny_x))  # one double per plane
    corners = commit(d.Create_indexed_block(1, [0, nx - 1, ny_x - nx, ny_x - 1]))
    row = d.Create_contiguous(nx)
    row_and_point = d.Create_struct([1, 1], [0, 8 * (nx + 2)], [row, d])
    row.Free()
    shaped = commit(row_and_point.Create_resized(0, 8 * nz * ny_x))
    row_and_point.Free()
    sends = [  # (type, element offset of the send region, of the receive region, tag)
        (yrow, 1 * nx, (ny - 1) * nx, 2),
        (column, 1 * nx + 1, (ny - 1) * nx + nx - 1, 3),
        (corners, ny_x, 0, 4),
        (shaped, 2 * nx, 3 * nx, 5),
    ]
    flat = a.reshape(-1)
    requests = []
    for t, send_at, recv_at, tag in sends:
        requests.append(comm.Irecv([flat[recv_at:], 1, t], peer, tag))
    # The sends read a copy taken before any receive lands in `a`.
    source = flat.copy()
    for t, send_at, recv_at, tag in sends:
        requests.append(comm.Isend([source[send_at:], 1, t], peer, tag))
    MPI.Request.Waitall(requests)

    # The reference: the same moves done by numpy on the peer's array.
    want = original.copy()
    want[:, :, nx - 1] = theirs[:, :, 1]
    # The peer sent step 2 from its array after step 1 (its x halo holding our plane x = 1).
    theirs_then = theirs.copy()
    theirs_then[:, :, nx - 1] = original[:, :, 1]
    wflat, tflat = want.reshape(-1), theirs_then.reshape(-1)
    for z in range(nz):
        base = z * ny_x
        wflat[base + (ny - 1) * nx: base + ny * nx] = tflat[base + nx: base + 2 * nx]
        wflat[base + (ny - 1) * nx + nx - 1] = tflat[base + nx + 1]
    for off in (0, nx - 1, ny_x - nx, ny_x - 1):
        wflat[off] = tflat[ny_x + off]
    wflat[3 * nx: 4 * nx] = tflat[2 * nx: 3 * nx]
    wflat[3 * nx + nx + 2] = tflat[2 * nx + nx + 2]
    bad = int(np.count_nonzero(a != want))

    for t in made:
        t.Free()
    problems = []
    if bad:
        problems.append(f"{bad} wrong doubles")
    after = strider_stats()
    if after is not None:
        planned = after.types_planned - before.types_planned
        unsupported = after.types_unsupported - before.types_unsupported
        packed = after.sends_packed - before.sends_packed
        print(f"rank {rank}: Strider planned {planned} datatypes, {unsupported} unsupported, "
              f"packed {packed} sends")
        if args.expect_strider and (planned == 0 or unsupported != 0 or packed == 0):
            problems.append("Strider did not plan and pack every datatype")
    if problems:
        print(f"rank {rank}: " + "; ".join(problems), file=sys.stderr)
    failed = comm.allreduce(1 if problems else 0)
    if failed:
        return 1
    if rank == 0:
        print(SUCCESS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
