// strider-explain: shows how Strider sees a datatype written in the compact text form:
// what MPI reports, the IR the decoder builds, each canonicalization step, the final form.
#include <mpi.h>

#include <iostream>
#include <string>
#include <vector>

#include "explain/options.hpp"
#include "explain/prediction.hpp"
#include "plan/plan.hpp"
#include "runtime/mpi_library.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/perf_model.hpp"
#include "typespec/type_spec.hpp"

namespace {

using strider::explain::PredictionRequest;

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
  int exit_status = 0;
  auto options = strider::explain::parse_options(argc, argv, exit_status);
  if (!options) return exit_status;
  if (options->version) {
    // The standard allows MPI_Get_library_version before MPI_Init.
    const strider::runtime::MpiLibrary& mpi = strider::runtime::mpi_library();
    std::cout << "strider-explain " << STRIDER_VERSION
              << "\nMPI: " << strider::runtime::to_string(mpi.family) << " " << mpi.major << "."
              << mpi.minor << "." << mpi.patch << " (" << mpi.name << ")\nbuilt for the "
              << strider::runtime::built_abi() << " ABI\n";
    return 0;
  }
  const PredictionRequest& request = options->request;
  std::vector<std::string>& types = options->types;

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
