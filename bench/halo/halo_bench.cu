// bench/halo: the 3D stencil halo exchange of the TEMPI paper, on GPU buffers, in four forms
// timed side by side in the same run, against a computed floor.
//
// Decomposition: a periodic Cartesian communicator over all ranks (MPI_Dims_create; dimension
// 0 is z, the slowest axis, 2 is x). Each rank owns a box of nz*ny*nx interior cells with a halo
// of radius kRadius = 3 on every side, for kQuantities = 8 quantities, each its own array of
// doubles (C order, x fastest). Boxes are N^3 per rank (--n) or TEMPI's split of a global N^3
// over the ranks (--global; remainders go to the low coordinates, so boxes may differ by one).
//
// Directions: the 26 v in {-1,0,1}^3 \ {0}, in lexicographic (z, y, x) order, index k; -v_k is
// index 25 - k. Send slot k: the interior cells next to side v_k, to the rank at coords + v_k.
// Receive slot k: what the rank at coords - v_k sent in direction v_k, into the halo on side
// -v_k. Both are MPI_Type_create_subarray of the whole array. Point-to-point tags are
// k * kQuantities + q, the SENDER's direction: with 1 or 2 ranks per dimension several slots
// reach the same peer (or self) and only the tag tells them apart.
//
// Forms (each verified once before timing and once after it):
//   isend    (i)   26*8 MPI_Irecv + 26*8 MPI_Isend of the subarray types on the arrays, Waitall.
//   pack     (ii)  TEMPI's case: 26*8 MPI_Pack into one device buffer (slot-major segments,
//                  quantity-major inside), one MPI_Neighbor_alltoallv of MPI_PACKED bytes on a
//                  distributed graph (MPI_Dist_graph_create_adjacent: destinations[k] = coords +
//                  v_k, sources[k] = coords - v_k; duplicate edges kept: the MPI matches the j-th
//                  edge from A at B with the j-th edge to B at A, and both lists are in slot
//                  order, so slot k meets slot k), 26*8 MPI_Unpack. Phases pack/comm/unpack.
//   alltoallw (iii) one MPI_Neighbor_alltoallw on the same graph, count 1 per slot; the slot's
//                  type is MPI_Type_create_hindexed_block of its subarray type at the 8 arrays'
//                  byte offsets from quantity 0's array (MPI_Aint_diff of their addresses), and
//                  the buffer argument is quantity 0's array. Valid MPI: a type may reach any
//                  memory at any (also negative) displacement from the buffer; it is what a user
//                  writes to move several separately allocated fields in one call. (MPI_BOTTOM
//                  with absolute addresses would be the other choice; relative offsets keep the
//                  buffer argument a real device pointer, which is what an interposer classifies.)
//   expert   (iv)  by hand: one fused kernel packs all 26*8 pieces (a job table) into one device
//                  buffer, one copy to pinned host memory, MPI_Neighbor_alltoallv on the host
//                  buffers, one copy back, one fused unpack kernel; all on one stream, one sync
//                  before and one after the MPI call. Phases (CUDA events)
//                  pack/d2h/comm/h2d/unpack.
//   persistent (vi) form (i) set up once with MPI_Recv_init / MPI_Send_init (all 26*8 each way);
//                  an exchange is one MPI_Startall of all 416 requests and one MPI_Waitall.
//   waitany  (vii) form (i) completed by a loop of MPI_Waitany, one piece at a time (a code that
//                  consumes each piece as it arrives).
//   notices, wires  the MPI's own share of forms (i) and (vi), not a halo exchange (nothing is
//                  verified): form (i)'s 208 receives and 208 sends, same peers and tags, as
//                  host messages on a communicator of their own, Waitall. notices: empty (what a
//                  same-node offer's notice costs the MPI); wires: each piece's bytes, contiguous
//                  from and into pinned host buffers (what Strider hands the MPI without offers).
//                  Any design that keeps one MPI message per application message costs at least
//                  these. notices_waitany, wires_waitany: the same completed by form (vii)'s
//                  MPI_Waitany loop (what that loop costs the MPI alone).
//   floor    (v)   computed: B = halo bytes a rank sends per exchange; pack and unpack each read
//                  and write B through device memory at the measured device-to-device copy rate,
//                  B crosses the bus once each way (D2H and H2D of B bytes, measured at that size
//                  between the benchmark's own buffers), plus one launch+sync per side:
//                    floor = 2 * 2B / copy_bw + t_d2h(B) + t_h2d(B) + 2 * t_launch.
//                  The network between ranks is not in it (on one node with a CUDA-unaware MPI
//                  the host-to-host hop is a memcpy). Phase floors: pack and unpack 2B/copy_bw +
//                  t_launch, d2h t_d2h(B), h2d t_h2d(B), and for the pack form's comm phase
//                  (D2H + MPI + H2D inside the MPI or Strider) t_d2h + t_h2d.
//
// Timing: an iteration is 3 exchanges of one form; the forms take turns within each iteration
// (interleaved), each after a barrier. A sample is the slowest rank's wall-clock time of that
// iteration; rows give the median and p10/p90 over the timed iterations, for the iteration
// ("iter3") and per exchange ("total" = iter3 / 3, and each phase summed over the 3 exchanges,
// / 3).
//
// --memory host puts every array in host memory and runs the expert's kernels as CPU loops (no
// CUDA call at all): the program then runs, and checks every form, on a machine without a GPU,
// with or without LD_PRELOAD=libstrider.so. Its floor has no bus or launch terms.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"
#include "../common/exchange_common.hpp"
#include "../common/mpi_name.hpp"

