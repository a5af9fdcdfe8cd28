// The pieces of a collective's buffer argument, from the shapes MPI gives them: `n` pieces of
// one count and type laid one after another, per-piece counts at displacements in extent
// units (the -v forms), or per-piece types at byte displacements (the -w forms).
#pragma once

#include <mpi.h>

#include <optional>
#include <vector>

#include "collective/call.hpp"
#include "collective/side.hpp"

namespace strider::collective {

// False when the type is unknown to Strider (the MPI reports it).
bool uniform_specs(int n, int count, MPI_Datatype type, std::vector<PieceSpec>& out);
bool varying_specs(int n, const int counts[], const int displs[], MPI_Datatype type,
                   std::vector<PieceSpec>& out);
template <class Displacement>
void typed_specs(int n, const int counts[], const Displacement displs[], const MPI_Datatype types[],
                 std::vector<PieceSpec>& out) {
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[i] = {static_cast<std::int64_t>(displs[i]), counts[i], types[i]};
}
// One piece: the i-th of `count` elements each (for a rank's own piece in -gather/-scatter).
bool single_spec(int count, MPI_Datatype type, std::int64_t displacement,
                 std::vector<PieceSpec>& out);
// Any negative count: the MPI reports it.
bool negative(int n, const int counts[]);

// A uniform side's wire arguments: the wire buffer, the per-piece count and the wire type.
struct Uniform {
  void* buffer;
  int count;
  MPI_Datatype type;
};
// For a converted side (all pieces alike); the application's own for the others.
Uniform uniform_args(Side& side, const void* buffer, int count, MPI_Datatype type);

// A -v side's wire arguments: per piece a count and a displacement in wire elements, and one
// wire type for all pieces (they share the application's type); the application's own when the
// side is not converted.
struct Varying {
  const int* counts;
  const int* displs;
  MPI_Datatype type;
};
int varying_args(Call& call, Side& side, WireArgs& wire, const int counts[], const int displs[],
                 MPI_Datatype type, Varying& out);
// The buffer the MPI gets for a side: its wire (once start() has run) or the application's.
void* wire_or(Side& side, const void* buffer);

// Whether Strider is off (STRIDER_DISABLE) for every call.
bool strider_off();

// What a call Strider does not serve returns: the MPI's error where the MPI rejected the
// communicator in Strider's own query of it (`rejected`: its error handler has run, and
// forwarding would run it again), else forward()'s.
template <class Forward>
int forward_unless_rejected(int rejected, Forward forward) {
  return rejected != MPI_SUCCESS ? rejected : forward();
}

// The group of a collective on `comm` that Strider may serve (into `g`: std::nullopt), or what the
// call returns without it (forward_unless_rejected; Strider off, MPI_COMM_NULL: forward()'s).
template <class Forward>
std::optional<int> forward_unless_grouped(MPI_Comm comm, Group& g, Forward forward) {
  int rejected = MPI_SUCCESS;
  if (!strider_off() && group_of(comm, g, rejected)) return std::nullopt;
  return forward_unless_rejected(rejected, forward);
}

}  // namespace strider::collective
