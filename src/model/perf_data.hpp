// What strider-measure measured on one machine: the contents of the perf file, as plain values.
// The JSON form (perf_json.hpp) is versioned; anything this struct cannot hold is a new version.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "canon/direction.hpp"
#include "model/log_table.hpp"
#include "model/loggops.hpp"
#include "model/method.hpp"

namespace strider::model {

// Bumped whenever the meaning or layout of a field changes; files of other versions are ignored.
inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kSchemaName = "strider-perf";

// Whether a peer runs on the same node (shared memory, CUDA IPC) or on another one.
enum class Placement { SameNode, Remote };
const char* to_string(Placement placement);
bool parse_placement(const std::string& text, Placement& out);  // "same-node" | "remote"

// What must match for a file's figures to describe this process's machine.
struct MachineIdentity {
  std::string gpu;  // cudaDeviceProp::name
  int driver = 0;   // cudaDriverGetVersion
  std::string mpi;  // the first line of MPI_Get_library_version
  // Spelled out (not defaulted): CUDA sources include this header as C++17.
  friend bool operator==(const MachineIdentity& a, const MachineIdentity& b) {
    return a.gpu == b.gpu && a.driver == b.driver && a.mpi == b.mpi;
  }
};
// Empty when they match, else which field differs and how.
std::string identity_mismatch(const MachineIdentity& file, const MachineIdentity& here);

// A pack table's target is the method whose pack or unpack it times, as the runtime does it:
//   Device:  into or out of GPU memory;
//   OneShot: mapped pinned host memory, written or read by the kernel itself (the perf file
//            spells it "mapped");
//   Staged:  pinned host memory through GPU scratch and one DMA copy.
// Staged is measured, not composed from a kernel and a copy: the launches and the
// synchronization of the pair cost what they cost on this machine.
using canon::Direction;

// Pack or unpack time of strided objects of one family: rows are block lengths (bytes),
// columns packed object sizes (bytes). Cells whose block exceeds half the object hold the time
// of an object of two blocks (what the model looks up for them too).
// Irregular tables hold block lists (MPI_Type_create_hindexed with uneven blocks and gaps of
// the given means), which take the GPU engine's block-list kernel; optional: without them
// block lists are looked up in the regular tables. Block lists of more pieces than Strider
// plans hold the time of the largest plannable one, scaled by the bytes.
struct PackTable {
  Method target = Method::Device;
  Direction direction = Direction::Pack;
  int dims = 2;             // 2: blocks along one stride; 3: along two
  double stride_ratio = 2;  // innermost stride / block length (the mean, for block lists)
  bool irregular = false;   // a block list
  Table2D seconds;
};

// Transfers between the two ranks of one placement: half a round trip of a contiguous message.
// peer_write (same node, where CUDA IPC maps the peer's memory): one kernel copying contiguous
// bytes from this GPU's memory into the peer's, launch + sync included; what a same-node offer's
// pack pays beyond a local pack when the peer is another GPU.
struct TransferTables {
  Table1D host;                       // pinned host buffers
  std::optional<Table1D> device;      // GPU buffers, only measured when the MPI is CUDA-aware
  std::optional<Table1D> peer_write;  // absent: not measured, or no CUDA IPC between the ranks
};

struct PerfData {
  int schema_version = kSchemaVersion;
  std::string created;  // ISO 8601, informational
  std::string tool;     // what wrote it, informational
  MachineIdentity machine;
  std::string cuda_runtime;    // informational
  double launch_sync = 10e-6;  // an empty kernel launch + stream synchronize, seconds
  Table1D d2h;                 // pinned copies, seconds by bytes
  Table1D h2d;
  std::map<Placement, TransferTables> transfers;
  std::vector<PackTable> pack;
  // strider-measure --loggp: per method ("host", "oneshot", ...), the timings of the LogGOPS fit.
  std::map<std::string, std::vector<LogGopsSample>> loggops;
  bool built_in = false;  // the conservative defaults, not a measurement
};

// Empty when every table is well formed and the file has what the model needs (copies, at least
// one placement's host transfers, pack and unpack tables for every target).
std::string validate(const PerfData& data);

}  // namespace strider::model