namespace {

using strider::bench::Memory;
using strider::bench::now_us;
using strider::bench::Summary;

constexpr int kRadius = 3;
constexpr int kQuantities = 8;
constexpr int kDirs = 26;
constexpr int kExchangesPerIter = 3;
constexpr const char* kAllForms[] = {"isend",           "pack",         "alltoallw", "expert",
                                     "persistent",      "waitany",      "notices",   "wires",
                                     "notices_waitany", "wires_waitany"};

struct Options {
  std::vector<int> n;       // per-rank box edges
  std::vector<int> global;  // global box edges, split over the ranks
  int iters = 20;
  int warmup = 3;
  int compute_us = 0;     // computed between posting and completing the point-to-point forms
  int thread_level = -1;  // MPI_Init_thread at this level instead of MPI_Init (-1)
  std::set<std::string> forms;
  Memory memory = Memory::Device;
  std::string csv = "halo.csv";
};

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--n N...] [--global N...] [--iters I] [--warmup W] [--forms F,...]\n"
      "          [--memory device|host] [--compute-us C] [--thread LEVEL] [--csv FILE]\n"
      "3D halo exchange (radius %d, %d quantities of doubles, 26 neighbours, periodic Cartesian\n"
      "communicator over all ranks) on GPU buffers, in the forms isend (Isend/Irecv of subarray\n"
      "types), pack (MPI_Pack + MPI_Neighbor_alltoallv + MPI_Unpack, TEMPI's case), alltoallw\n"
      "(one MPI_Neighbor_alltoallw), expert (fused pack kernel + pinned host\n"
      "MPI_Neighbor_alltoallv + fused unpack), persistent (form isend as Send_init/Recv_init,\n"
      "Startall + Waitall) and waitany (form isend completed by MPI_Waitany), timed interleaved "
      "against a computed floor; notices and wires time form isend's messages on host memory,\n"
      "empty or with each piece's bytes (the MPI's own share; not halo exchanges; _waitany:\n"
      "completed as form waitany). Run\n"
      "with LD_PRELOAD=libstrider.so on an MPI that is not CUDA-aware.\n"
      "  --n N...        per-rank interior box edges (list: 64,128 or 64 128; default 64 128 256\n"
      "                  unless --global is given)\n"
      "  --global N...   global box edges, split over the ranks as TEMPI does\n"
      "  --iters I       timed iterations of %d exchanges per form and size (default 20)\n"
      "  --warmup W      untimed iterations first (default 3)\n"
      "  --forms F,...   subset of isend,pack,alltoallw,expert,persistent,waitany,notices,wires,\n"
      "                  notices_waitany,wires_waitany (default all)\n"
      "  --memory M      device (default) or host: host arrays, CPU loops for the expert, no CUDA\n"
      "  --compute-us C  forms isend, waitany and persistent compute C us (a spin, no MPI call)\n"
      "                  between posting their requests and completing them, as a code that\n"
      "                  overlaps its interior with the exchange (default 0); floor then >= C\n"
      "  --thread LEVEL  MPI_Init_thread at single, funneled, serialized or multiple instead of\n"
      "                  MPI_Init (Strider's progress thread runs on Open MPI from serialized;\n"
      "                  multiple is mpi4py's default); --serialized: --thread serialized\n"
      "  --csv FILE      CSV output (default halo.csv), written by rank 0\n"
      "Exit status: 0 done (or --memory device without a GPU: nothing measured), 1 a wrong halo\n"
      "or a CUDA error, 2 a usage error.\n",
      argv0, kRadius, kQuantities, kExchangesPerIter);
}

const char* thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "single";
  if (level == MPI_THREAD_FUNNELED) return "funneled";
  if (level == MPI_THREAD_SERIALIZED) return "serialized";
  return level == MPI_THREAD_MULTIPLE ? "multiple" : "unknown";
}

// `text`, the value of option `option`, as a whole number from `lo` to `hi` into `out`; false,
// with a message, where it is not one.
bool whole_number(const std::string& option, const char* text, long lo, long hi, int& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "%s wants a whole number, not '%s'\n", option.c_str(), text);
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 1;
    } else if (a == "--n" || a == "--global") {
      auto& list = a == "--n" ? opt.n : opt.global;
      if (!strider::bench::parse_int_list(argc, argv, i, kRadius, 4096, list)) {
        std::fprintf(stderr, "%s wants whole numbers from %d to 4096\n", a.c_str(), kRadius);
        return 2;
      }
    } else if (a == "--serialized") {
      opt.thread_level = MPI_THREAD_SERIALIZED;
    } else if (a == "--thread" && has_value) {
      const std::string level = argv[++i];
      const std::map<std::string, int> levels = {{"single", MPI_THREAD_SINGLE},
                                                 {"funneled", MPI_THREAD_FUNNELED},
                                                 {"serialized", MPI_THREAD_SERIALIZED},
                                                 {"multiple", MPI_THREAD_MULTIPLE}};
      const auto found = levels.find(level);
      if (found == levels.end()) {
        std::fprintf(stderr, "--thread wants single, funneled, serialized or multiple\n");
        return 2;
      }
      opt.thread_level = found->second;
    } else if (a == "--compute-us" && has_value) {
      if (!whole_number(a, argv[++i], 0, 10000000, opt.compute_us)) return 2;
    } else if ((a == "--iters" || a == "--warmup") && has_value) {
      if (!whole_number(a, argv[++i], a == "--iters" ? 1 : 0, 1000000,
                        a == "--iters" ? opt.iters : opt.warmup)) {
        return 2;
      }
    } else if (a == "--forms" && has_value) {
      std::string list = argv[++i];
      std::size_t at = 0;
      while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string f = list.substr(at, comma - at);
        at = comma + 1;
        if (f.empty()) continue;
        bool known = false;
        for (const char* k : kAllForms) known = known || f == k;
        if (!known) {
          std::fprintf(stderr,
                       "--forms: unknown form '%s' (isend,pack,alltoallw,expert,persistent,waitany,"
                       "notices,wires,notices_waitany,wires_waitany)\n",
                       f.c_str());
          return 2;
        }
        opt.forms.insert(f);
      }
    } else if (a == "--memory" && has_value) {
      const std::string m = argv[++i];
      if (m != "device" && m != "host") {
        std::fprintf(stderr, "--memory wants device or host, not '%s'\n", m.c_str());
        return 2;
      }
      opt.memory = m == "host" ? Memory::Host : Memory::Device;
    } else if (a == "--csv" && has_value) {
      opt.csv = argv[++i];
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (opt.n.empty() && opt.global.empty()) opt.n = {64, 128, 256};
  if (opt.forms.empty()) opt.forms = {std::begin(kAllForms), std::end(kAllForms)};
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Geometry.

struct Dir {
  int v[3];
};

std::array<Dir, kDirs> directions() {
  std::array<Dir, kDirs> d{};
  int k = 0;
  for (int z = -1; z <= 1; ++z) {
    for (int y = -1; y <= 1; ++y) {
      for (int x = -1; x <= 1; ++x) {
        if (z == 0 && y == 0 && x == 0) continue;
        d[k++] = Dir{{z, y, x}};
      }
    }
  }
  return d;
}

// This rank's box: interior edges n, global offset of its first interior cell, global edges g,
// stored edges s = n + 2r.
struct Box {
  int n[3], off[3], g[3], s[3];
  std::size_t cells() const { return std::size_t(s[0]) * s[1] * s[2]; }
};

// A subarray of the stored array: start and size per axis.
struct Region {
  int start[3], size[3];
  long long cells() const { return 1LL * size[0] * size[1] * size[2]; }
};

// Interior cells next to side v (what goes to the neighbour at v).
Region send_region(const Box& b, const Dir& d) {
  Region r{};
  for (int i = 0; i < 3; ++i) {
    r.size[i] = d.v[i] == 0 ? b.n[i] : kRadius;
    r.start[i] = d.v[i] == 1 ? b.n[i] : kRadius;
  }
  return r;
}

// Halo cells on side u (what the neighbour at u sends).
Region halo_region(const Box& b, const Dir& u) {
  Region r{};
  for (int i = 0; i < 3; ++i) {
    r.size[i] = u.v[i] == 0 ? b.n[i] : kRadius;
    r.start[i] = u.v[i] == -1 ? 0 : u.v[i] == 0 ? kRadius : b.n[i] + kRadius;
  }
  return r;
}

// The value every copy of global cell (gz, gy, gx) of quantity q holds: a distinct whole number
// (exact in a double) per cell and quantity, never 0 or the poison -1.
__host__ __device__ inline double cell_value(int q, long long gz, long long gy, long long gx,
                                             const int g[3]) {
  return static_cast<double>(((q * 1LL * g[0] + gz) * g[1] + gy) * g[2] + gx + 1);
}

__host__ __device__ inline long long wrap(long long v, int g) { return ((v % g) + g) % g; }

struct BoxArgs {  // Box by value for the kernels
  int off[3], g[3], s[3];
};

BoxArgs box_args(const Box& b) {
  BoxArgs a{};
  for (int i = 0; i < 3; ++i) {
    a.off[i] = b.off[i];
    a.g[i] = b.g[i];
    a.s[i] = b.s[i];
  }
  return a;
}

// What cell `i` of quantity q's stored array must hold after an exchange (halo cells included:
// the neighbour's interior is the periodic continuation of the global function).
__host__ __device__ inline double expected_at(const BoxArgs& b, int q, long long i) {
  const long long x = i % b.s[2], t = i / b.s[2];
  const long long y = t % b.s[1], z = t / b.s[1];
  return cell_value(q, wrap(b.off[0] + z - kRadius, b.g[0]), wrap(b.off[1] + y - kRadius, b.g[1]),
                    wrap(b.off[2] + x - kRadius, b.g[2]), b.g);
}

__host__ __device__ inline bool in_halo(const BoxArgs& b, long long i) {
  const long long x = i % b.s[2], t = i / b.s[2];
  const long long y = t % b.s[1], z = t / b.s[1];
  auto out = [](long long c, int s) { return c < kRadius || c >= s - kRadius; };
  return out(z, b.s[0]) || out(y, b.s[1]) || out(x, b.s[2]);
}

__global__ void fill_kernel(double* a, long long cells, BoxArgs b, int q) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < cells;
       i += step) {
    a[i] = in_halo(b, i) ? -1.0 : expected_at(b, q, i);
  }
}

