// Point-to-point as operations: a send holds its packed wire buffer until the MPI is done with
// it; a receive holds its wire buffer and unpacks it into the user's object on completion.
#pragma once

#include "offers/receive_state.hpp"
#include "transfer/operation.hpp"
#include "transfer/wire.hpp"

namespace strider::calls {

class SendOperation final : public transfer::Operation {
 public:
  explicit SendOperation(transfer::Outgoing out) : out_(std::move(out)) {}
  int complete(MPI_Status& status, int error) override;
  bool numbered_send() const override { return true; }

 private:
  transfer::Outgoing out_;
};

class ReceiveOperation final : public transfer::Operation {
 public:
  explicit ReceiveOperation(transfer::Incoming in) : in_(std::move(in)) {}
  int complete(MPI_Status& status, int error) override;
  int observe_complete(MPI_Status& status) override;
  bool cancel_at_finalize() const override { return true; }
  bool may_cancel() override;
  transfer::Incoming* incoming() override { return &in_; }
  // Whether its data may be unpacked in another completion call's wave (early_arrivals.hpp):
  // not yet unpacked.
  bool may_join_early() const { return !in_.unpacked; }

 private:
  transfer::Incoming in_;
};

// A nonblocking send's notice (offers/protocol.hpp): its data is already in the
// receiver's landing or receive buffer, and the offered receive waits for this very message, so
// it is never cancelled (the standard lets a cancel fail; the send completes normally).
class NoticeOperation final : public transfer::Operation {
 public:
  int complete(MPI_Status&, int) override { return MPI_SUCCESS; }
  bool may_cancel() override { return false; }
};

// A receive the MPI fills, watched only so the same-node offers' receive ledger learns what it
// matched (offers/protocol.hpp).
class ObservedReceive final : public transfer::Operation {
 public:
  explicit ObservedReceive(offers::Watch watch) : watch_(std::move(watch)) {}
  int complete(MPI_Status& status, int error) override;
  bool cancel_at_finalize() const override { return true; }

 private:
  offers::Watch watch_;
};

}  // namespace strider::calls
