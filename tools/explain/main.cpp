// strider-explain: shows how Strider sees a datatype written in the compact text form:
// what MPI reports, the IR the decoder builds, each canonicalization step, the final form.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "explain/prediction.hpp"
#include "plan/plan.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/perf_model.hpp"
#include "typespec/type_spec.hpp"

namespace {

// --count / --peer: also print the performance model's view of sending `count` elements.
struct PredictionRequest {
  bool wanted = false;
  long long count = 1;
  strider::model::Placement peer = strider::model::Placement::SameNode;
  std::string perf_file;
};

int explain(const std::string& text, const PredictionRequest& request) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  try {
    type = strider::typespec::build_type(text);
  } catch (const strider::typespec::ParseError& e) {
    std::cerr << "strider-explain: " << e.what() << "\n  " << text << "\n  "
              << std::string(e.position, ' ') << "^\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "strider-explain: " << text << ": " << e.what() << "\n";
    return 1;
  }
  MPI_Type_commit(&type);
  strider::plan::Explanation explanation;
  const auto plan = strider::plan::build_plan(type, &explanation);
  std::cout << "type:      " << text << "\n"
            << strider::plan::describe(*plan, &explanation) << "\n";
  if (request.wanted && plan->supported) {
    static const auto loaded = strider::transfer::load_perf_file(request.perf_file);
    std::cout << strider::explain::describe_prediction(loaded, *plan, request.count, request.peer,
                                                       strider::transfer::mpi_cuda_aware())
              << "\n";
  } else if (request.wanted) {
    std::cout << "no prediction: the type is left to the MPI's own pack\n\n";
  }
  if (!strider::typespec::is_named(type)) MPI_Type_free(&type);
  return plan->supported ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Shows how Strider decodes and canonicalizes MPI datatypes given in a compact text form.\n"
      "Example: strider-explain 'subarray(C,[1024,512,256],[47,13,100],[0,0,0],byte)'\n"
      "Constructors: contiguous vector hvector indexed hindexed indexed_block hindexed_block\n"
      "struct subarray darray resized dup, over named types (byte, int, double, float_int, ...).\n"
      "With --count N [--peer same-node|remote]: the performance model's predicted cost of each\n"
      "transfer method for N elements in GPU memory, and the method auto picks.\n"
      "Exit status: 0 all handled by Strider, 2 some left to the MPI, 1 an error.",
      "strider-explain"};
  std::vector<std::string> types;
  app.add_option("types", types, "datatypes in text form (read one per line from stdin if none)");
  PredictionRequest request;
  std::string peer;
  auto* count = app.add_option("--count", request.count,
                               "also predict each transfer method's cost for this many elements "
                               "sent from GPU memory, and show auto's choice")
                    ->check(CLI::PositiveNumber);
  auto* peer_option =
      app.add_option("--peer", peer, "where the peer runs, for the prediction (default same-node)")
          ->check(CLI::IsMember({"same-node", "remote"}));
  app.add_option("--perf-file", request.perf_file,
                 "perf file for the prediction (default: $STRIDER_PERF_FILE, else "
                 "${XDG_CACHE_HOME:-~/.cache}/strider/perf.json)");
  CLI11_PARSE(app, argc, argv);
  request.wanted = count->count() > 0 || peer_option->count() > 0;
  if (!peer.empty()) strider::model::parse_placement(peer, request.peer);

  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  if (types.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line[0] != '#') types.push_back(line);
    }
  }
  int status = 0;
  for (const std::string& text : types) status = std::max(status, explain(text, request));
  MPI_Finalize();
  return status;
}