__global__ void check_kernel(const double* a, long long cells, BoxArgs b, int q,
                             unsigned long long* bad) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < cells;
       i += step) {
    mine += a[i] != expected_at(b, q, i);
  }
  if (mine != 0) atomicAdd(bad, mine);
}

// ---------------------------------------------------------------------------------------------
// The expert's fused pack / unpack: one job per (slot, quantity) piece.

struct Piece {
  double* array;         // the quantity's stored array
  long long packed_off;  // first element in the packed buffer
  int start[3], size[3];
  int sy, sx;  // stored edges of y and x (row pitch sx, plane pitch sy*sx)
};

__host__ __device__ inline long long piece_cell(const Piece& p, long long e) {
  const long long x = e % p.size[2], t = e / p.size[2];
  const long long y = t % p.size[1], z = t / p.size[1];
  return ((z + p.start[0]) * p.sy + (y + p.start[1])) * p.sx + x + p.start[2];
}

template <bool kUnpack>
__global__ void pieces_kernel(const Piece* pieces, double* packed) {
  const Piece p = pieces[blockIdx.y];
  const long long n = 1LL * p.size[0] * p.size[1] * p.size[2];
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < n;
       e += step) {
    if (kUnpack) {
      p.array[piece_cell(p, e)] = packed[p.packed_off + e];
    } else {
      packed[p.packed_off + e] = p.array[piece_cell(p, e)];
    }
  }
}

