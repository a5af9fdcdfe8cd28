#include "model/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "model/grid.hpp"

namespace strider::model {
namespace {

// A 1D table, held at its last measured rate beyond its largest size (so doubling an object
// past the measured range doubles its time; every method scales alike, so choices are those of
// the clamped point).
double scaled_at(const Table1D& t, double x) {
  if (x > t.x.back()) return t.y.back() * (x / t.x.back());
  return t.at(x);
}

double table_at(const PackTable& p, double block, double bytes) {
  const double largest = p.seconds.columns.back();
  const double b = std::max(1.0, std::min(block, bytes / 2));
  if (bytes > largest) return p.seconds.at(std::min(b, largest / 2), largest) * (bytes / largest);
  return p.seconds.at(b, bytes);
}

}  // namespace

double pack_seconds(const PerfData& data, Method target, Direction direction,
                    const ObjectShape& shape) {
  const int dims = std::clamp(shape.dims, 2, 3);
  const double block = static_cast<double>(std::max<std::int64_t>(1, shape.block));
  const double bytes = static_cast<double>(std::max<std::int64_t>(1, shape.bytes));
  const double ratio = static_cast<double>(std::max(shape.stride, shape.block)) / block;
  // The family's tables of this shape's kind (block lists: the irregular ones if any) and dims
  // (any dims if none), and of them the two whose stride ratios bracket the object's (or the
  // nearest one): no allocation on this path.
  bool irregular_found = false;
  for (const PackTable& p : data.pack) {
    irregular_found |= p.target == target && p.direction == direction && p.irregular;
  }
  const bool irregular = shape.irregular && irregular_found;
  auto in_family = [&](const PackTable& p) {
    return p.target == target && p.direction == direction && p.irregular == irregular;
  };
  bool dims_found = false;
  for (const PackTable& p : data.pack) dims_found |= in_family(p) && p.dims == dims;
  const PackTable* below = nullptr;  // largest ratio <= the object's
  const PackTable* above = nullptr;  // smallest ratio > the object's
  for (const PackTable& p : data.pack) {
    if (!in_family(p) || (dims_found && p.dims != dims)) continue;
    if (p.stride_ratio <= ratio) {
      if (!below || p.stride_ratio > below->stride_ratio) below = &p;
    } else if (!above || p.stride_ratio < above->stride_ratio) {
      above = &p;
    }
  }
  if (!below && !above) return data.launch_sync;  // validate() rules this out for loaded files
  if (!below || !above) return table_at(below ? *below : *above, block, bytes);
  const double weight = (std::log(ratio) - std::log(below->stride_ratio)) /
                        (std::log(above->stride_ratio) - std::log(below->stride_ratio));
  return log_mix(table_at(*below, block, bytes), table_at(*above, block, bytes), weight);
}

double transfer_seconds(const PerfData& data, Placement placement, bool device, double bytes) {
  auto it = data.transfers.find(placement);
  if (it == data.transfers.end()) it = data.transfers.begin();  // the one placement measured
  const Table1D& table = device && it->second.device ? *it->second.device : it->second.host;
  return scaled_at(table, std::max(1.0, bytes));
}

Prediction predict(const PerfData& data, const ObjectShape& shape, Placement placement,
                   bool mpi_cuda_aware) {
  Prediction p;
  const double bytes = static_cast<double>(shape.bytes);
  const double host_transfer = transfer_seconds(data, placement, false, bytes);
  const double d2h = scaled_at(data.d2h, bytes);
  const double h2d = scaled_at(data.h2d, bytes);
  auto& oneshot = p[static_cast<int>(Method::OneShot)];
  auto& staged = p[static_cast<int>(Method::Staged)];
  auto& device = p[static_cast<int>(Method::Device)];
  oneshot.available = staged.available = true;
  oneshot.transfer = staged.transfer = host_transfer;
  device.available = mpi_cuda_aware;
  device.transfer = transfer_seconds(data, placement, true, bytes);
  if (shape.dims <= 1) {
    // Contiguous: one copy out of or into the GPU for either host method, nothing for device.
    oneshot.send_side = staged.send_side = d2h;
    oneshot.recv_side = staged.recv_side = h2d;
    return p;
  }
  oneshot.send_side = pack_seconds(data, Method::OneShot, Direction::Pack, shape);
  oneshot.recv_side = pack_seconds(data, Method::OneShot, Direction::Unpack, shape);
  staged.send_side = pack_seconds(data, Method::Staged, Direction::Pack, shape);
  staged.recv_side = pack_seconds(data, Method::Staged, Direction::Unpack, shape);
  device.send_side = pack_seconds(data, Method::Device, Direction::Pack, shape);
  device.recv_side = pack_seconds(data, Method::Device, Direction::Unpack, shape);
  return p;
}

double peer_write_seconds(const PerfData& data, double bytes) {
  const auto it = data.transfers.find(Placement::SameNode);
  if (it == data.transfers.end() || !it->second.peer_write) return 0;
  return scaled_at(*it->second.peer_write, std::max(1.0, bytes));
}

MethodCost predict_offer(const PerfData& data, const ObjectShape& shape) {
  MethodCost offer;
  offer.available = true;
  // The pack kernel reads the object locally and writes the packed bytes into the peer: bound by
  // whichever is slower, a local pack or the same bytes written into the peer's memory.
  offer.send_side = std::max(
      pack_seconds(data, Method::Device, Direction::Pack, shape),
      peer_write_seconds(data, static_cast<double>(std::max<std::int64_t>(1, shape.bytes))));
  offer.transfer = transfer_seconds(data, Placement::SameNode, false, 1);
  offer.recv_side = pack_seconds(data, Method::Device, Direction::Unpack, shape);
  return offer;
}

bool offer_wins(const PerfData& data, const ObjectShape& shape, bool mpi_cuda_aware, bool receive,
                Method method, bool burst) {
  const Prediction p = predict(data, shape, Placement::SameNode, mpi_cuda_aware);
  const int m = static_cast<int>(method);
  if (m < 0 || m >= kModelledMethods || !p[m].available) return true;
  const MethodCost offer = predict_offer(data, shape);
  if (!burst) return offer.side(receive) <= p[m].side(receive);
  const auto shared_launch = [&](const MethodCost& c) {
    return std::max(0.0, c.own(receive) - data.launch_sync) + c.transfer;
  };
  return shared_launch(offer) + kOfferProtocolSeconds <= shared_launch(p[m]);
}

namespace {

// The available method with the least `cost`, ties to the earliest; one-shot if none is.
template <class Cost>
Method least(const Prediction& prediction, Cost cost) {
  int best = -1;
  for (int i = 0; i < kModelledMethods; ++i) {
    if (!prediction[i].available) continue;
    if (best < 0 || cost(prediction[i]) < cost(prediction[best])) best = i;
  }
  return static_cast<Method>(std::max(best, 0));
}

}  // namespace

Method choose(const Prediction& prediction, bool receive) {
  return least(prediction, [receive](const MethodCost& c) { return c.side(receive); });
}

Method fastest(const Prediction& prediction) {
  return least(prediction, [](const MethodCost& c) { return c.total(); });
}

PerfData built_in_defaults() {
  PerfData d;
  d.built_in = true;
  d.tool = "built-in defaults";
  d.launch_sync = 10e-6;
  const double bus = 50e9;  // bytes/s of a PCIe-class link
  // Device buffers through a CUDA-aware MPI: a per-message cost well above the host path's
  // (measured 2026-11-27 on two H100s, Open MPI 4.1.4 --with-cuda: 11 us half round trip for
  // 1 KiB alone, but 60 us a message in the halo's bursts of 208 per rank, where its smcuda
  // path serializes them), then the GPUs' link (NVLink on one node) or, between nodes, no
  // better than the host path. So without a measurement the device method wins only where the
  // bus would cost more: on one node, strided objects from about 400 KiB.
  Table1D same_node_device, remote_device;
  for (double s : grid::transfer_bytes()) {
    d.d2h.x.push_back(s);
    d.d2h.y.push_back(d.launch_sync + s / bus);
    d.transfers[Placement::SameNode].host.x.push_back(s);
    d.transfers[Placement::SameNode].host.y.push_back(1.5e-6 + s / 8e9);
    d.transfers[Placement::Remote].host.x.push_back(s);
    d.transfers[Placement::Remote].host.y.push_back(3e-6 + s / 10e9);
    same_node_device.x.push_back(s);
    same_node_device.y.push_back(60e-6 + s / 150e9);
    remote_device.x.push_back(s);
    remote_device.y.push_back(10e-6 + s / 10e9);
  }
  d.transfers[Placement::SameNode].device = same_node_device;
  d.transfers[Placement::Remote].device = remote_device;
  d.h2d = d.d2h;
  // Device-memory pack: bytes read and written at 3 TB/s, or the 128 B lines touched at
  // 50 G lines/s, whichever is slower. Mapped: no faster than the bus. Staged: the kernel and
  // then the copy over the bus. Staged exceeds one-shot at every grid point, so at every
  // interpolated point too (log-space interpolation keeps order): the defaults never choose it.
  auto device_pack = [&](double block, double bytes, double ratio) {
    const double blocks = bytes / block;
    const double lines =
        block * ratio >= 128 ? blocks * std::max(1.0, block / 128) : bytes * ratio / 128;
    return std::max(2 * bytes / 3e12, lines / 50e9);
  };
  for (Method target : {Method::Device, Method::OneShot, Method::Staged}) {
    for (Direction direction : {Direction::Pack, Direction::Unpack}) {
      for (int dims : grid::shape_dims()) {
        for (double ratio : grid::stride_ratios()) {
          PackTable t{target, direction, dims, ratio, false, {}};
          t.seconds.rows = grid::block_bytes();
          t.seconds.columns = grid::object_bytes();
          for (double block : t.seconds.rows) {
            for (double bytes : t.seconds.columns) {
              const double b = std::max(1.0, std::min(block, bytes / 2));
              const double kernel = device_pack(b, bytes, ratio);
              const double moved = target == Method::Device    ? kernel
                                   : target == Method::OneShot ? std::max(kernel, bytes / bus)
                                                               : kernel + bytes / bus;
              t.seconds.values.push_back(d.launch_sync + moved);
            }
          }
          d.pack.push_back(std::move(t));
        }
      }
    }
  }
  return d;
}

}  // namespace strider::model
