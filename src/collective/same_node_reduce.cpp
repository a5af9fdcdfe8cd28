#include "collective/same_node_reduce.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "collective/peer_mappings.hpp"
#include "collective/reduce_kind.hpp"
#include "collective/same_node.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "ipc/wire_buffers.hpp"
#include "ipc/wire_ipc.hpp"
#include "runtime/log.hpp"
#include "transfer/object.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"

namespace strider::collective {
namespace {

using engine::cuda::ReduceKind;

// When the GPUs compute a reduction Strider could compute there (STRIDER_GPU_REDUCE unset).
// bench/coll_kinds, MPI_Allreduce of int and double, two ranks, H100s, 2026-11-26
// (bench/results/2026-11-26-gpu-reductions): a GPU per rank, the GPUs were 3-7x faster than
// host copies at 256-512 KiB and 21-137x from 4 MiB, and 1-2 us slower at 4-8 B (within the
// runs' spread). Both ranks on one GPU without MPS, where every kernel and copy waits for the
// other process's time slice: 575 against 300 us at 4 B-8 KiB, 0.3-0.4x at 256-512 KiB, 3-7x
// faster from 4 MiB; under MPS 0.7-0.85x up to 8 KiB, 3-6x at 256 KiB. MPS cannot be detected,
// so one shared GPU takes the no-MPS crossover. 8- and 16-bit integer sums and products go to
// the GPUs whatever their size: Open MPI 4.1's own op saturates them (open-mpi/ompi#8045).
struct ReducePolicy {
  static constexpr std::int64_t kMinBytesOnOneGpu = std::int64_t{1} << 20;  // per rank's input
};

bool narrow_integer_arithmetic(const ReduceKind& kind) {
  using engine::cuda::ReduceElement;
  using engine::cuda::ReduceOp;
  const ReduceElement e = kind.element;
  return (kind.op == ReduceOp::Sum || kind.op == ReduceOp::Prod) &&
         (e == ReduceElement::Int8 || e == ReduceElement::UInt8 || e == ReduceElement::Int16 ||
          e == ReduceElement::UInt16);
}

// Whether this call goes to the GPUs, the same on every rank of a correct call: the setting,
// the placement, the kind and the input's size.
bool wanted(const SameNodeVerdict& verdict, const ReductionShape& s,
            const std::optional<ReduceKind>& kind) {
  if (const auto forced_value = runtime::forced(transfer::settings().gpu_reductions)) {
    return *forced_value;
  }
  if (!verdict.one_gpu) return true;
  return kind &&
         (narrow_integer_arithmetic(*kind) ||
          static_cast<std::int64_t>(engine::cuda::element_bytes(kind->element)) * s.input_count >=
              ReducePolicy::kMinBytesOnOneGpu);
}

struct Record {
  std::int32_t ready = 0;  // takes part
  std::int32_t element = 0, op = 0;
  std::int32_t pad = 0;
  std::int64_t input_count = 0;
  std::int64_t wire_bytes = 0;  // the wire's allocation
  ipc::WireHandle wire;
};

// The GPU this rank's kernel runs on: its output's, else its input's, else the current one.
// -1 when neither buffer is GPU memory Strider moves (the rank is not Strider's) or the output
// is not GPU memory its kernel can write.
int reduction_device(const ReductionShape& s) {
  if (s.input == MPI_IN_PLACE) return -1;  // an erroneous call: the MPI's to report
  if (s.output_count > 0) {
    transfer::Object out;
    if (!transfer::view_object(s.output, s.output_count, s.type, out) || !out.gpu ||
        !out.view.device_visible || out.view.info.device < 0) {
      return -1;
    }
    return out.view.info.device;
  }
  transfer::Object in;
  if (!transfer::view_object(s.input, s.input_count, s.type, in) || !in.gpu) return -1;
  return in.view.info.device >= 0 ? in.view.info.device : engine::cuda::current_device();
}

// Step 1: this rank's record, its input copied into `wire`. Not ready (with `why`) where it
// cannot take part.
Record contribute(const ReductionShape& s, const ReduceKind& kind, int device,
                  ipc::WireBuffer& wire, std::string& why) {
  Record r;
  r.element = static_cast<std::int32_t>(kind.element);
  r.op = static_cast<std::int32_t>(kind.op);
  r.input_count = s.input_count;
  const auto bytes = static_cast<std::size_t>(s.input_count) *
                     static_cast<std::size_t>(engine::cuda::element_bytes(kind.element));
  // engine::cuda::copy waits for the copy, itself ordered after the default stream's work.
  if (!ipc::acquire_wire(ipc::WireMemory::Device, device, bytes, wire, why) ||
      !ipc::export_wire(wire, r.wire, why) ||
      !engine::cuda::copy(wire.data(), s.input, bytes, why)) {
    wire = ipc::WireBuffer{};
    return r;
  }
  r.wire_bytes = static_cast<std::int64_t>(wire.block.capacity);
  r.ready = 1;
  return r;
}

// Step 2's verdict, the same on every rank: all ready, with one kind and one input length.
bool all_alike(const std::vector<Record>& all) {
  for (const Record& r : all) {
    if (r.ready != 1 || r.element != all[0].element || r.op != all[0].op ||
        r.input_count != all[0].input_count) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool same_node_reduction(MPI_Comm comm, const ReductionShape& s, int& rc) {
  // Off on every rank alike (the settings must match), so no rank asks.
  const transfer::Settings& config = transfer::settings();
  if (!config.same_node || config.gpu_reductions == runtime::Tristate::No || s.input_count <= 0) {
    return false;
  }
  int inter = 0, size = 0, me = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2 ||
      size > engine::cuda::kMaxReduceInputs || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
    return false;
  }
  const SameNodeVerdict verdict = same_node_verdict(comm, size);
  if (!verdict.same_node) return false;
  const std::optional<ReduceKind> kind = reduce_kind(s.type, s.op);
  if (!wanted(verdict, s, kind)) return false;

  // Steps 1 and 2.
  std::string why;
  ipc::WireBuffer wire;
  Record mine;
  const int device = kind && !s.aliased ? reduction_device(s) : -1;
  if (device >= 0) mine = contribute(s, *kind, device, wire, why);
  std::vector<Record> all(static_cast<std::size_t>(size));
  if (PMPI_Allgather(&mine, sizeof(Record), MPI_BYTE, all.data(), sizeof(Record), MPI_BYTE, comm) !=
          MPI_SUCCESS ||
      !all_alike(all)) {
    if (!why.empty())
      runtime::log(runtime::LogLevel::Info, "GPU reduction not taken: %s", why.c_str());
    return false;
  }

  // Step 3: the inputs this rank folds, mapped.
  const std::int64_t element = engine::cuda::element_bytes(kind->element);
  const std::int64_t skip = static_cast<std::int64_t>(s.output_first) * element;
  PeerMappings mapped;
  std::vector<const std::byte*> inputs;
  int ready = 1;
  for (int k = 0; s.output_count > 0 && k < s.folded && ready; ++k) {
    std::byte* base =
        k == me ? wire.data() : mapped.map(all[k].wire, all[k].wire_bytes, device, why);
    if (!base)
      ready = 0;
    else
      inputs.push_back(base + skip);
  }
  int all_ready = 0;
  if (PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all_ready = 0;
  if (!all_ready) {
    if (!why.empty())
      runtime::log(runtime::LogLevel::Info, "GPU reduction not taken: %s", why.c_str());
    return false;
  }

  // Step 4.
  rc = MPI_SUCCESS;
  if (s.output_count > 0) {
    std::string error;
    if (engine::cuda::reduce(*kind, inputs, static_cast<std::byte*>(s.output), s.output_count,
                             device, error) != engine::cuda::Outcome::Done) {
      rc = transfer::report_error(comm, "GPU reduction", error);
    }
  }
  if (PMPI_Barrier(comm) != MPI_SUCCESS && rc == MPI_SUCCESS) {
    rc = transfer::report_error(comm, "GPU reduction", "the closing barrier failed");
  }
  if (rc == MPI_SUCCESS) {
    transfer::counters().collectives_served++;
    transfer::counters().collectives_same_node++;
    transfer::counters().reductions_on_gpu++;
  }
  return true;
}

}  // namespace strider::collective