template <bool kUnpack>
void pieces_on_cpu(const std::vector<Piece>& pieces, double* packed) {
  for (const Piece& p : pieces) {
    const long long n = 1LL * p.size[0] * p.size[1] * p.size[2];
    for (long long e = 0; e < n; ++e) {
      if (kUnpack) {
        p.array[piece_cell(p, e)] = packed[p.packed_off + e];
      } else {
        packed[p.packed_off + e] = p.array[piece_cell(p, e)];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One problem size: the arrays, the types, the graph, and each form's exchange.

using Phases = std::map<std::string, double>;  // phase -> us, summed over an iteration

struct Form {
  std::string name;
  std::vector<std::string> phases;  // besides "total"
  std::function<void(Phases&)> exchange;
  bool moves_halo = true;  // false: the MPI's share alone (notices, wires), nothing to verify
};

struct Problem {
  Memory mem;
  Box box{};
  std::array<Dir, kDirs> dirs = directions();
  int dest[kDirs] = {}, src[kDirs] = {};  // ranks of slots k
  double* q[kQuantities] = {};
  MPI_Datatype send_t[kDirs] = {}, recv_t[kDirs] = {};  // per slot, one quantity
  MPI_Datatype send_w[kDirs] = {}, recv_w[kDirs] = {};  // per slot, all quantities (alltoallw)
  Region send_r[kDirs] = {}, recv_r[kDirs] = {};
  long long slot_cells[kDirs] = {};  // cells of one quantity in slot k (send == receive)
  long long halo_bytes = 0;          // B: bytes a rank sends per exchange
  MPI_Comm graph = MPI_COMM_NULL;
  // pack form
  char* packed_send = nullptr;
  char* packed_recv = nullptr;
  int pack_capacity = 0;
  int pack_scount[kDirs] = {}, pack_sdispl[kDirs] = {}, pack_rcount[kDirs] = {},
      pack_rdispl[kDirs] = {};
  // expert
  double* ex_send = nullptr;  // device packed
  double* ex_recv = nullptr;
  double* host_send = nullptr;  // pinned
  double* host_recv = nullptr;
  std::vector<Piece> pack_jobs, unpack_jobs;
  Piece* dev_pack_jobs = nullptr;
  Piece* dev_unpack_jobs = nullptr;
  int ex_count[kDirs] = {}, ex_displ[kDirs] = {};  // doubles per slot (same both ways)
  dim3 pack_grid, unpack_grid;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[6] = {};
  unsigned long long* bad = nullptr;
  // persistent form: receives first, then sends, in form (i)'s order, on its own communicator
  std::vector<MPI_Request> persistent;
  MPI_Comm persistent_comm = MPI_COMM_NULL;
  MPI_Comm messages_comm = MPI_COMM_NULL;  // notices and wires
};

void setup(Problem& p, MPI_Comm cart, const int dims[3], const int coords[3], int edge, bool global,
           Memory mem) {
  p.mem = mem;
  Box& b = p.box;
  for (int i = 0; i < 3; ++i) {
    if (global) {
      const int base = edge / dims[i], extra = edge % dims[i];
      b.n[i] = base + (coords[i] < extra ? 1 : 0);
      b.off[i] = coords[i] * base + std::min(coords[i], extra);
      b.g[i] = edge;
    } else {
      b.n[i] = edge;
      b.off[i] = coords[i] * edge;
      b.g[i] = edge * dims[i];
    }
    b.s[i] = b.n[i] + 2 * kRadius;
  }
  for (int k = 0; k < kDirs; ++k) {
    int to[3], from[3];
    for (int i = 0; i < 3; ++i) {
      to[i] = coords[i] + p.dirs[k].v[i];
      from[i] = coords[i] - p.dirs[k].v[i];
    }
    MPI_Cart_rank(cart, to, &p.dest[k]);  // periodic: out-of-range coordinates wrap
    MPI_Cart_rank(cart, from, &p.src[k]);
    p.send_r[k] = send_region(b, p.dirs[k]);
    const Dir minus{{-p.dirs[k].v[0], -p.dirs[k].v[1], -p.dirs[k].v[2]}};
    p.recv_r[k] = halo_region(b, minus);
    p.slot_cells[k] = p.send_r[k].cells();
    p.halo_bytes += p.slot_cells[k] * kQuantities * 8;
    MPI_Type_create_subarray(3, b.s, p.send_r[k].size, p.send_r[k].start, MPI_ORDER_C, MPI_DOUBLE,
                             &p.send_t[k]);
    MPI_Type_create_subarray(3, b.s, p.recv_r[k].size, p.recv_r[k].start, MPI_ORDER_C, MPI_DOUBLE,
                             &p.recv_t[k]);
    MPI_Type_commit(&p.send_t[k]);
    MPI_Type_commit(&p.recv_t[k]);
  }
  for (int i = 0; i < kQuantities; ++i) {
    p.q[i] = static_cast<double*>(strider::bench::buffer_alloc(mem, b.cells() * sizeof(double)));
  }
  // alltoallw's per-slot types: the slot's subarray at each quantity's offset from quantity 0.
  MPI_Aint base = 0, displ[kQuantities];
  MPI_Get_address(p.q[0], &base);
  for (int i = 0; i < kQuantities; ++i) {
    MPI_Aint a = 0;
    MPI_Get_address(p.q[i], &a);
    displ[i] = MPI_Aint_diff(a, base);
  }
  for (int k = 0; k < kDirs; ++k) {
    MPI_Type_create_hindexed_block(kQuantities, 1, displ, p.send_t[k], &p.send_w[k]);
    MPI_Type_create_hindexed_block(kQuantities, 1, displ, p.recv_t[k], &p.recv_w[k]);
    MPI_Type_commit(&p.send_w[k]);
    MPI_Type_commit(&p.recv_w[k]);
  }
  MPI_Dist_graph_create_adjacent(cart, kDirs, p.src, MPI_UNWEIGHTED, kDirs, p.dest, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &p.graph);
  // pack form: capacity from MPI_Pack_size; the counts come from a real pack (setup_pack).
  for (int k = 0; k < kDirs; ++k) {
    int sz = 0;
    MPI_Pack_size(kQuantities, p.send_t[k], MPI_COMM_WORLD, &sz);
    p.pack_capacity += sz;
  }
  p.packed_send = static_cast<char*>(strider::bench::buffer_alloc(mem, p.pack_capacity));
  p.packed_recv = static_cast<char*>(strider::bench::buffer_alloc(mem, p.pack_capacity));
  // expert: slot-major, quantity-major segments of doubles (MPI_Pack's order as well).
  long long at = 0;
  for (int k = 0; k < kDirs; ++k) {
    p.ex_displ[k] = static_cast<int>(at);
    p.ex_count[k] = static_cast<int>(p.slot_cells[k] * kQuantities);
    for (int i = 0; i < kQuantities; ++i) {
      Piece s{p.q[i], at, {}, {}, b.s[1], b.s[2]}, r = s;
      for (int a = 0; a < 3; ++a) {
        s.start[a] = p.send_r[k].start[a];
        s.size[a] = p.send_r[k].size[a];
        r.start[a] = p.recv_r[k].start[a];
        r.size[a] = p.recv_r[k].size[a];
      }
      p.pack_jobs.push_back(s);
      p.unpack_jobs.push_back(r);
      at += p.slot_cells[k];
    }
  }
  const std::size_t ex_bytes = static_cast<std::size_t>(at) * sizeof(double);
  p.ex_send = static_cast<double*>(strider::bench::buffer_alloc(mem, ex_bytes));
  p.ex_recv = static_cast<double*>(strider::bench::buffer_alloc(mem, ex_bytes));
  p.host_send = static_cast<double*>(strider::bench::staging_alloc(mem, ex_bytes));
  p.host_recv = static_cast<double*>(strider::bench::staging_alloc(mem, ex_bytes));
  if (mem == Memory::Device) {
    const std::size_t jobs_bytes = p.pack_jobs.size() * sizeof(Piece);
    CUDA_CHECK(cudaMalloc(&p.dev_pack_jobs, jobs_bytes));
    CUDA_CHECK(cudaMalloc(&p.dev_unpack_jobs, jobs_bytes));
    CUDA_CHECK(cudaMemcpy(p.dev_pack_jobs, p.pack_jobs.data(), jobs_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(p.dev_unpack_jobs, p.unpack_jobs.data(), jobs_bytes, cudaMemcpyHostToDevice));
    long long largest = 0;
    for (int k = 0; k < kDirs; ++k) largest = std::max(largest, p.slot_cells[k]);
    const unsigned gx = static_cast<unsigned>(std::min<long long>((largest + 255) / 256, 512));
    p.pack_grid = dim3(gx, static_cast<unsigned>(p.pack_jobs.size()));
    p.unpack_grid = p.pack_grid;
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
    for (auto& e : p.ev) CUDA_CHECK(cudaEventCreate(&e));
    CUDA_CHECK(cudaMalloc(&p.bad, sizeof(unsigned long long)));
  }
}

void teardown(Problem& p) {
  for (MPI_Request& r : p.persistent) MPI_Request_free(&r);
  p.persistent.clear();
  if (p.persistent_comm != MPI_COMM_NULL) MPI_Comm_free(&p.persistent_comm);
  if (p.messages_comm != MPI_COMM_NULL) MPI_Comm_free(&p.messages_comm);
  for (int k = 0; k < kDirs; ++k) {
    MPI_Type_free(&p.send_t[k]);
    MPI_Type_free(&p.recv_t[k]);
    MPI_Type_free(&p.send_w[k]);
    MPI_Type_free(&p.recv_w[k]);
  }
  MPI_Comm_free(&p.graph);
  for (double* a : p.q) strider::bench::buffer_free(p.mem, a);
  strider::bench::buffer_free(p.mem, p.packed_send);
  strider::bench::buffer_free(p.mem, p.packed_recv);
  strider::bench::buffer_free(p.mem, p.ex_send);
  strider::bench::buffer_free(p.mem, p.ex_recv);
  strider::bench::staging_free(p.mem, p.host_send);
  strider::bench::staging_free(p.mem, p.host_recv);
  if (p.mem == Memory::Device) {
    CUDA_CHECK(cudaFree(p.dev_pack_jobs));
    CUDA_CHECK(cudaFree(p.dev_unpack_jobs));
    CUDA_CHECK(cudaStreamDestroy(p.stream));
    for (auto& e : p.ev) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaFree(p.bad));
  }
}

// Interior cells hold their global values, halo cells the poison -1.
void fill(Problem& p) {
  const BoxArgs b = box_args(p.box);
  const long long cells = static_cast<long long>(p.box.cells());
  for (int i = 0; i < kQuantities; ++i) {
    if (p.mem == Memory::Device) {
      fill_kernel<<<1024, 256>>>(p.q[i], cells, b, i);
      CUDA_CHECK(cudaGetLastError());
    } else {
      for (long long c = 0; c < cells; ++c) p.q[i][c] = in_halo(b, c) ? -1.0 : expected_at(b, i, c);
    }
  }
  if (p.mem == Memory::Device) CUDA_CHECK(cudaDeviceSynchronize());
}

// Cells (interior and halo, all quantities) that differ from the global function, this rank.
long long count_wrong(Problem& p) {
  const BoxArgs b = box_args(p.box);
  const long long cells = static_cast<long long>(p.box.cells());
  unsigned long long bad = 0;
  if (p.mem == Memory::Device) {
    CUDA_CHECK(cudaMemset(p.bad, 0, sizeof bad));
    for (int i = 0; i < kQuantities; ++i) {
      check_kernel<<<1024, 256>>>(p.q[i], cells, b, i, p.bad);
      CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaMemcpy(&bad, p.bad, sizeof bad, cudaMemcpyDeviceToHost));
  } else {
    for (int i = 0; i < kQuantities; ++i) {
      for (long long c = 0; c < cells; ++c) bad += p.q[i][c] != expected_at(b, i, c);
    }
  }
  return static_cast<long long>(bad);
}

// The pack form's counts: pack once, take each slot's bytes, learn the peers' with one
// MPI_Neighbor_alltoall (so nothing assumes MPI_Pack's byte count).
// Form (vi)'s requests, created once: form (i)'s receives and sends as persistent requests, on a
// duplicate of MPI_COMM_WORLD (Strider makes no same-node offers on a communicator that has had
// a persistent receive: the other forms keep theirs).
void setup_persistent(Problem& p) {
  MPI_Comm_dup(MPI_COMM_WORLD, &p.persistent_comm);
  p.persistent.assign(2 * kDirs * kQuantities, MPI_REQUEST_NULL);
  int n = 0;
  for (int k = 0; k < kDirs; ++k) {
    for (int i = 0; i < kQuantities; ++i) {
      MPI_Recv_init(p.q[i], 1, p.recv_t[k], p.src[k], k * kQuantities + i, p.persistent_comm,
                    &p.persistent[n++]);
    }
  }
  for (int k = 0; k < kDirs; ++k) {
    for (int i = 0; i < kQuantities; ++i) {
      MPI_Send_init(p.q[i], 1, p.send_t[k], p.dest[k], k * kQuantities + i, p.persistent_comm,
                    &p.persistent[n++]);
    }
  }
}

void setup_pack(Problem& p) {
  int pos = 0;
  for (int k = 0; k < kDirs; ++k) {
    p.pack_sdispl[k] = pos;
    for (int i = 0; i < kQuantities; ++i) {
      MPI_Pack(p.q[i], 1, p.send_t[k], p.packed_send, p.pack_capacity, &pos, MPI_COMM_WORLD);
    }
    p.pack_scount[k] = pos - p.pack_sdispl[k];
  }
  MPI_Neighbor_alltoall(p.pack_scount, 1, MPI_INT, p.pack_rcount, 1, MPI_INT, p.graph);
  int at = 0;
  for (int k = 0; k < kDirs; ++k) {
    p.pack_rdispl[k] = at;
    at += p.pack_rcount[k];
  }
  if (at > p.pack_capacity) {
    std::fprintf(stderr,
                 "halo: peers send %d packed bytes, more than the %d MPI_Pack_size "
                 "allows\n",
                 at, p.pack_capacity);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// Computes for `us` microseconds without calling the MPI (the interior a code overlaps with its
// exchange).
void compute_for(int us) {
  if (us <= 0) return;
  const double until = now_us() + us;
  while (now_us() < until) {
  }
}

std::vector<Form> make_forms(Problem& p, const std::set<std::string>& wanted, int compute_us) {
  std::vector<Form> forms;
  auto add = [&](const char* name, std::vector<std::string> phases,
                 std::function<void(Phases&)> f) {
    if (wanted.count(name) != 0) forms.push_back(Form{name, std::move(phases), std::move(f)});
  };
  // A burst's requests completed by one MPI_Waitall, or (`wait_any`) one at a time (form (vii)).
  const auto complete = [](int n, MPI_Request* req, bool wait_any) {
    if (!wait_any) {
      MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
      return;
    }
    for (int index = 0; index != MPI_UNDEFINED;) {
      MPI_Waitany(n, req, &index, MPI_STATUS_IGNORE);
    }
  };
  // Form (i)'s 416 requests posted; `wait_any`: completed one at a time (form (vii)).
  const auto post_and_complete = [&p, compute_us, complete](bool wait_any) {
    MPI_Request req[2 * kDirs * kQuantities];
    int n = 0;
    for (int k = 0; k < kDirs; ++k) {
      for (int i = 0; i < kQuantities; ++i) {
        MPI_Irecv(p.q[i], 1, p.recv_t[k], p.src[k], k * kQuantities + i, MPI_COMM_WORLD, &req[n++]);
      }
    }
    for (int k = 0; k < kDirs; ++k) {
      for (int i = 0; i < kQuantities; ++i) {
        MPI_Isend(p.q[i], 1, p.send_t[k], p.dest[k], k * kQuantities + i, MPI_COMM_WORLD,
                  &req[n++]);
      }
    }
    compute_for(compute_us);
    complete(n, req, wait_any);
  };
  add("isend", {}, [post_and_complete](Phases&) { post_and_complete(false); });
  add("waitany", {}, [post_and_complete](Phases&) { post_and_complete(true); });
  add("persistent", {}, [&p, compute_us](Phases&) {
    const int n = static_cast<int>(p.persistent.size());
    MPI_Startall(n, p.persistent.data());
    compute_for(compute_us);
    MPI_Waitall(n, p.persistent.data(), MPI_STATUSES_IGNORE);
  });
  // Form (i)'s messages on host memory (the expert's pinned buffers, its slot-major,
  // quantity-major layout), `bytes`: each piece's (wires) or none (notices); `wait_any`:
  // completed by form (vii)'s loop of MPI_Waitany.
  const auto host_messages = [&p, complete](bool bytes, bool wait_any) {
    MPI_Request req[2 * kDirs * kQuantities];
    char* send = reinterpret_cast<char*>(p.host_send);
    char* recv = reinterpret_cast<char*>(p.host_recv);
    int n = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int k = 0; k < kDirs; ++k) {
        for (int i = 0; i < kQuantities; ++i) {
          const long long piece = p.slot_cells[k] * 8;
          const long long at = 8LL * p.ex_displ[k] + i * piece;
          const int count = bytes ? static_cast<int>(piece) : 0;
          const int tag = k * kQuantities + i;
          if (pass == 0) {
            MPI_Irecv(recv + at, count, MPI_BYTE, p.src[k], tag, p.messages_comm, &req[n++]);
          } else {
            MPI_Isend(send + at, count, MPI_BYTE, p.dest[k], tag, p.messages_comm, &req[n++]);
          }
        }
      }
    }
    complete(n, req, wait_any);
  };
  const auto add_messages = [&](const char* name, bool bytes, bool wait_any) {
    if (wanted.count(name) == 0) return;
    if (p.messages_comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &p.messages_comm);
    forms.push_back(
        Form{name,
             {},
             [host_messages, bytes, wait_any](Phases&) { host_messages(bytes, wait_any); },
             false});
  };
  add_messages("notices", false, false);
  add_messages("wires", true, false);
  add_messages("notices_waitany", false, true);
  add_messages("wires_waitany", true, true);
  add("pack", {"pack", "comm", "unpack"}, [&p](Phases& ph) {
    const double t0 = now_us();
    int pos = 0;
    for (int k = 0; k < kDirs; ++k) {
      for (int i = 0; i < kQuantities; ++i) {
        MPI_Pack(p.q[i], 1, p.send_t[k], p.packed_send, p.pack_capacity, &pos, MPI_COMM_WORLD);
      }
    }
    const double t1 = now_us();
    MPI_Neighbor_alltoallv(p.packed_send, p.pack_scount, p.pack_sdispl, MPI_PACKED, p.packed_recv,
                           p.pack_rcount, p.pack_rdispl, MPI_PACKED, p.graph);
    const double t2 = now_us();
    for (int k = 0; k < kDirs; ++k) {
      int at = p.pack_rdispl[k];
      for (int i = 0; i < kQuantities; ++i) {
        MPI_Unpack(p.packed_recv, p.pack_rdispl[k] + p.pack_rcount[k], &at, p.q[i], 1, p.recv_t[k],
                   MPI_COMM_WORLD);
      }
    }
    const double t3 = now_us();
    ph["pack"] += t1 - t0;
    ph["comm"] += t2 - t1;
    ph["unpack"] += t3 - t2;
  });
  add("alltoallw", {}, [&p](Phases&) {
    int counts[kDirs];
    MPI_Aint displs[kDirs];
    for (int k = 0; k < kDirs; ++k) {
      counts[k] = 1;
      displs[k] = 0;
    }
    MPI_Neighbor_alltoallw(p.q[0], counts, displs, p.send_w, p.q[0], counts, displs, p.recv_w,
                           p.graph);
  });
  add("expert", {"pack", "d2h", "comm", "h2d", "unpack"}, [&p](Phases& ph) {
    const std::size_t bytes = static_cast<std::size_t>(p.halo_bytes);
    if (p.mem == Memory::Host) {
      const double t0 = now_us();
      pieces_on_cpu<false>(p.pack_jobs, p.ex_send);
      const double t1 = now_us();
      std::memcpy(p.host_send, p.ex_send, bytes);
      const double t2 = now_us();
      MPI_Neighbor_alltoallv(p.host_send, p.ex_count, p.ex_displ, MPI_DOUBLE, p.host_recv,
                             p.ex_count, p.ex_displ, MPI_DOUBLE, p.graph);
      const double t3 = now_us();
      std::memcpy(p.ex_recv, p.host_recv, bytes);
      const double t4 = now_us();
      pieces_on_cpu<true>(p.unpack_jobs, p.ex_recv);
      const double t5 = now_us();
      ph["pack"] += t1 - t0;
      ph["d2h"] += t2 - t1;
      ph["comm"] += t3 - t2;
      ph["h2d"] += t4 - t3;
      ph["unpack"] += t5 - t4;
      return;
    }
    CUDA_CHECK(cudaEventRecord(p.ev[0], p.stream));
    pieces_kernel<false><<<p.pack_grid, 256, 0, p.stream>>>(p.dev_pack_jobs, p.ex_send);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(p.ev[1], p.stream));
    CUDA_CHECK(cudaMemcpyAsync(p.host_send, p.ex_send, bytes, cudaMemcpyDeviceToHost, p.stream));
    CUDA_CHECK(cudaEventRecord(p.ev[2], p.stream));
    CUDA_CHECK(cudaStreamSynchronize(p.stream));
    const double c0 = now_us();
    MPI_Neighbor_alltoallv(p.host_send, p.ex_count, p.ex_displ, MPI_DOUBLE, p.host_recv, p.ex_count,
                           p.ex_displ, MPI_DOUBLE, p.graph);
    const double c1 = now_us();
    CUDA_CHECK(cudaEventRecord(p.ev[3], p.stream));
    CUDA_CHECK(cudaMemcpyAsync(p.ex_recv, p.host_recv, bytes, cudaMemcpyHostToDevice, p.stream));
    CUDA_CHECK(cudaEventRecord(p.ev[4], p.stream));
    pieces_kernel<true><<<p.unpack_grid, 256, 0, p.stream>>>(p.dev_unpack_jobs, p.ex_recv);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(p.ev[5], p.stream));
    CUDA_CHECK(cudaStreamSynchronize(p.stream));
    float ms[5];
    CUDA_CHECK(cudaEventElapsedTime(&ms[0], p.ev[0], p.ev[1]));
    CUDA_CHECK(cudaEventElapsedTime(&ms[1], p.ev[1], p.ev[2]));
    CUDA_CHECK(cudaEventElapsedTime(&ms[3], p.ev[3], p.ev[4]));
    CUDA_CHECK(cudaEventElapsedTime(&ms[4], p.ev[4], p.ev[5]));
    ph["pack"] += ms[0] * 1e3;
    ph["d2h"] += ms[1] * 1e3;
    ph["comm"] += c1 - c0;
    ph["h2d"] += ms[3] * 1e3;
    ph["unpack"] += ms[4] * 1e3;
  });
  return forms;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;
  if (opt.thread_level >= 0) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, opt.thread_level, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Memory mem = opt.memory;
  int device = 0;
  if (mem == Memory::Device && !strider::bench::select_gpu(device)) {
    if (rank == 0) {
      std::printf(
          "halo: no CUDA device on every rank; nothing measured (--memory host runs "
          "without one)\n");
    }
    MPI_Finalize();
    return 0;
  }
  int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3] = {};
  MPI_Dims_create(size, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int cart_rank = 0;
  MPI_Comm_rank(cart, &cart_rank);
  MPI_Cart_coords(cart, cart_rank, 3, coords);

  // Sizes: per-rank edges, then global edges; a global edge must leave >= kRadius per rank.
  struct Case {
    int edge;
    bool global;
  };
  std::vector<Case> cases;
  for (int e : opt.n) cases.push_back({e, false});
  for (int e : opt.global) {
    bool fits = true;
    for (int d : dims) fits = fits && e / d >= kRadius;
    if (!fits) {
      if (rank == 0) {
        std::fprintf(stderr,
                     "halo: --global %d leaves a rank fewer than %d cells on an axis "
                     "(dims %dx%dx%d)\n",
                     e, kRadius, dims[0], dims[1], dims[2]);
      }
      MPI_Finalize();
      return 2;
    }
    cases.push_back({e, true});
  }

  FILE* csv = nullptr;
  int csv_ok = 1;
  if (rank == 0) {
    csv = std::fopen(opt.csv.c_str(), "w");
    if (csv == nullptr) {
      std::perror(opt.csv.c_str());
      csv_ok = 0;
    }
  }
  MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!csv_ok) {
    MPI_Finalize();
    return 2;
  }

  strider::bench::Machine machine;
  if (rank == 0) machine = strider::bench::measure_machine(mem);
  double mnum[2] = {machine.copy_bw, machine.launch_us};
  strider::bench::bcast_doubles(mnum, 2);
  machine = strider::bench::Machine{mnum[0], mnum[1]};
  const std::string date = strider::bench::today();
  const std::string devname = strider::bench::device_label(mem, device);
  const char* mpi = strider::bench::mpi_name();
  if (rank == 0) {
    std::printf(
        "halo: %d ranks (dims %dx%dx%d, periodic), %s memory on %s, %s, %s: copy %.2f "
        "TB/s (read+write), launch+sync %.2f us; %d iterations of %d exchanges (+%d "
        "warm-up)\n",
        size, dims[0], dims[1], dims[2], mem == Memory::Host ? "host" : "device", devname.c_str(),
        mpi, date.c_str(), machine.copy_bw / 1e12, machine.launch_us, opt.iters, kExchangesPerIter,
        opt.warmup);
    if (opt.thread_level >= 0) {
      int provided = MPI_THREAD_SINGLE;
      MPI_Query_thread(&provided);
      std::printf("MPI_Init_thread asked for %s, the MPI provided %s\n",
                  thread_level_name(opt.thread_level), thread_level_name(provided));
    }
    if (opt.compute_us > 0) {
      std::printf(
          "forms isend, waitany and persistent compute %d us between posting and "
          "completing (their floor is at least that)\n",
          opt.compute_us);
    }
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_SINGLE) std::printf("thread level provided: %d\n", level);
    std::fprintf(csv, "%s,split,local_box,iters\n", strider::bench::kCsvHeader);
  }

  int status = 0;
  for (const Case& c : cases) {
    Problem p;
    setup(p, cart, dims, coords, c.edge, c.global, mem);
    const long long bytes = p.halo_bytes;
    // Floor primitives at this size, rank 0's buffers.
    double bus[2] = {0, 0};
    if (rank == 0) {
      strider::bench::measure_bus_us(mem, p.ex_send, p.host_send, static_cast<std::size_t>(bytes),
                                     bus[0], bus[1]);
    }
    strider::bench::bcast_doubles(bus, 2);
    const double side_us =
        2.0 * static_cast<double>(bytes) / machine.copy_bw * 1e6 + machine.launch_us;
    const double floor_us = 2 * side_us + bus[0] + bus[1];
    std::map<std::string, double> phase_floor = {
        {"total", floor_us}, {"iter3", kExchangesPerIter * floor_us},
        {"pack", side_us},   {"unpack", side_us},
        {"d2h", bus[0]},     {"h2d", bus[1]}};
    std::vector<Form> forms = make_forms(p, opt.forms, opt.compute_us);
    const char* split = c.global ? "global" : "per_rank";
    char local_box[64];
    std::snprintf(local_box, sizeof local_box, "%dx%dx%d", p.box.n[0], p.box.n[1], p.box.n[2]);
    if (rank == 0) {
      std::printf(
          "\n%s N=%d (this rank's box %s, global %dx%dx%d): %lld halo bytes per exchange "
          "per rank; floor %.1f us (pack/unpack %.1f each, D2H %.1f, H2D %.1f)\n",
          split, c.edge, local_box, p.box.g[0], p.box.g[1], p.box.g[2], bytes, floor_us, side_us,
          bus[0], bus[1]);
    }

    // Verify every form once before timing.
    if (opt.forms.count("pack") != 0) setup_pack(p);
    if (opt.forms.count("persistent") != 0) setup_persistent(p);
    std::vector<std::string> wrong_forms;
    for (Form& f : forms) {
      if (!f.moves_halo) continue;
      fill(p);
      MPI_Barrier(MPI_COMM_WORLD);
      Phases ignored;
      f.exchange(ignored);
      long long wrong = count_wrong(p);
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (wrong != 0) {
        wrong_forms.push_back(f.name);
        if (rank == 0) {
          std::fprintf(stderr,
                       "halo: form %s at N=%d (%s) left %lld wrong cells (all ranks; %lld "
                       "cells per rank)\n",
                       f.name.c_str(), c.edge, split, wrong,
                       static_cast<long long>(p.box.cells()) * kQuantities);
        }
      }
    }
    if (!wrong_forms.empty()) {
      status = 1;
      teardown(p);
      break;
    }

    // Time: forms interleaved per iteration.
    struct Samples {
      std::vector<double> iter;
      std::map<std::string, std::vector<double>> phase;
    };
    std::vector<Samples> samples(forms.size());
    for (int it = 0; it < opt.warmup + opt.iters; ++it) {
      for (std::size_t fi = 0; fi < forms.size(); ++fi) {
        Phases ph;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        for (int e = 0; e < kExchangesPerIter; ++e) forms[fi].exchange(ph);
        const double t = now_us() - t0;
        if (it < opt.warmup) continue;
        samples[fi].iter.push_back(t);
        for (const std::string& name : forms[fi].phases)
          samples[fi].phase[name].push_back(ph[name]);
      }
    }
    // After timing the halos must still be right (an exchange is idempotent), where a form
    // moved them (forms of host messages alone leave them unfilled).
    const bool moved =
        std::any_of(forms.begin(), forms.end(), [](const Form& f) { return f.moves_halo; });
    long long wrong_after = moved ? count_wrong(p) : 0;
    MPI_Allreduce(MPI_IN_PLACE, &wrong_after, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrong_after != 0) {
      if (rank == 0) {
        std::fprintf(stderr, "halo: %lld wrong cells after the timed exchanges at N=%d (%s)\n",
                     wrong_after, c.edge, split);
      }
      status = 1;
    }

    // Rows: slowest rank per sample; expert's same phase for the ratio.
    std::map<std::string, std::map<std::string, Summary>> result;  // form -> phase -> summary
    for (std::size_t fi = 0; fi < forms.size(); ++fi) {
      const std::vector<double> iter = strider::bench::slowest_rank(samples[fi].iter);
      std::vector<double> per_ex = iter;
      for (double& v : per_ex) v /= kExchangesPerIter;
      result[forms[fi].name]["iter3"] = strider::bench::summarize(iter);
      result[forms[fi].name]["total"] = strider::bench::summarize(per_ex);
      for (const std::string& name : forms[fi].phases) {
        std::vector<double> v = strider::bench::slowest_rank(samples[fi].phase[name]);
        for (double& x : v) x /= kExchangesPerIter;
        result[forms[fi].name][name] = strider::bench::summarize(v);
      }
    }
    if (rank == 0) {
      std::printf("%-10s %-7s %11s %11s %11s %11s %8s %8s\n", "form", "phase", "median_us",
                  "p10_us", "p90_us", "floor_us", "x_floor", "x_expert");
      char extra[160];
      std::snprintf(extra, sizeof extra, "%s,%s,%d", split, local_box, opt.iters);
      auto row = [&](const std::string& form, const std::string& phase, const Summary& s) {
        double fl = 0, ex = 0;
        if (phase_floor.count(phase) != 0) fl = phase_floor[phase];
        if (form == "pack" && phase == "comm") fl = bus[0] + bus[1];
        if (result.count("expert") != 0 && result["expert"].count(phase) != 0) {
          ex = result["expert"][phase].median;
        }
        strider::bench::csv_row(csv, date, devname, mpi, size, c.edge, form, phase, s, bytes, fl,
                                ex, extra);
        std::printf("%-10s %-7s %11.1f %11.1f %11.1f %11s %8s %8s\n", form.c_str(), phase.c_str(),
                    s.median, s.p10, s.p90,
                    fl > 0 ? std::to_string(static_cast<long long>(fl + 0.5)).c_str() : "-",
                    fl > 0 ? std::to_string(s.median / fl).substr(0, 6).c_str() : "-",
                    ex > 0 ? std::to_string(s.median / ex).substr(0, 6).c_str() : "-");
      };
      for (const Form& f : forms) {
        row(f.name, "total", result[f.name]["total"]);
        row(f.name, "iter3", result[f.name]["iter3"]);
        for (const std::string& name : f.phases) row(f.name, name, result[f.name][name]);
      }
      const Summary fs{floor_us, floor_us, floor_us};
      row("floor", "total", fs);
    }
    teardown(p);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0) break;
  }
  if (rank == 0) {
    std::fclose(csv);
    std::printf("\nhalo: %s; CSV: %s\n", status == 0 ? "all forms verified" : "WRONG RESULTS",
                opt.csv.c_str());
  }
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return status;
}
