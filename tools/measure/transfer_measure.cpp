#include "measure/transfer_measure.hpp"

#include <mpi.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "measure/gpu_object.hpp"
#include "model/grid.hpp"

namespace strider::measure {
namespace {

enum Tag { kData = 1, kReady = 2, kDone = 3, kResult = 4 };

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

void send(const void* p, std::size_t bytes, int tag) {
  check_mpi(MPI_Send(p, static_cast<int>(bytes), MPI_BYTE, 1 - rank(), tag, MPI_COMM_WORLD),
            "MPI_Send");
}

void recv(void* p, std::size_t bytes, int tag) {
  check_mpi(MPI_Recv(p, static_cast<int>(bytes), MPI_BYTE, 1 - rank(), tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
}

void signal(int tag) { send(nullptr, 0, tag); }
void await(int tag) { recv(nullptr, 0, tag); }

// Rank 0's median of its `timed` results; the other rank's figures reach rank 0 by message.
double median_on_rank0(std::vector<double> samples, bool measured_here) {
  double m = median(std::move(samples));
  if (rank() == 0 && !measured_here) {
    check_mpi(MPI_Recv(&m, 1, MPI_DOUBLE, 1, kResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
  } else if (rank() == 1 && measured_here) {
    check_mpi(MPI_Send(&m, 1, MPI_DOUBLE, 0, kResult, MPI_COMM_WORLD), "MPI_Send");
  }
  return m;
}

// One method's message: a GPU object (absent for a contiguous buffer) and its wire buffer.
struct Endpoint {
  std::optional<model::Method> method;  // none: `wire` is the message, nothing packed
  std::unique_ptr<GpuObject> object;
  const Allocation* wire = nullptr;
  std::size_t bytes = 0;

  void send_message(int tag) const {
    if (object) pack(*object, wire_view(*method, *wire));
    send(wire->data(), bytes, tag);
  }
  void receive_message(int tag) const {
    recv(wire->data(), bytes, tag);
    if (object) unpack(*object, wire_view(*method, *wire));
  }
};

// Half round trips of `e`'s message after `warmup` untimed ones: rank 0 sends first, and its
// times are the ones reported.
std::vector<double> half_round_trips(const Endpoint& e, int warmup, int reps) {
  const bool zero = rank() == 0;
  std::vector<double> times;
  for (int i = 0; i < warmup + reps; ++i) {
    const double t = seconds_of([&] {
      if (zero) {
        e.send_message(kData);
        e.receive_message(kData);
      } else {
        e.receive_message(kData);
        e.send_message(kData);
      }
    });
    if (i >= warmup) times.push_back(t / 2);
  }
  return times;
}

model::LogGopsSample sample(const Endpoint& e, int reps) {
  model::LogGopsSample s;
  s.bytes = static_cast<double>(e.bytes);
  const bool zero = rank() == 0;
  constexpr int kWarmup = 2;
  std::vector<double> times = half_round_trips(e, kWarmup, reps);
  s.pingpong = median_on_rank0(times, zero);
  // Send overhead: what keeps rank 0 busy before it could compute again: the pack and posting
  // the send (once rank 1's receive is posted); the wait for its completion is not counted.
  times.clear();
  for (int i = 0; i < kWarmup + reps; ++i) {
    if (zero) {
      await(kReady);
      MPI_Request r;
      const double t = seconds_of([&] {
        if (e.object) pack(*e.object, wire_view(*e.method, *e.wire));
        check_mpi(MPI_Isend(e.wire->data(), static_cast<int>(e.bytes), MPI_BYTE, 1, kData,
                            MPI_COMM_WORLD, &r),
                  "MPI_Isend");
      });
      check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      if (i >= kWarmup) times.push_back(t);
      await(kDone);
    } else {
      MPI_Request r;
      check_mpi(MPI_Irecv(e.wire->data(), static_cast<int>(e.bytes), MPI_BYTE, 0, kData,
                          MPI_COMM_WORLD, &r),
                "MPI_Irecv");
      signal(kReady);
      check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      if (e.object) unpack(*e.object, wire_view(*e.method, *e.wire));
      signal(kDone);
    }
  }
  s.send_overhead = median_on_rank0(times, zero);
  // Receive overhead: rank 1 receives (and unpacks) a message already sent.
  times.clear();
  for (int i = 0; i < kWarmup + reps; ++i) {
    if (zero) {
      if (e.object) pack(*e.object, wire_view(*e.method, *e.wire));
      MPI_Request r;
      check_mpi(MPI_Isend(e.wire->data(), static_cast<int>(e.bytes), MPI_BYTE, 1, kData,
                          MPI_COMM_WORLD, &r),
                "MPI_Isend");
      signal(kReady);
      check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      await(kDone);
    } else {
      await(kReady);
      const double t = seconds_of([&] { e.receive_message(kData); });
      if (i >= kWarmup) times.push_back(t);
      signal(kDone);
    }
  }
  s.recv_overhead = median_on_rank0(times, !zero);
  // Gap: a stream of messages, timed on rank 0 until rank 1 has taken the last.
  const int stream = std::clamp(reps, 8, 64);
  times.clear();
  for (int i = 0; i < 1 + 3; ++i) {
    const double t = seconds_of([&] {
      for (int k = 0; k < stream; ++k) {
        if (zero) {
          e.send_message(kData);
        } else {
          e.receive_message(kData);
        }
      }
      if (zero) {
        await(kDone);
      } else {
        signal(kDone);
      }
    });
    if (i >= 1) times.push_back(t / stream);
  }
  s.stream_gap = median_on_rank0(times, zero);
  return s;
}

}  // namespace

model::Placement detect_placement() {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return size == 2 ? model::Placement::SameNode : model::Placement::Remote;
}

double pingpong_weight() {
  double w = 0;
  for (double s : model::grid::transfer_bytes()) w += weight_of(s);
  return w;
}

model::Table1D measure_pingpong(bool device, const RepeatLimits& limits, const Advance& advance) {
  const auto sizes = model::grid::transfer_bytes();
  const auto largest = static_cast<std::size_t>(sizes.back());
  Allocation buffer = device ? Allocation::device(largest) : Allocation::pinned(largest);
  if (device) fill_random(buffer.data(), largest, 4);
  model::Table1D table;
  for (double s : sizes) {
    Endpoint e;
    e.wire = &buffer;
    e.bytes = static_cast<std::size_t>(s);
    table.x.push_back(s);
    table.y.push_back(median(half_round_trips(e, limits.warmup, exchange_reps(s, limits))));
    advance(weight_of(s), device ? "device ping-pong" : "host ping-pong");
  }
  return table;
}

double loggops_weight(bool with_device) {
  double w = 0;
  for (double s : model::grid::object_bytes()) w += 4 * weight_of(s);
  return w * (with_device ? 4 : 3);
}

std::map<std::string, std::vector<model::LogGopsSample>> measure_loggops(bool with_device,
                                                                         std::int64_t block,
                                                                         const RepeatLimits& limits,
                                                                         const Advance& advance) {
  const auto sizes = model::grid::object_bytes();
  const auto largest = static_cast<std::size_t>(sizes.back());
  Allocation pinned = Allocation::pinned(largest);
  std::optional<Allocation> device_wire;
  if (with_device) device_wire = Allocation::device(largest);
  Allocation user = Allocation::device(2 * largest);
  fill_random(user.data(), user.size(), 5);

  std::vector<std::pair<std::string, std::optional<model::Method>>> methods = {
      {"host", std::nullopt},
      {"oneshot", model::Method::OneShot},
      {"staged", model::Method::Staged}};
  if (with_device) methods.push_back({"device", model::Method::Device});
  std::map<std::string, std::vector<model::LogGopsSample>> out;
  for (const auto& [name, method] : methods) {
    for (double s : sizes) {
      Endpoint e;
      e.method = method;
      e.bytes = static_cast<std::size_t>(s);
      e.wire = method == model::Method::Device ? &*device_wire : &pinned;
      if (method) {
        // Whole blocks only: the sample's size is what the object packs.
        const std::int64_t b = std::max<std::int64_t>(
            1, std::min<std::int64_t>(block, static_cast<std::int64_t>(s) / 2));
        e.bytes = static_cast<std::size_t>(static_cast<std::int64_t>(s) / b * b);
        e.object = std::make_unique<GpuObject>(
            ObjectSpec{b, static_cast<std::int64_t>(e.bytes), 2, 2}, user.data());
      }
      out[name].push_back(sample(e, exchange_reps(s, limits)));
      advance(4 * weight_of(s), "LogGOPS " + name);
    }
  }
  return out;
}

}  // namespace strider::measure
