// The MPI type a packed element travels as in a collective: `size` contiguous bytes. A rank
// Strider serves passes the same element count and element size as a rank the MPI serves
// directly (whose type has that size), so the MPI's algorithms, which split messages by
// elements, cut both the same way.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace strider::collective {

// Committed and cached per size; MPI_DATATYPE_NULL when the MPI cannot make it.
MPI_Datatype wire_type(std::int64_t size);

// At MPI_Finalize.
void free_wire_types();

}  // namespace strider::collective
