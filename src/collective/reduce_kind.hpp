// Which reductions the GPU computes for the MPI: a predefined op on a predefined type that the
// standard allows it on (C integers, float and double, C_BOOL, BYTE, and the MINLOC/MAXLOC pair
// types), mapped to the engine's kind (engine/cuda/reduce.hpp). Anything else (user ops,
// derived types, long double, complex, Fortran types, an op the type does not allow) has none:
// the MPI's own op computes it on host copies, and reports what it rejects.
#pragma once

#include <mpi.h>

#include <optional>

#include "engine/cuda/reduce.hpp"

namespace strider::collective {

std::optional<engine::cuda::ReduceKind> reduce_kind(MPI_Datatype type, MPI_Op op);

}  // namespace strider::collective
