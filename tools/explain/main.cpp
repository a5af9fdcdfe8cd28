// strider-explain: shows how Strider sees a datatype written in the compact text form:
// what MPI reports, the IR the decoder builds, each canonicalization step, the final form.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "typespec/type_spec.hpp"

namespace {

int explain(const std::string& text) {
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
      "Exit status: 0 all handled by Strider, 2 some left to the MPI, 1 an error.",
      "strider-explain"};
  std::vector<std::string> types;
  app.add_option("types", types, "datatypes in text form (read one per line from stdin if none)");
  CLI11_PARSE(app, argc, argv);

  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  if (types.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line[0] != '#') types.push_back(line);
    }
  }
  int status = 0;
  for (const std::string& text : types) status = std::max(status, explain(text));
  MPI_Finalize();
  return status;
}
