// Demo: 3D halo exchange between two ranks with MPI derived datatypes, run with Strider
// preloaded. Each rank owns an N^3 block of doubles with a halo of width H; the six faces are
// described as subarray and vector datatypes (different constructions on purpose), packed with
// MPI_Pack, exchanged with the system MPI, unpacked with MPI_Unpack into the peer's halo, and
// checked element by element. It prints how Strider saw each datatype and what it did.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "strider/strider.h"

namespace {

constexpr int N = 128;        // interior points per dimension
constexpr int H = 2;          // halo width
constexpr int S = N + 2 * H;  // stored points per dimension (x fastest)

std::size_t at(int z, int y, int x) { return (static_cast<std::size_t>(z) * S + y) * S + x; }

// The value a rank stores at an interior point: unique per rank and position.
double value(int rank, int z, int y, int x) { return rank * 1e7 + (z * S + y) * S + x; }

struct Face {
  const char* name;
  const char* construction;
  MPI_Datatype send;  // interior slab next to the face
  MPI_Datatype recv;  // halo slab on the opposite side
  int lo[3], hi[3];   // [z,y,x) box of the send slab, to check the receiver's halo
  int shift[3];       // where that box lands in the receiver's halo
};

MPI_Datatype subarray_box(const int start[3], const int size[3]) {
  const int sizes[3] = {S, S, S};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, size, start, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

// The same kind of box built from vectors: rows of `size[2]` doubles, `size[1]` rows per
// plane, `size[0]` planes; placed at `start` by the buffer offset the caller adds.
MPI_Datatype vector_box(const int size[3]) {
  MPI_Datatype rows, planes;
  MPI_Type_vector(size[1], size[2], S, MPI_DOUBLE, &rows);
  MPI_Type_create_hvector(size[0], 1, static_cast<MPI_Aint>(S) * S * sizeof(double), rows, &planes);
  MPI_Type_free(&rows);
  MPI_Type_commit(&planes);
  return planes;
}

using Describe = int (*)(MPI_Datatype, char*, int);
using GetStats = int (*)(strider_stats*, size_t);

std::string describe(MPI_Datatype t) {
  auto fn = reinterpret_cast<Describe>(dlsym(RTLD_DEFAULT, "strider_describe_type"));
  if (!fn) return "  (Strider is not loaded: the system MPI does everything)\n";
  std::string text(8192, '\0');
  const int n = fn(t, text.data(), static_cast<int>(text.size()));
  text.resize(static_cast<std::size_t>(std::max(0, std::min<int>(n, text.size() - 1))));
  std::string indented = "  ";
  for (char c : text) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return indented.substr(0, indented.size() - 2);
}

template <class F>
double median_us(F&& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[reps / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "halo3d: run with exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const int peer = 1 - rank;

  std::vector<double> grid(static_cast<std::size_t>(S) * S * S, -1.0);
  for (int z = H; z < H + N; ++z)
    for (int y = H; y < H + N; ++y)
      for (int x = H; x < H + N; ++x) grid[at(z, y, x)] = value(rank, z, y, x);

  // +x, -x faces as subarrays; +y, -y as vectors; +z, -z as subarrays again.
  const int xs[3] = {N, N, H}, ys[3] = {N, H, N}, zs[3] = {H, N, N};
  std::vector<Face> faces;
  auto add = [&](const char* name, const char* how, const int size3[3], const int send_at[3],
                 const int recv_at[3], bool vectors) {
    Face f{name, how, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, {}, {}, {}};
    if (vectors) {
      f.send = vector_box(size3);
      f.recv = f.send;  // placed by buffer offset below
    } else {
      f.send = subarray_box(send_at, size3);
      f.recv = subarray_box(recv_at, size3);
    }
    for (int d = 0; d < 3; ++d) {
      f.lo[d] = send_at[d];
      f.hi[d] = send_at[d] + size3[d];
      f.shift[d] = recv_at[d] - send_at[d];
    }
    faces.push_back(f);
  };
  const int sx_hi[3] = {H, H, N}, rx_lo[3] = {H, H, 0};
  const int sx_lo[3] = {H, H, H}, rx_hi[3] = {H, H, N + H};
  const int sy_hi[3] = {H, N, H}, ry_lo[3] = {H, 0, H};
  const int sy_lo[3] = {H, H, H}, ry_hi[3] = {H, N + H, H};
  const int sz_hi[3] = {N, H, H}, rz_lo[3] = {0, H, H};
  const int sz_lo[3] = {H, H, H}, rz_hi[3] = {N + H, H, H};
  add("+x", "subarray", xs, sx_hi, rx_lo, false);
  add("-x", "subarray", xs, sx_lo, rx_hi, false);
  add("+y", "vector of hvector", ys, sy_hi, ry_lo, true);
  add("-y", "vector of hvector", ys, sy_lo, ry_hi, true);
  add("+z", "subarray", zs, sz_hi, rz_lo, false);
  add("-z", "subarray", zs, sz_lo, rz_hi, false);

  long wrong = 0;
  double strider_total = 0, mpi_total = 0;
  for (Face& f : faces) {
    const bool vectors = f.send == f.recv;
    const double* send_origin = vectors ? &grid[at(f.lo[0], f.lo[1], f.lo[2])] : grid.data();
    double* recv_origin =
        vectors ? &grid[at(f.lo[0] + f.shift[0], f.lo[1] + f.shift[1], f.lo[2] + f.shift[2])]
                : grid.data();
    int bytes = 0;
    MPI_Pack_size(1, f.send, MPI_COMM_WORLD, &bytes);
    std::vector<char> out(bytes), in(bytes);
    int position = 0;
    MPI_Pack(send_origin, 1, f.send, out.data(), bytes, &position, MPI_COMM_WORLD);
    MPI_Sendrecv(out.data(), position, MPI_PACKED, peer, 0, in.data(), bytes, MPI_PACKED, peer, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int in_position = 0;
    MPI_Unpack(in.data(), bytes, &in_position, recv_origin, 1, f.recv, MPI_COMM_WORLD);

    // Every received halo value must be the peer's interior value from the sent box.
    for (int z = f.lo[0]; z < f.hi[0]; ++z)
      for (int y = f.lo[1]; y < f.hi[1]; ++y)
        for (int x = f.lo[2]; x < f.hi[2]; ++x) {
          const double got = grid[at(z + f.shift[0], y + f.shift[1], x + f.shift[2])];
          wrong += got != value(peer, z, y, x);
        }

    // Time the pack with whatever serves MPI_Pack (Strider) and with the system MPI directly.
    int p = 0;
    const double t_strider = median_us(
        [&] {
          p = 0;
          MPI_Pack(send_origin, 1, f.send, out.data(), bytes, &p, MPI_COMM_WORLD);
        },
        50);
    const double t_mpi = median_us(
        [&] {
          p = 0;
          PMPI_Pack(send_origin, 1, f.send, out.data(), bytes, &p, MPI_COMM_WORLD);
        },
        50);
    strider_total += t_strider;
    mpi_total += t_mpi;
    if (rank == 0) {
      std::printf("face %s (%s), %d bytes packed\n%s", f.name, f.construction, position,
                  describe(f.send).c_str());
      std::printf("  MPI_Pack through Strider %.1f us, system MPI alone %.1f us\n\n", t_strider,
                  t_mpi);
    }
  }
  long wrong_total = 0;
  MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    strider_stats s{};
    if (auto get = reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"))) {
      get(&s, sizeof s);
    }
    std::printf("halo exchange of 6 faces: %s (%ld wrong values over both ranks)\n",
                wrong_total == 0 ? "every byte correct" : "WRONG DATA", wrong_total);
    std::printf(
        "Strider on rank 0: %llu packs and %llu unpacks by its host engine, %llu packs "
        "and %llu unpacks forwarded to the MPI, %llu types planned\n",
        static_cast<unsigned long long>(s.packs_host),
        static_cast<unsigned long long>(s.unpacks_host),
        static_cast<unsigned long long>(s.packs_forwarded),
        static_cast<unsigned long long>(s.unpacks_forwarded),
        static_cast<unsigned long long>(s.types_planned));
    std::printf("pack time, 6 faces: %.1f us through Strider, %.1f us with the system MPI\n",
                strider_total, mpi_total);
  }
  for (Face& f : faces) {
    if (f.recv != f.send) MPI_Type_free(&f.recv);
    MPI_Type_free(&f.send);
  }
  MPI_Finalize();
  return wrong_total == 0 ? 0 : 1;
}
