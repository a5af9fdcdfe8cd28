// The offers' state of each communicator they are used on (docs/same-node-p2p.md): the name
// every member agreed for it when it was made, which the board's slots carry (a handle means
// nothing in another process), its ranks' world ranks, and its send and receive ledgers.
// MPI_COMM_WORLD is named at MPI_Init; a communicator made by a call Strider interposes (dup,
// split, create, the topologies, intercommunicator merge) is named by one MPI_Allreduce over it
// right after. Every other communicator has no state, and no offers.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "offers/ledger.hpp"

namespace strider::offers {

struct CommLedgers {
  std::uint64_t name = 0;
  std::vector<int> world_ranks;  // by rank in the communicator
  SendLedger sends;
  ReceiveLedger receives;

  // The world rank of a rank of the communicator; -1 for anything else.
  int world_rank(int rank) const {
    return rank >= 0 && rank < static_cast<int>(world_ranks.size()) ? world_ranks[rank] : -1;
  }
};

// Names MPI_COMM_WORLD (at MPI_Init, once offers are agreed on) and makes the attribute key
// that forgets a communicator when it is freed.
void name_world();
// Collective over `comm`, a communicator just made by every member's same call, wherever offers
// were agreed on at MPI_Init: agrees on its name. Left unnamed, with no collective:
// MPI_COMM_NULL, intercommunicators, communicators with processes of another MPI_COMM_WORLD.
// A failure leaves it unnamed too (the communicator itself was made).
void name_comm(MPI_Comm comm);
// The state of `comm`; null where it has none. Valid until the next naming or forgetting.
const std::shared_ptr<CommLedgers>* ledgers_of(MPI_Comm comm);
void for_each_ledgers(const std::function<void(CommLedgers&)>& fn);
// Before MPI_Finalize: forgets every communicator.
void forget_comms();

}  // namespace strider::offers
