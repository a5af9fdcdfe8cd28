#!/usr/bin/env python3
"""Halo exchange of CuPy (GPU) arrays with mpi4py and MPI derived datatypes, 2 ranks.

Each rank owns a C-ordered float64 array of shape (NZ, NY, NX) on its GPU, filled with random
numbers from a per-rank seed; planes x = 0 / NX-1 and y = 0 / NY-1 are halo. The peer rank
plays every neighbour (periodic in x and y), and the halos are exchanged with datatypes over
the whole GPU array, the CuPy array itself handed to mpi4py as the buffer:

  1. x faces, MPI.DOUBLE.Create_subarray (one double every NX: the most scattered face),
     blocking Send / Recv;
  2. y faces, MPI.DOUBLE.Create_vector of rows, and the four z edge columns,
     MPI.DOUBLE.Create_vector(NZ, 1, NY*NX) (one double per plane), all at once with
     Isend / Irecv and one Waitall.

Then every rank rebuilds the peer's array from the peer's seed (on the GPU) and checks every
byte it received, and that no byte outside its halo changed. Rank 0 prints
"mpi4py+cupy halo exchange: every byte correct" on success; any mismatch exits non-zero.

mpi4py takes the device pointer from DLPack / __cuda_array_interface__ and passes it to the
MPI as is. An MPI that is not CUDA-aware then reads and writes GPU memory from the CPU, which
faults; with Strider preloaded (LD_PRELOAD=libstrider.so) the same program works. run.sh
runs it both ways.
"""

import argparse
import ctypes
import sys

import cupy
import mpi4py
from mpi4py import MPI

SUCCESS = "mpi4py+cupy halo exchange: every byte correct"


def strider_version():
    """Strider's version if libstrider.so is loaded in this process, else None."""
    try:
        fn = ctypes.CDLL(None).strider_version
    except (AttributeError, OSError):
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return fn().decode()


def make_field(seed, shape):
    """The array a rank starts with: the same on every rank for the same seed."""
    return cupy.random.default_rng(seed).random(shape, dtype=cupy.float64)


class Exchange:
    """One message: the sender's region `send` goes into the receiver's region `recv`.

    `send` and `recv` are tuples of slices into the (NZ, NY, NX) array; `kind` says how the
    datatype is built and `tag` matches the message on both sides.
    """

    def __init__(self, name, kind, send, recv, tag):
        self.name, self.kind, self.send, self.recv, self.tag = name, kind, send, recv, tag


def exchanges(shape):
    nz, ny, nx = shape
    every_z = slice(0, nz)
    inner_y = slice(1, ny - 1)
    inner_x = slice(1, nx - 1)

    def pl(i):  # one plane, kept as a dimension of size 1
        return slice(i, i + 1)

    faces_x = [  # interior y; the x = NX-2 plane goes to the peer's x = 0 halo, x = 1 to NX-1
        Exchange("x face -> x=0", "subarray", (every_z, inner_y, pl(nx - 2)),
                 (every_z, inner_y, pl(0)), 11),
        Exchange("x face -> x=NX-1", "subarray", (every_z, inner_y, pl(1)),
                 (every_z, inner_y, pl(nx - 1)), 12),
    ]
    faces_y = [  # interior x rows
        Exchange("y face -> y=0", "rows", (every_z, pl(ny - 2), inner_x),
                 (every_z, pl(0), inner_x), 21),
        Exchange("y face -> y=NY-1", "rows", (every_z, pl(1), inner_x),
                 (every_z, pl(ny - 1), inner_x), 22),
    ]
    edges = []  # the halo's four z columns, each from the diagonally opposite interior column
    for tag, (ry, rx) in enumerate([(0, 0), (0, nx - 1), (ny - 1, 0), (ny - 1, nx - 1)], 31):
        sy = ny - 2 if ry == 0 else 1
        sx = nx - 2 if rx == 0 else 1
        edges.append(Exchange(f"z column -> (y={ry},x={rx})", "column",
                              (every_z, pl(sy), pl(sx)), (every_z, pl(ry), pl(rx)), tag))
    return faces_x, faces_y + edges


def region_start(region):
    return tuple(s.start for s in region)


def region_size(region):
    return tuple(s.stop - s.start for s in region)


def buffer_and_type(field, region, kind, types):
    """The mpi4py message for `region` of `field`: [CuPy array or view, 1, datatype].

    Subarray types carry their start and span the whole array, so the buffer is the array.
    Vector types start at the buffer's first element, so the buffer is a flat view of the
    array from the region's first element on (still contiguous, so mpi4py accepts it)."""
    _, ny, nx = field.shape
    if kind == "subarray":
        key = (kind, region_start(region), region_size(region))
        if key not in types:
            types[key] = MPI.DOUBLE.Create_subarray(
                list(field.shape), list(region_size(region)), list(region_start(region)),
                order=MPI.ORDER_C).Commit()
        return [field, 1, types[key]]
    z0, y0, x0 = region_start(region)
    dz, dy, dx = region_size(region)
    if kind == "rows":  # dz rows of dx doubles, one per plane
        assert dy == 1
        key = (kind, dz, dx)
        if key not in types:
            types[key] = MPI.DOUBLE.Create_vector(dz, dx, ny * nx).Commit()
    elif kind == "column":  # dz single doubles, one per plane
        assert dy == 1 and dx == 1
        key = (kind, dz)
        if key not in types:
            types[key] = MPI.DOUBLE.Create_vector(dz, 1, ny * nx).Commit()
    else:
        raise ValueError(kind)
    first = (z0 * ny + y0) * nx + x0
    return [field.reshape(-1)[first:], 1, types[key]]


