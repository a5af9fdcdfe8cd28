// Point-to-point as operations: a send holds its packed wire buffer until the MPI is done with
// it; a receive holds its wire buffer and unpacks it into the user's object on completion.
#pragma once

#include "transfer/operation.hpp"
#include "transfer/wire.hpp"

namespace strider::transfer {

class SendOperation final : public Operation {
 public:
  explicit SendOperation(Outgoing out) : out_(std::move(out)) {}
  int complete(const MPI_Status& status, bool succeeded) override;

 private:
  Outgoing out_;
};

class ReceiveOperation final : public Operation {
 public:
  explicit ReceiveOperation(Incoming in) : in_(std::move(in)) {}
  int complete(const MPI_Status& status, bool succeeded) override;
  int observe_complete(const MPI_Status& status) override;
  bool cancel_at_finalize() const override { return true; }

 private:
  Incoming in_;
};

}  // namespace strider::transfer
