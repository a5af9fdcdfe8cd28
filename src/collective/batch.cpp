#include "collective/batch.hpp"

#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"

namespace strider::collective {
namespace {

bool batchable(const Piece& p) { return !p.skip && batch_takes(p); }

// The pieces the engine's batch takes, and whether any is left for one-by-one handling.
std::vector<engine::cuda::BatchItem> batch_items(const std::vector<Piece>& pieces, bool& rest) {
  std::vector<engine::cuda::BatchItem> items;
  rest = false;
  for (const Piece& p : pieces) {
    if (p.skip || p.bytes() == 0) continue;
    if (!batchable(p)) {
      rest = true;
      continue;
    }
    const plan::Plan& plan = *p.object.plan;
    items.push_back(
        {&plan.form, plan.bounds.extent, &plan.gpu, p.object.count, p.object.view, p.offset});
  }
  return items;
}

std::int64_t wire_bytes(const std::vector<Piece>& pieces) {
  std::int64_t end = 0;
  for (const Piece& p : pieces) end = std::max(end, p.offset + p.bytes());
  return end;
}

}  // namespace

bool batch_takes(const Piece& p) {
  return p.bytes() > 0 && p.object.gpu && transfer::gpu_engine_serves(*p.object.plan);
}

int pack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm) {
  bool rest = false;
  const auto items = batch_items(pieces, rest);
  auto outcome = engine::cuda::Outcome::Done;
  std::string error;
  if (!items.empty()) {
    outcome =
        engine::cuda::pack_batch(items, wire, wire_bytes(pieces), transfer::gpu_policy(), error);
    if (outcome == engine::cuda::Outcome::Failed)
      return transfer::report_error(comm, "GPU pack", error);
    if (outcome == engine::cuda::Outcome::Done) transfer::counters().packs_gpu += items.size();
  }
  for (const Piece& p : pieces) {
    if (p.skip || p.bytes() == 0) continue;
    if (batchable(p) && outcome == engine::cuda::Outcome::Done) continue;
    const runtime::BufferView at = runtime::shifted(wire, p.offset);
    if (const int rc =
            transfer::pack_object(p.object, at.host, at, transfer::HostPacking::Strider, comm))
      return rc;
  }
  return MPI_SUCCESS;
}

int unpack_batch(const std::vector<Piece>& pieces, const runtime::BufferView& wire, MPI_Comm comm) {
  bool rest = false;
  const auto items = batch_items(pieces, rest);
  auto outcome = engine::cuda::Outcome::Done;
  std::string error;
  if (!items.empty()) {
    outcome =
        engine::cuda::unpack_batch(wire, wire_bytes(pieces), items, transfer::gpu_policy(), error);
    if (outcome == engine::cuda::Outcome::Failed)
      return transfer::report_error(comm, "GPU unpack", error);
    if (outcome == engine::cuda::Outcome::Done) transfer::counters().unpacks_gpu += items.size();
  }
  for (const Piece& p : pieces) {
    if (p.skip || p.bytes() == 0) continue;
    if (batchable(p) && outcome == engine::cuda::Outcome::Done) continue;
    const runtime::BufferView at = runtime::shifted(wire, p.offset);
    if (const int rc =
            transfer::unpack_object(p.object, at.host, at, transfer::HostPacking::Strider, comm))
      return rc;
  }
  return MPI_SUCCESS;
}

int unpack_batch_from(const std::vector<Piece>& pieces,
                      const std::vector<engine::cuda::BatchSide>& sources, const Piece* own_from,
                      const Piece* own_to, int device, MPI_Comm comm) {
  const auto layout = [](const Piece& p) {
    const plan::Plan& plan = *p.object.plan;
    return engine::cuda::BatchSide{&plan.form, plan.bounds.extent, &plan.gpu, p.object.count,
                                   p.object.view.device};
  };
  std::vector<engine::cuda::BatchCopy> copies;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    if (p.skip || p.bytes() == 0) continue;
    if (!batch_takes(p))
      return transfer::report_error(comm, "GPU unpack", "a piece the GPU batch cannot take");
    copies.push_back({sources[i], layout(p)});
  }
  if (own_from && own_to && own_from->bytes() > 0) {
    if (!batch_takes(*own_from) || !batch_takes(*own_to)) {
      return transfer::report_error(comm, "GPU copy", "a piece the GPU batch cannot take");
    }
    copies.push_back({layout(*own_from), layout(*own_to)});
  }
  if (copies.empty()) return MPI_SUCCESS;
  std::string error;
  const auto outcome = engine::cuda::copy_batch(copies, device, transfer::gpu_policy(), error);
  if (outcome != engine::cuda::Outcome::Done)
    return transfer::report_error(comm, "GPU unpack", error);
  transfer::counters().unpacks_gpu += copies.size();
  return MPI_SUCCESS;
}

int copy_piece(const transfer::Object& from, const transfer::Object& to, MPI_Comm comm) {
  if (from.gpu && to.gpu && transfer::gpu_engine_serves(*from.plan) &&
      transfer::gpu_engine_serves(*to.plan)) {
    std::string error;
    const auto outcome = engine::cuda::copy_layout(from.plan->gpu_layout(), from.count, from.view,
                                                   to.plan->gpu_layout(), to.count, to.view,
                                                   transfer::gpu_policy(), error);
    if (outcome == engine::cuda::Outcome::Done) return MPI_SUCCESS;
    if (outcome == engine::cuda::Outcome::Failed)
      return transfer::report_error(comm, "GPU copy", error);
  }
  // Through the packed bytes in host memory.
  std::vector<std::byte> packed(static_cast<std::size_t>(from.bytes()));
  runtime::BufferView view;
  view.host = packed.data();
  if (const int rc =
          transfer::pack_object(from, packed.data(), view, transfer::HostPacking::Strider, comm))
    return rc;
  return transfer::unpack_object(to, packed.data(), view, transfer::HostPacking::Strider, comm);
}

}  // namespace strider::collective
