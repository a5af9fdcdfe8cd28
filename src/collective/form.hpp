// How a collective is called: blocking (MPI_Alltoallw), nonblocking (MPI_Ialltoallw) or
// persistent (MPI_Alltoallw_init, then MPI_Start each time). One value carries the form from the
// interposed entry point to the MPI's own call on the wires, so that every collective serves all
// three with one body.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>

namespace strider::collective {

struct Call;

struct Form {
  // Blocking when null, else nonblocking: `request` is where the MPI's request goes.
  Form(MPI_Request* r = nullptr) : request(r) {}  // NOLINT: implicit, as the MPI's argument

  // The persistent form: the MPI's MPI_<name>_init creates `*request` on the wires; the served
  // call's state (wires, pieces, held types) is left in `*kept` for MPI_Start and its
  // completions. A call Strider does not serve (nothing to move here) goes to the MPI.
  static Form persistent(MPI_Info info, MPI_Request* request, std::shared_ptr<Call>* kept) {
    Form f(request);
    f.is_persistent = true;
    f.info = info;
    f.kept = kept;
    return f;
  }

  bool blocking() const { return request == nullptr; }

  MPI_Request* request = nullptr;
  bool is_persistent = false;
  MPI_Info info = MPI_INFO_NULL;
  std::shared_ptr<Call>* kept = nullptr;

  // A call that came through an MPI-4 large-count entry point (`_c`) with its counts and
  // displacements narrowed to ints: `original` makes the MPI's own `_c` call on the
  // application's arguments, where Strider does not serve the call; `narrowed` holds the int
  // arrays the classic path may hand the MPI, kept with the served call until it completes or,
  // persistent, is freed (the MPI may read them until then).
  std::function<int()> original;
  std::shared_ptr<const void> narrowed;
  // Such a call whose values do not fit an int on this rank (its arguments then hold zeros): not
  // served here. It still takes part in what every rank of the call does first, the same-node
  // step of a blocking call (execute.hpp), whose collectives other ranks, whose values fit, make
  // too; then it goes to the MPI through `original`.
  bool forward_only = false;
};

}  // namespace strider::collective
