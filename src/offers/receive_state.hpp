// What a receive carries for the offer protocol (docs/same-node-p2p.md): its ticket in the
// receive ledger (every receive on a communicator with offers is counted, whoever finishes it)
// and, for a receive Strider finishes, the offer it made. Both close themselves if dropped
// before the receive completed (a receive the MPI refused to post: its offer was only planned).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "ipc/wire_buffers.hpp"
#include "offers/board.hpp"
#include "transfer/receive_extras.hpp"
#include "transfer/wire.hpp"

namespace strider::offers {

struct CommLedgers;

struct Watch {
  std::uint64_t ticket = 0;              // 0: not counted
  std::shared_ptr<CommLedgers> ledgers;  // its communicator's (kept alive past MPI_Comm_free)
  Watch() = default;
  Watch(std::uint64_t t, std::shared_ptr<CommLedgers> l) : ticket(t), ledgers(std::move(l)) {}
  Watch(Watch&& other) noexcept
      : ticket(std::exchange(other.ticket, 0)), ledgers(std::move(other.ledgers)) {}
  Watch& operator=(Watch&& other) noexcept;
  ~Watch();
};

struct Offer {
  int slot = -1;  // -1: no offer
  // The message it will be for, from the count until it is published (protocol.hpp publish).
  std::optional<MessageId> planned;
  Landing landing = Landing::Board;
  int sender = -1;             // world rank
  ipc::WireBuffer wire;        // the device landing buffer
  std::byte* board = nullptr;  // the host landing area
  Offer() = default;
  Offer(Offer&& other) noexcept
      : slot(std::exchange(other.slot, -1)),
        planned(std::exchange(other.planned, std::nullopt)),
        landing(other.landing),
        sender(other.sender),
        wire(std::move(other.wire)),
        board(other.board) {}
  Offer& operator=(Offer&& other) noexcept;
  ~Offer();
};

// Both, as the receive's extras (transfer/receive_extras.hpp).
struct OfferedReceive final : transfer::ReceiveExtras {
  Watch watch;  // counted by the receive ledger (protocol.hpp)
  Offer offer;  // the same-node offer made for it, if any
  bool settle(transfer::Incoming& in, MPI_Status& status, int error, int& rc) override;
  void release() override { offer = Offer{}; }
  bool unsettled() const override { return offer.slot >= 0 || watch.ticket != 0; }
};
// The offers' extras of `in`, made on first use.
OfferedReceive& offered(transfer::Incoming& in);

}  // namespace strider::offers
