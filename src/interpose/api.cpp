// The strider_* C API (include/strider/strider.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "ipc/wire_buffers.hpp"
#include "offers/stream_table.hpp"
#include "strider/strider.h"
#include "transfer/cuda_aware.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/method.hpp"
#include "transfer/next.hpp"
#include "transfer/perf_model.hpp"
#include "transfer/requests.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"
#include "transfer/wire.hpp"

using namespace strider;

STRIDER_EXPORT const char* strider_version(void) { return STRIDER_VERSION; }

namespace {

// strider_stats as strider_get_stats first shipped (7 counters, up to plans_cached): what the
// unsized call writes, whichever header its caller was built with.
constexpr std::size_t kFirstStatsSize = offsetof(strider_stats, packs_gpu);
static_assert(kFirstStatsSize == 7 * sizeof(std::uint64_t));

void collect_stats(strider_stats* out) {
  const transfer::Counters& c = transfer::counters();
  out->types_planned = c.types_planned.load();
  out->types_unsupported = c.types_unsupported.load();
  out->packs_host = c.packs_host.load();
  out->unpacks_host = c.unpacks_host.load();
  out->packs_forwarded = c.packs_forwarded.load();
  out->unpacks_forwarded = c.unpacks_forwarded.load();
  out->plans_cached = transfer::plans().size();
  out->packs_gpu = c.packs_gpu.load();
  out->unpacks_gpu = c.unpacks_gpu.load();
  out->packs_staged = c.packs_staged.load();
  out->unpacks_staged = c.unpacks_staged.load();
  out->sends_packed = c.sends_packed.load();
  out->recvs_packed = c.recvs_packed.load();
  out->sends_forwarded = c.sends_forwarded.load();
  out->recvs_forwarded = c.recvs_forwarded.load();
  out->transfers_device = c.transfers_device.load();
  out->transfers_oneshot = c.transfers_oneshot.load();
  out->transfers_staged = c.transfers_staged.load();
  out->transfers_host = c.transfers_host.load();
  out->requests_pending = transfer::requests().size();
  const ipc::PoolStats pools = ipc::pool_stats();
  out->pool_host_bytes = pools.pinned_bytes;
  out->pool_device_bytes = pools.device_bytes;
  out->pool_allocations = pools.allocations;
  out->collectives_served = c.collectives_served.load();
  out->collectives_forwarded = c.collectives_forwarded.load();
  out->persistent_refused = c.persistent_refused.load();
  out->collectives_same_node = c.collectives_same_node.load();
  out->collective_pieces_in_place = c.collective_pieces_in_place.load();
  out->offers_in_place = c.offers_in_place.load();
  out->offers_made = c.offers_made.load();
  out->offers_taken = c.offers_taken.load();
  out->offers_used = c.offers_used.load();
  const offers::StreamTally streams = offers::stream_tally();
  out->offers_streams = streams.held;
  out->offers_streams_forgotten = streams.forgotten;
  out->reductions_on_gpu = c.reductions_on_gpu.load();
  out->unpack_waves = c.unpack_waves.load();
  out->pack_waves = c.pack_waves.load();
  out->persistent_served = c.persistent_served.load();
  out->sends_deferred = c.sends_deferred.load();
  out->deferred_flushes = c.deferred_flushes.load();
  out->progress_flushes = c.progress_flushes.load();
  out->receives_early = c.receives_early.load();
  out->default_stream_checks = c.default_stream_checks.load();
}

}  // namespace

STRIDER_EXPORT int strider_get_stats_sized(strider_stats* out, size_t size) {
  if (size == 0) return 0;
  if (out == nullptr) return -1;
  strider_stats all{};
  collect_stats(&all);
  const std::size_t n = std::min(size, sizeof all);
  std::memcpy(out, &all, n);
  return static_cast<int>(n);
}

STRIDER_EXPORT int strider_get_stats(strider_stats* out) {
  strider_get_stats_sized(out, kFirstStatsSize);
  return 0;
}

STRIDER_EXPORT int strider_set_method(const char* method) {
  model::MethodRequest choice;
  if (method == nullptr || !transfer::parse_method(method, choice)) return -1;
  transfer::set_requested_method(choice);
  return 0;
}

STRIDER_EXPORT int strider_set_p2p_host(int pack) {
  transfer::set_p2p_host(pack != 0);
  return 0;
}

static_assert(STRIDER_ONESHOT == static_cast<int>(model::Method::OneShot) &&
                  STRIDER_STAGED == static_cast<int>(model::Method::Staged) &&
                  STRIDER_DEVICE == static_cast<int>(model::Method::Device) &&
                  STRIDER_METHODS == model::kModelledMethods,
              "strider.h's method indices are the model's");

STRIDER_EXPORT int strider_predict(MPI_Datatype type, int count, int same_node,
                                   strider_prediction* out) {
  if (transfer::settings().disabled || out == nullptr || count < 0) return -1;
  const calls::PostingTurn turn;  // a type's decoding calls the MPI
  auto p = transfer::plan_for(type);
  if (!p || !p->supported) return -1;
  const auto placement = same_node ? model::Placement::SameNode : model::Placement::Remote;
  const bool aware = transfer::mpi_cuda_aware();
  model::Selector& selector = transfer::perf_model();
  const model::ObjectShape shape = model::object_shape(p->shape, count);
  const model::Prediction prediction = selector.predict(shape, placement, aware);
  for (int m = 0; m < model::kModelledMethods; ++m) {
    out->available[m] = prediction[m].available ? 1 : 0;
    out->send_side[m] = prediction[m].send_side;
    out->transfer[m] = prediction[m].transfer;
    out->recv_side[m] = prediction[m].recv_side;
    out->total[m] = prediction[m].total();
  }
  out->send_choice = static_cast<int>(model::choose(prediction, false));
  out->recv_choice = static_cast<int>(model::choose(prediction, true));
  out->measured = selector.model().warning.empty() ? 1 : 0;
  return 0;
}

STRIDER_EXPORT int strider_describe_type(MPI_Datatype type, char* buffer, int size) {
  if (transfer::settings().disabled) return -1;  // a pure pass-through decodes nothing
  const calls::PostingTurn turn;                 // a type's decoding calls the MPI
  auto p = transfer::plan_for(type);
  if (!p) return -1;
  std::string text = plan::describe(*p);
  if (p->supported) {
    text += std::string("engine for host buffers: ") +
            (transfer::host_engine_serves(*p) ? "strider-cpu" : "system MPI") + "\n";
    text += std::string("engine for GPU buffers: ") +
            (!transfer::gpu_engine_serves(*p) ? "staged through host memory"
             : p->form.strided()              ? "strider-gpu (strided kernel)"
                                              : "strider-gpu (block-list kernel)") +
            "\n";
  }
  if (buffer != nullptr && size > 0) {
    const std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(size - 1));
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return static_cast<int>(text.size());
}
