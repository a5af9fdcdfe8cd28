#include "explain/options.hpp"

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace strider::explain {
namespace {

constexpr const char* kHelp =
    "Shows how Strider decodes and canonicalizes MPI datatypes given in a compact text form.\n"
    "Usage: strider-explain [OPTIONS] [TYPES...]\n"
    "Example: strider-explain 'subarray(C,[1024,512,256],[47,13,100],[0,0,0],byte)'\n"
    "Constructors: contiguous vector hvector indexed hindexed indexed_block hindexed_block\n"
    "struct subarray darray resized dup, over named types (byte, int, double, float_int, ...).\n"
    "\n"
    "Positionals:\n"
    "  TYPES              datatypes in text form (read one per line from stdin if none)\n"
    "Options:\n"
    "  -h, --help         print this help and exit\n"
    "  --version          print Strider's version, the MPI this process runs on (name,\n"
    "                     version) and the MPI ABI this build was compiled for, and exit\n"
    "  --count N          also predict each transfer method's cost for N elements sent from\n"
    "                     GPU memory, and show auto's choice\n"
    "  --peer same-node|remote\n"
    "                     where the peer runs, for the prediction (default same-node)\n"
    "  --perf-file PATH   perf file for the prediction (default: $STRIDER_PERF_FILE, else\n"
    "                     ${XDG_CACHE_HOME:-~/.cache}/strider/perf.json)\n"
    "Exit status: 0 all handled by Strider, 2 some left to the MPI, 1 an error.\n";

bool fail(const std::string& why) {
  std::cerr << "strider-explain: " << why << "\nRun with --help for more information.\n";
  return false;
}

bool positive(const std::string& text, long long& out) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v <= 0) return false;
  out = v;
  return true;
}

// One option and its value; false after saying what is wrong.
bool apply(const std::string& name, const std::string& value, PredictionRequest& request) {
  if (name == "--count") {
    request.wanted = true;
    return positive(value, request.count) || fail("--count: '" + value + "' is not positive");
  }
  if (name == "--peer") {
    request.wanted = true;
    return model::parse_placement(value, request.peer) ||
           fail("--peer: '" + value + "' is not one of same-node, remote");
  }
  request.perf_file = value;  // --perf-file
  return true;
}

}  // namespace

std::optional<Options> parse_options(int argc, char** argv, int& exit_status) {
  Options options;
  exit_status = 1;
  bool positionals_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (positionals_only || arg.empty() || arg[0] != '-') {
      options.types.push_back(arg);
      continue;
    }
    if (arg == "--") {
      positionals_only = true;
      continue;
    }
    if (arg == "--version") {
      options.version = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << kHelp;
      exit_status = 0;
      return std::nullopt;
    }
    // --name value or --name=value.
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name != "--count" && name != "--peer" && name != "--perf-file") {
      fail("unknown option " + arg);
      return std::nullopt;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fail(name + " needs a value");
      return std::nullopt;
    }
    if (!apply(name, value, options.request)) return std::nullopt;
  }
  return options;
}

}  // namespace strider::explain
