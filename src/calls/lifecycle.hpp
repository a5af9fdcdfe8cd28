// What Strider sets up after the MPI is initialized and tears down before it is finalized, in
// one place and one order: each layer's start and stop, lowest first up and last down.
#pragma once

namespace strider::calls {

// Collective over MPI_COMM_WORLD (the offers' board). False where Strider became a pass-through
// instead (an MPI of another ABI than this build's: one warning).
bool on_init();
void on_finalize();  // after the operations the application orphaned are drained

}  // namespace strider::calls
