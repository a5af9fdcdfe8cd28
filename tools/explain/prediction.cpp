#include "explain/prediction.hpp"

#include <cstdio>

#include "model/cost_model.hpp"

namespace strider::explain {

std::string describe_prediction(const model::LoadedModel& loaded, const plan::Plan& plan,
                                long long count, model::Placement peer, bool aware) {
  std::string out;
  char line[256];
  out += "performance model: " + loaded.source;
  if (!loaded.warning.empty()) out += " (" + loaded.warning + ")";
  if (!loaded.data.built_in) {
    out += " (" + loaded.data.machine.gpu + ", measured " + loaded.data.created + ")";
  }
  out += "\n";
  const model::ObjectShape shape = model::object_shape(plan.shape, count);
  if (shape.dims <= 1) {
    std::snprintf(line, sizeof line, "object: %lld x type = %lld packed bytes, contiguous\n", count,
                  static_cast<long long>(shape.bytes));
  } else {
    std::snprintf(line, sizeof line,
                  "object: %lld x type = %lld packed bytes, %s%lld B blocks every %lld B, %dD\n",
                  count, static_cast<long long>(shape.bytes), shape.irregular ? "about " : "",
                  static_cast<long long>(shape.block), static_cast<long long>(shape.stride),
                  shape.dims);
  }
  out += line;
  out += std::string("peer: ") + model::to_string(peer) +
         "; MPI CUDA-aware: " + (aware ? "yes" : "no") + "\n";
  const model::Prediction p = model::predict(loaded.data, shape, peer, aware);
  const model::Method send = model::choose(p, false);
  const model::Method recv = model::choose(p, true);
  std::snprintf(line, sizeof line, "%-8s %13s %13s %13s %13s\n", "method", "send side us",
                "transfer us", "recv side us", "total us");
  out += line;
  for (int m = 0; m < model::kModelledMethods; ++m) {
    const auto t = static_cast<model::Method>(m);
    if (!p[m].available) {
      std::snprintf(line, sizeof line, "%-8s (needs a CUDA-aware MPI)\n", model::to_string(t));
    } else {
      std::string mark;
      if (t == send) mark += " <- sender";
      if (t == recv) mark += " <- receiver";
      std::snprintf(line, sizeof line, "%-8s %13.2f %13.2f %13.2f %13.2f%s\n", model::to_string(t),
                    p[m].send_side * 1e6, p[m].transfer * 1e6, p[m].recv_side * 1e6,
                    p[m].total() * 1e6, mark.c_str());
    }
    out += line;
  }
  out += std::string("auto: the sender uses ") + model::to_string(send) +
         ", a receiver of the same object " + model::to_string(recv) +
         " (each side picks the least of its own side plus the transfer)\n";
  if (peer == model::Placement::SameNode) {
    // Same-node offers (docs/same-node-p2p.md): used when the receive is posted first.
    const model::MethodCost offer = model::predict_offer(loaded.data, shape);
    std::snprintf(line, sizeof line, "%-8s %13.2f %13.2f %13.2f %13.2f\n", "offer",
                  offer.send_side * 1e6, offer.transfer * 1e6, offer.recv_side * 1e6,
                  offer.total() * 1e6);
    out += line;
    const bool receiver = model::offer_wins(loaded.data, shape, aware, true, recv);
    const bool sender = model::offer_wins(loaded.data, shape, aware, false, send);
    out += std::string("same-node offer (GPU to GPU over CUDA IPC, receive posted first): ") +
           (receiver ? "the receiver offers" : "the receiver does not offer") + ", " +
           (sender ? "the sender takes it" : "the sender does not take it") +
           (receiver && sender ? "" : " (its side costs more than its method)") + "\n";
    const bool measured = model::peer_write_seconds(loaded.data, 1) > 0;
    out += measured ? "the offer's pack into the peer: the slower of a local pack and the measured "
                      "writes into peer memory\n"
                    : "the offer's pack into the peer: costed as a local pack (the perf file has "
                      "no peer writes; strider-measure on one node measures them)\n";
  }
  return out;
}

}  // namespace strider::explain
