#include "model/grid.hpp"

namespace strider::model::grid {
namespace {

std::vector<double> powers(double first, double last, double factor) {
  std::vector<double> out;
  for (double v = first; v <= last; v *= factor) out.push_back(v);
  return out;
}

}  // namespace

std::vector<double> block_bytes() { return powers(1, 4096, 2); }
std::vector<double> object_bytes() { return powers(64, 64.0 * 1024 * 1024, 4); }
std::vector<double> transfer_bytes() { return powers(1, 64.0 * 1024 * 1024, 2); }
std::vector<double> stride_ratios() { return {2, 8}; }
std::vector<int> shape_dims() { return {2, 3}; }

long inner_count_3d(long blocks) {
  // A square-ish face: the largest power of two that divides `blocks` and is <= sqrt(blocks).
  long inner = 1;
  while (inner * 2 * inner * 2 <= blocks && blocks % (inner * 2) == 0) inner *= 2;
  return inner;
}

}  // namespace strider::model::grid
