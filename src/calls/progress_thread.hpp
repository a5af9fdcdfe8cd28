// The progress thread (docs/bursts.md, B8): where the application posts nonblocking sends and
// then computes without calling the MPI, it starts the deferred sends after a quiet spell
// (STRIDER_PROGRESS_US), so that their receivers get them as an MPI would deliver them (the
// progress rule of MPI-4.1 3.7.4) and communication overlaps the computation. It calls the MPI
// only between the application's calls (deferred_sends.hpp, PostingTurn), which
// MPI_THREAD_SERIALIZED allows: Strider asks MPICH for that level where the application asks for
// less; on other MPIs the thread runs where the application asks for SERIALIZED or MULTIPLE
// itself. Under MPI_THREAD_MULTIPLE it calls the MPI beside the application, and sends are
// deferred only while it runs: it is what starts a thread's sends while every other thread of
// the application blocks in an MPI call it entered before they were queued. Off with
// STRIDER_BURST=0 or STRIDER_PROGRESS_US=0.
#pragma once

namespace strider::calls {

// The thread level Strider asks the MPI for where the application asks for `required`: at
// least MPI_THREAD_SERIALIZED while a progress thread is wanted and can run (a CPU to spare), on an
// MPI where that level costs nothing more (MPICH).
int thread_level_to_ask(int required);

// After the MPI's initialization, which provided `provided`: starts the thread where it is wanted,
// the level allows it (MPI_THREAD_SERIALIZED or MULTIPLE) and the process may run on more than one
// CPU (the thread would otherwise take the application's).
void start_progress_thread(int provided);
// Before the MPI's finalization: stops and joins it (nothing where none runs).
void stop_progress_thread();

// A send was queued: wakes the thread where it sleeps (one load otherwise).
void progress_posted();

}  // namespace strider::calls
