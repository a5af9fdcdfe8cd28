// Predicted cost of moving one GPU object to a peer by each method, from a PerfData, and the
// choice each side makes. Pure functions.
//   one-shot: pack kernel into mapped pinned memory -> host transfer -> unpack kernel from it;
//   staged:   pack kernel into GPU scratch + D2H copy -> host transfer -> H2D copy + unpack
//             (the pair measured as one: Method::Staged);
//   device:   pack kernel into GPU memory -> the CUDA-aware MPI's device transfer -> unpack.
// Sender and receiver choose alone (the wire format is the same), each minimizing its own side
// plus the transfer. The transfer is costed as if both sides used the same kind of wire
// buffer: exact for one-shot and staged (both pinned host memory), an approximation when one
// side hands GPU memory to a CUDA-aware MPI (device) and the other pinned memory.
#pragma once

#include <array>

#include "model/method.hpp"
#include "model/object_shape.hpp"
#include "model/perf_data.hpp"

namespace strider::model {

struct MethodCost {
  bool available = false;
  double send_side = 0;  // pack (+ copy out of the GPU)
  double transfer = 0;   // half a round trip of the packed bytes
  double recv_side = 0;  // (copy into the GPU +) unpack
  double total() const { return send_side + transfer + recv_side; }
  // One side's own pack or unpack.
  double own(bool receive) const { return receive ? recv_side : send_side; }
  // What one side minimizes when it chooses: its own pack or unpack plus the transfer.
  double side(bool receive) const { return own(receive) + transfer; }
};
using Prediction = std::array<MethodCost, kModelledMethods>;

// Pack or unpack time of `shape` into or out of `target` (contiguous shapes: a copy).
double pack_seconds(const PerfData& data, Method target, Direction direction,
                    const ObjectShape& shape);
// Half a round trip of `bytes` between pinned host buffers (device: GPU buffers; falls back to
// the host figure when the file has none).
double transfer_seconds(const PerfData& data, Placement placement, bool device, double bytes);

// Every method's cost for `shape` sent to, and unpacked by, a peer with the same shape.
// Device is available only on a CUDA-aware MPI.
Prediction predict(const PerfData& data, const ObjectShape& shape, Placement placement,
                   bool mpi_cuda_aware);

// A kernel's write of `bytes` contiguous bytes into a same-node peer's GPU memory (the
// same-node peer_write table); 0 when the file has none.
double peer_write_seconds(const PerfData& data, double bytes);
// A same-node offer (docs/same-node-p2p.md): the sender packs straight into the receiver's GPU
// memory over CUDA IPC, an empty notice travels, the receiver unpacks from its GPU memory. The
// pack into peer memory costs the slower of a local device pack and peer_write_seconds of the
// packed bytes (without a peer_write table: a local pack, exact for two ranks on one GPU and
// optimistic across NVLink); the notice costs a 1-byte same-node transfer.
MethodCost predict_offer(const PerfData& data, const ObjectShape& shape);
// Host time an offered message costs beyond what the model's tables hold: the receiver's
// publication (landing buffer, in-place description, board slot) and the sender's claim.
// Measured 2026-11-27 on two H100s with STRIDER_PROFILE (bench/halo, per-rank box 64): 4.1-4.7 us
// to publish, 2.7 us to claim. A lone message's launch and wait (10 us) hide it; a burst's, which
// one kernel shares, do not.
constexpr double kOfferProtocolSeconds = 7e-6;
// Whether an offer costs this side (receive: the receiver's unpack + notice, else the sender's
// pack + notice) no more than `method` (the side's choice) costs it. In a burst (`burst`: one of
// many messages whose packs and unpacks share one kernel each) neither side pays a launch and
// wait per message, and the offer pays kOfferProtocolSeconds.
bool offer_wins(const PerfData& data, const ObjectShape& shape, bool mpi_cuda_aware, bool receive,
                Method method, bool burst = false);

// The sender's (receive = false) or receiver's best method: least own side + transfer; ties go
// to the earlier of one-shot, staged, device.
Method choose(const Prediction& prediction, bool receive);
// The method with the least total.
Method fastest(const Prediction& prediction);

// Conservative figures for a machine that has not been measured: a PCIe-class bus, a launch of
// 10 us, a shared-memory MPI. They choose one-shot on a CUDA-unaware MPI and device on an aware
// one for every object, the rule Strider followed before it could measure.
PerfData built_in_defaults();

}  // namespace strider::model
