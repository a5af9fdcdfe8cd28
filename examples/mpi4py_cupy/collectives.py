#!/usr/bin/env python3
"""mpi4py collectives on CuPy (GPU) arrays with an MPI derived datatype, 2 or more ranks.

Each collective is called twice with the same arguments: on CuPy arrays (the device pointers go
to the MPI, or to Strider where it is preloaded) and on NumPy copies (host buffers, which reach
the MPI unchanged: the oracle). Every rank compares the receive buffers byte for byte. The
datatype is 8 ints at stride 2 (MPI.INT.Create_vector(8, 1, 2)), so only every other int of a
block moves. On an MPI-4 library mpi4py calls the large-count (`_c`) forms wherever the library
has them, the count-array, nonblocking and persistent ones included; on MPI-3 (Open MPI 4.1)
the classic forms, and the persistent ones are left out.

Rank 0 prints "mpi4py+cupy collectives: every byte correct" when all agree; any difference
exits non-zero. run.sh --program collectives.py runs it with Strider and without.
"""

import cupy
import numpy as np
from mpi4py import MPI

from halo_exchange import run, strider_version  # this directory's

SUCCESS = "mpi4py+cupy collectives: every byte correct"
BLOCK = 16  # ints a block of the datatype spans (its extent is 15 ints: 8 at stride 2)


def started(request, times=2):
    """A persistent collective's request, started and completed `times` times, then freed."""
    for _ in range(times):
        request.Start()
        request.Wait()
    request.Free()


def main():
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    device = cupy.cuda.Device(node.Get_rank() % cupy.cuda.runtime.getDeviceCount())
    node.Free()
    device.use()
    if rank == 0:
        library = MPI.Get_library_version().replace("\0", "").splitlines()[0].strip()
        print(f"{library}, MPI {MPI.Get_version()}")
        if strider_version():
            print(f"Strider {strider_version()} is loaded: it moves the GPU buffers", flush=True)
        else:
            print("Strider is not loaded: the MPI itself gets the GPU pointers", flush=True)
        print(f"running collectives on {n} ranks", flush=True)

    vec = MPI.INT.Create_vector(8, 1, 2).Commit()
    rng = np.random.default_rng(7 + rank)
    differ = []

    def check(name, send_blocks, recv_blocks, call):
        send = rng.integers(0, 1000, size=BLOCK * send_blocks, dtype=np.int32)
        recv = np.full(BLOCK * recv_blocks, -1, dtype=np.int32)
        s_host, r_host = send.copy(), recv.copy()
        s_dev, r_dev = cupy.asarray(send), cupy.asarray(recv)
        device.synchronize()
        call(s_host, r_host)
        call(s_dev, r_dev)
        device.synchronize()
        if not np.array_equal(cupy.asnumpy(r_dev), r_host):
            differ.append(name)
            print(f"rank {rank}: {name}: DIFFERS from the host oracle", flush=True)

    counts, displs = [1] * n, list(range(n))[::-1]  # v forms: in extents, reversed
    wcounts, wdispls = [1] * n, [4 * BLOCK * i for i in range(n)]  # w forms: in bytes
    root = n - 1
    check("Allgather", 1, n, lambda s, r: comm.Allgather([s, 1, vec], [r, 1, vec]))
    check("Alltoall", n, n, lambda s, r: comm.Alltoall([s, 1, vec], [r, 1, vec]))
    check("Ialltoall", n, n, lambda s, r: comm.Ialltoall([s, 1, vec], [r, 1, vec]).Wait())
    check("Bcast", 1, 1,
          lambda s, r: (r.__setitem__(slice(None), s) if rank == 0 else None,
                        comm.Bcast([r, 1, vec], root=0)))
    check("Alltoallw", n, n,
          lambda s, r: comm.Alltoallw([s, (wcounts, wdispls), [vec] * n],
                                      [r, (wcounts, wdispls), [vec] * n]))
    check("Gatherv", 1, n,
          lambda s, r: comm.Gatherv([s, 1, vec], [r, (counts, displs), vec], root=root))
    check("Scatterv", n, 1,
          lambda s, r: comm.Scatterv([s, (counts, displs), vec], [r, 1, vec], root=root))
    check("Igatherv", 1, n,
          lambda s, r: comm.Igatherv([s, 1, vec], [r, (counts, displs), vec], root=0).Wait())
    check("Ialltoallv", n, n,
          lambda s, r: comm.Ialltoallv([s, (counts, displs), vec],
                                       [r, (counts, displs), vec]).Wait())
    check("Iallgatherv", 1, n,
          lambda s, r: comm.Iallgatherv([s, 1, vec], [r, (counts, displs), vec]).Wait())
    check("Allreduce", 1, 1, lambda s, r: comm.Allreduce(s, r, op=MPI.SUM))
    grow = [k + 1 for k in range(n)]  # rank k gets k + 1 ints
    check("Reduce_scatter", n, 1,
          lambda s, r: comm.Reduce_scatter([s, sum(grow), MPI.INT], [r, grow[rank], MPI.INT],
                                           recvcounts=grow, op=MPI.SUM))
    line = comm.Create_cart([n], periods=[False])  # MPI_PROC_NULL at both ends
    check("Neighbor_alltoall", 2, 2,
          lambda s, r: line.Neighbor_alltoall([s, 1, vec], [r, 1, vec]))
    check("Neighbor_alltoallw", 2, 2,
          lambda s, r: line.Neighbor_alltoallw([s, ([1, 1], [0, 4 * BLOCK]), [vec, vec]],
                                               [r, ([1, 1], [0, 4 * BLOCK]), [vec, vec]]))
    if MPI.Get_version() >= (4, 0):
        ring = comm.Create_cart([n], periods=[True])
        check("Alltoallv_init", n, n,
              lambda s, r: started(comm.Alltoallv_init([s, (counts, displs), vec],
                                                       [r, (counts, displs), vec])))
        check("Allgather_init", 1, n,
              lambda s, r: started(comm.Allgather_init([s, 1, vec], [r, 1, vec])))
        check("Neighbor_alltoallw_init", 2, 2,
              lambda s, r: started(ring.Neighbor_alltoallw_init(
                  [s, ([1, 1], [0, 4 * BLOCK]), [vec, vec]],
                  [r, ([1, 1], [0, 4 * BLOCK]), [vec, vec]])))
        ring.Free()
    line.Free()
    vec.Free()
    total = comm.allreduce(len(differ))
    if rank == 0:
        print(SUCCESS if total == 0 else f"mpi4py+cupy collectives: {total} differ", flush=True)
    return 0 if total == 0 else 1


if __name__ == "__main__":
    run(main)
