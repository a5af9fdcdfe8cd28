// The LogGOPS view of one transfer method (after Bacon et al., EuroMPI'23; LogGP with per-byte
// overheads): fitted from per-size measurements, for users reasoning about communication.
//   T(s) = o_s + O_s*s + L + G*(s - 1) + o_r + O_r*s    (half a round trip of s bytes)
// Pure functions.
#pragma once

#include <string>
#include <vector>

namespace strider::model {

// What strider-measure times per message size, in seconds.
struct LogGopsSample {
  double bytes = 0;
  double send_overhead = 0;  // the sender busy: pack + MPI_Isend returning (receiver ready)
  double recv_overhead = 0;  // the receiver busy: MPI_Recv of a message already sent + unpack
  double stream_gap = 0;     // per message of a long back-to-back stream
  double pingpong = 0;       // half a round trip
};

struct LogGops {
  double o_s = 0, O_s = 0;             // per-message and per-byte send overhead
  double o_r = 0, O_r = 0;             // per-message and per-byte receive overhead
  double L = 0;                        // latency
  double g = 0, G = 0;                 // per-message and per-byte gap
  double predict(double bytes) const;  // T(s) above
};

// y = a + b*x minimizing the relative error (weights 1/y^2), so small and large sizes count
// alike. Requires at least two distinct x; b and a are clamped at 0 (times never shrink).
struct LinearFit {
  double a = 0;
  double b = 0;
};
LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& y);

// Fits by fit_relative: o_s + O_s*s to the send overheads, o_r + O_r*s to the receive
// overheads, g (+ a per-byte term) to the stream gaps, and L + G*(s - 1) to what the ping-pong
// leaves once both overheads are taken off. So G is the per-byte time the wire adds beyond
// what the two CPUs spend: on shared memory, where the receiver's copy is the transfer, it is
// near 0 and O_r carries the bandwidth.
LogGops fit_loggops(const std::vector<LogGopsSample>& samples);

// One line per sample: size, measured and predicted ping-pong, relative error; then the
// parameters. `name` heads the table.
std::string describe(const std::string& name, const LogGops& fit,
                     const std::vector<LogGopsSample>& samples);

}  // namespace strider::model
