// The sizes strider-measure samples (the built-in defaults use the same ones): log-spaced so that
// interpolation between neighbours stays within a factor of 2 (blocks) or 4 (objects).
#pragma once

#include <vector>

namespace strider::model::grid {

std::vector<double> block_bytes();     // 1, 2, 4, ..., 4096
std::vector<double> object_bytes();    // 64, 256, 1 Ki, ..., 64 Mi
std::vector<double> transfer_bytes();  // 1, 2, 4, ..., 64 Mi
std::vector<double> stride_ratios();   // innermost stride / block: 2 and 8
std::vector<int> shape_dims();         // 2D and 3D objects

// For a 3D object of `blocks` blocks: the count of blocks along the inner stride (the rest go
// along the outer one, whose stride is twice inner count x inner stride, so the two never merge).
long inner_count_3d(long blocks);

}  // namespace strider::model::grid
