# mpi4py collectives (which call the MPI's _c forms on MPICH 4+) on CuPy buffers with a strided
# type, checked against the same calls on NumPy copies (host buffers go to the MPI unchanged).
import sys
import numpy as np
import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
vec = MPI.INT.Create_vector(8, 1, 2).Commit()  # 8 ints at stride 2: 16-int extent
rng = np.random.default_rng(7 + rank)
fails = []

def check(name, send_np, recv_np, call):
    s_h, r_h = send_np.copy(), recv_np.copy()
    s_d, r_d = cp.asarray(send_np), cp.asarray(recv_np)
    call(s_h, r_h)
    call(s_d, r_d)
    cp.cuda.runtime.deviceSynchronize()
    if not np.array_equal(cp.asnumpy(r_d), r_h):
        fails.append(name)
    print(f"[{rank}] {name}: {'ok' if name not in fails else 'DIFFERS'}", flush=True)

def ints(blocks):
    return rng.integers(0, 1000, size=16 * blocks, dtype=np.int32)

def sentinel(blocks):
    return np.full(16 * blocks, -1, dtype=np.int32)

n = size
check("Allgather", ints(1), sentinel(n), lambda s, r: comm.Allgather([s, 1, vec], [r, 1, vec]))
check("Alltoall", ints(n), sentinel(n), lambda s, r: comm.Alltoall([s, 1, vec], [r, 1, vec]))
check("Bcast", ints(1), sentinel(1),
      lambda s, r: (r.__setitem__(slice(None), s) if rank == 0 else None, comm.Bcast([r, 1, vec], 0)))
check("Ialltoall", ints(n), sentinel(n),
      lambda s, r: comm.Ialltoall([s, 1, vec], [r, 1, vec]).Wait())
counts, displs = [1] * n, [16 * 4 * i for i in range(n)]
check("Alltoallw", ints(n), sentinel(n),
      lambda s, r: comm.Alltoallw([s, (counts, displs), [vec] * n], [r, (counts, displs), [vec] * n]))
cart = comm.Create_cart([n], periods=[False])
check("Neighbor_alltoall (not periodic)", ints(2), sentinel(2),
      lambda s, r: cart.Neighbor_alltoall([s, 1, vec], [r, 1, vec]))
check("Neighbor_alltoallw (not periodic)", ints(2), sentinel(2),
      lambda s, r: cart.Neighbor_alltoallw([s, ([1, 1], [0, 64]), [vec, vec]],
                                           [r, ([1, 1], [0, 64]), [vec, vec]]))
check("Allreduce", ints(1), sentinel(1), lambda s, r: comm.Allreduce(s, r, op=MPI.SUM))
# The count-array and persistent _c forms (served since 1a8bf7b).
vc, vd = [1] * n, list(range(n))[::-1]  # v forms: displacements in extents, reversed
check("Gatherv", ints(1), sentinel(n),
      lambda s, r: comm.Gatherv([s, 1, vec], [r, (vc, vd), vec], root=n - 1))
check("Scatterv", ints(n), sentinel(1),
      lambda s, r: comm.Scatterv([s, (vc, vd), vec], [r, 1, vec], root=n - 1))
check("Igatherv", ints(1), sentinel(n),
      lambda s, r: comm.Igatherv([s, 1, vec], [r, (vc, vd), vec], root=0).Wait())
check("Ialltoallv", ints(n), sentinel(n),
      lambda s, r: comm.Ialltoallv([s, (vc, vd), vec], [r, (vc, vd), vec]).Wait())
check("Iallgatherv", ints(1), sentinel(n),
      lambda s, r: comm.Iallgatherv([s, 1, vec], [r, (vc, vd), vec]).Wait())
grow = [k + 1 for k in range(n)]
check("Reduce_scatter", ints(n), sentinel(1),
      lambda s, r: comm.Reduce_scatter([s, sum(grow), MPI.INT], [r, grow[rank], MPI.INT],
                                       recvcounts=grow, op=MPI.SUM))

def started(request, times=2):
    for _ in range(times):
        request.Start()
        request.Wait()
    request.Free()

check("Alltoallv_init", ints(n), sentinel(n),
      lambda s, r: started(comm.Alltoallv_init([s, (vc, vd), vec], [r, (vc, vd), vec])))
check("Allgather_init", ints(1), sentinel(n),
      lambda s, r: started(comm.Allgather_init([s, 1, vec], [r, 1, vec])))
cart2 = comm.Create_cart([n], periods=[True])
check("Neighbor_alltoallw_init", ints(2), sentinel(2),
      lambda s, r: started(cart2.Neighbor_alltoallw_init([s, ([1, 1], [0, 64]), [vec, vec]],
                                                         [r, ([1, 1], [0, 64]), [vec, vec]])))
cart2.Free()
cart.Free()
vec.Free()
total = comm.allreduce(len(fails))
if rank == 0:
    print("collectives.py:", "passed" if total == 0 else f"{total} failures", flush=True)
sys.exit(1 if total else 0)