def region_count(region):
    dz, dy, dx = region_size(region)
    return dz * dy * dx


def verify(field, original, theirs, messages, peer):
    """Problems found in `field` after the exchange (an empty list when all is well).

    Every received region must hold, byte for byte (compared as 64-bit words), what the peer
    (whose starting array is `theirs`) had in the matching send region; every other element
    must still be what it was in `original`."""
    expected = original.copy()
    halo = cupy.zeros(field.shape, dtype=cupy.bool_)
    for ex in messages:
        expected[ex.recv] = theirs[ex.send]
        halo[ex.recv] = True
    problems = []
    if bool((expected[halo] == original[halo]).all()):
        problems.append("the peer's data equals ours: the check would prove nothing")
    wrong = field.view(cupy.uint64) != expected.view(cupy.uint64)
    for ex in messages:
        bad = int(wrong[ex.recv].sum())
        if bad:
            problems.append(f"{ex.name} ({ex.kind}): {bad} of {region_count(ex.recv)} "
                            f"received doubles differ from what rank {peer} sent")
    outside = int((wrong & ~halo).sum())
    if outside:
        problems.append(f"{outside} doubles outside the received regions changed")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3, default=(64, 48, 40),
                        metavar=("NZ", "NY", "NX"), help="array shape, x fastest")
    parser.add_argument("--seed", type=int, default=20261122,
                        help="base seed; rank r uses seed + r")
    args = parser.parse_args()
    shape = tuple(args.shape)
    if min(shape) < 4:
        parser.error("every dimension must be at least 4")

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != 2:
        print(f"rank {rank}: needs exactly 2 ranks, got {size} (is mpi4py using the MPI of "
              f"the launcher? MPI4PY_MPIABI / MPI4PY_LIBMPI select it)", file=sys.stderr)
        return 2
    peer = 1 - rank

    # One GPU per rank where there are several.
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local_rank = node.Get_rank()
    node.Free()
    ngpu = cupy.cuda.runtime.getDeviceCount()
    device = cupy.cuda.Device(local_rank % ngpu)
    device.use()

    version = strider_version()
    if rank == 0:
        library = MPI.Get_library_version().replace("\0", "").splitlines()[0].strip()
        print(f"mpi4py {mpi4py.__version__}, CuPy {cupy.__version__}, {library}")
        if version:
            print(f"Strider {version} is loaded: it packs the GPU buffers", flush=True)
        else:
            print("Strider is not loaded: the MPI itself gets the GPU pointers", flush=True)

    field = make_field(args.seed + rank, shape)
    original = field.copy()
    blocking, nonblocking = exchanges(shape)
    types = {}
    problems = []

    # CuPy writes on its stream asynchronously; the MPI (or Strider) reads the buffer when
    # the call is made. Make sure the data is there before any send, on both ranks.
    device.synchronize()
    print(f"rank {rank}: GPU {device.id} of {ngpu} "
          f"({cupy.cuda.runtime.getDeviceProperties(device.id)['name'].decode()}), "
          f"exchanging halos with rank {peer}", flush=True)
    comm.Barrier()

    # 1. x faces, blocking. Rank 0 sends first and rank 1 receives first, so the two
    #    rendezvous-sized messages cannot deadlock.
    def send_all():
        for ex in blocking:
            comm.Send(buffer_and_type(field, ex.send, ex.kind, types), dest=peer, tag=ex.tag)

    def recv_all():
        for ex in blocking:
            status = MPI.Status()
            comm.Recv(buffer_and_type(field, ex.recv, ex.kind, types), source=peer,
                      tag=ex.tag, status=status)
            if status.Get_count(MPI.BYTE) != 8 * region_count(ex.recv):
                problems.append(f"{ex.name}: the status says {status.Get_count(MPI.BYTE)} "
                                f"bytes, expected {8 * region_count(ex.recv)}")

    if rank == 0:
        send_all()
        recv_all()
    else:
        recv_all()
        send_all()

    # 2. y faces and z edge columns, non-blocking, all in flight together. Received regions
    #    never overlap sent ones, so the order of completion does not matter.
    requests = []
    for ex in nonblocking:
        requests.append(comm.Irecv(buffer_and_type(field, ex.recv, ex.kind, types),
                                   source=peer, tag=ex.tag))
    for ex in nonblocking:
        requests.append(comm.Isend(buffer_and_type(field, ex.send, ex.kind, types),
                                   dest=peer, tag=ex.tag))
    MPI.Request.Waitall(requests)
    device.synchronize()

    # Check against the peer's array, rebuilt here from its seed.
    problems += verify(field, original, make_field(args.seed + peer, shape),
                       blocking + nonblocking, peer)
    for p in problems:
        print(f"rank {rank}: FAIL: {p}", file=sys.stderr, flush=True)

    checked = sum(region_count(ex.recv) for ex in blocking + nonblocking)
    failures = comm.allreduce(len(problems), op=MPI.SUM)
    for t in types.values():
        t.Free()
    if failures:
        if rank == 0:
            print(f"mpi4py+cupy halo exchange: {failures} problem(s), see above", flush=True)
        return 1
    if rank == 0:
        print(f"checked {checked} received doubles per rank ({len(blocking)} subarray faces, "
              f"{len(nonblocking)} vector messages) and {field.size - checked} untouched ones")
        print(SUCCESS, flush=True)
    return 0


def run(entry):
    """Exits with entry()'s code; an exception aborts every rank instead, since one rank failing
    must not leave the others blocked in a receive or a collective."""
    try:
        code = entry()
    except Exception:
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
    sys.exit(code)


if __name__ == "__main__":
    run(main)
