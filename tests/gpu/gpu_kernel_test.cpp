// The kernels alone, against the host engine: random strided shapes and block lists, every
// word size (through the bases' alignment), 32- and 64-bit indexing, pack and unpack; bytes
// outside the typemap must stay untouched.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "canon/canonicalize.hpp"
#include "engine/cpu/pack.hpp"
#include "engine/cuda/launch.hpp"
#include "gpu_available.hpp"
#include "gpu_memory.hpp"
#include "ir/constructors.hpp"
#include "ir/node.hpp"
#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider::engine::cuda {
namespace {

using testing::copy_bytes;
using testing::read_back;

std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// A random strided block with element sizes that make every word size appear.
canon::CanonicalForm random_strided(std::mt19937_64& rng) {
  const std::int64_t unit = std::int64_t{1} << pick(rng, 0, 4);
  canon::StridedBlock sb{unit * pick(rng, 0, 4), unit * pick(rng, 1, 40), {}};
  const int ndims = static_cast<int>(pick(rng, 0, 3));
  std::int64_t span = sb.block;
  for (int k = 0; k < ndims; ++k) {
    std::int64_t stride =
        pick(rng, 0, 3) == 0 ? -span - unit * pick(rng, 0, 3) : span + unit * pick(rng, 0, 8);
    sb.dims.push_back({pick(rng, 1, 9), stride});
    span = std::abs(stride) * sb.dims.back().count + span;
  }
  canon::CanonicalForm form;
  form.pieces.push_back(canon::normalized(sb));
  form.size = form.pieces.front().packed_bytes();
  return form;
}

struct Region {
  std::int64_t lo, hi;
};

Region region(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count) {
  // Bounds of every byte the form touches, by brute force over the CPU engine's offsets.
  std::int64_t lo = 0, hi = 0;
  for (const auto& sb : form.pieces) {
    std::int64_t a = sb.offset, b = sb.offset + sb.block;
    for (const auto& d : sb.dims) {
      const std::int64_t reach = (d.count - 1) * d.stride;
      (reach < 0 ? a : b) += reach;
    }
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  }
  for (const auto& d : form.repeat) {
    const std::int64_t reach = (d.count - 1) * d.stride;
    (reach < 0 ? lo : hi) += reach;
  }
  const std::int64_t last = (count - 1) * extent;
  return {lo + std::min<std::int64_t>(0, last), hi + std::max<std::int64_t>(0, last)};
}

class Kernels : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&user_, kBytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&packed_, kBytes), cudaSuccess);
  }
  void TearDown() override {
    cudaFree(user_);
    cudaFree(packed_);
    cudaStreamDestroy(stream_);
  }
  static constexpr std::size_t kBytes = 16u << 20;
  cudaStream_t stream_{};
  std::byte* user_ = nullptr;
  std::byte* packed_ = nullptr;
};

TEST_F(Kernels, StridedMatchesTheHostEngine) {
  std::mt19937_64 rng(77);
  int by_word[17] = {};
  for (int t = 0; t < 3000; ++t) {
    const auto form = random_strided(rng);
    const std::int64_t count = pick(rng, 1, 3);
    const std::int64_t extent = form.pieces.front().packed_bytes() + pick(rng, 0, 4) * 16;
    const Region r = region(form, extent, count);
    const std::int64_t base_shift = pick(rng, 0, 3) == 0 ? pick(rng, 1, 15) : 0;
    std::byte* origin = user_ + 4096 + base_shift - r.lo;
    const std::size_t span = static_cast<std::size_t>(r.hi - r.lo);
    ASSERT_LT(span + 8192, kBytes);
    std::vector<std::byte> host_user(span + 2 * 4096);
    for (auto& b : host_user) b = static_cast<std::byte>(rng());
    copy_bytes(user_, host_user.data(), host_user.size());
    std::byte* host_origin = host_user.data() + 4096 + base_shift - r.lo;
    const auto packed_bytes = static_cast<std::size_t>(form.size * count);

    auto shape = strided_shape(form, extent, count, reinterpret_cast<std::uintptr_t>(origin),
                               reinterpret_cast<std::uintptr_t>(packed_));
    ASSERT_TRUE(shape.has_value());
    ++by_word[shape->word];
    for (bool wide : {false, true}) {
      if (!wide && !fits_32bit(*shape)) continue;
      ASSERT_EQ(cudaMemset(packed_, 0xab, packed_bytes + 64), cudaSuccess);
      ASSERT_EQ(launch_strided(*shape, wide, origin, packed_, Direction::Pack, stream_, 132),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      std::vector<std::byte> want(packed_bytes + 64, std::byte{0xab});
      cpu::pack(form, extent, count, host_origin, want.data());
      std::vector<std::byte> got(packed_bytes + 64);
      copy_bytes(got.data(), packed_, got.size());
      ASSERT_EQ(got, want) << canon::to_string(form) << " count " << count << " wide " << wide;

      // Unpack the packed bytes back over a fresh random user buffer.
      std::vector<std::byte> fresh(host_user.size());
      for (auto& b : fresh) b = static_cast<std::byte>(rng());
      copy_bytes(user_, fresh.data(), fresh.size());
      ASSERT_EQ(launch_strided(*shape, wide, origin, packed_, Direction::Unpack, stream_, 132),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      cpu::unpack(form, extent, count, want.data(), fresh.data() + 4096 + base_shift - r.lo);
      std::vector<std::byte> back(fresh.size());
      copy_bytes(back.data(), user_, back.size());
      ASSERT_EQ(back, fresh) << canon::to_string(form) << " count " << count << " wide " << wide;
    }
  }
  for (int w : {1, 2, 4, 8, 16}) {
    std::printf("word %2d bytes: %d shapes\n", w, by_word[w]);
    EXPECT_GT(by_word[w], 0) << "no shape with word size " << w;
  }
}

// Block lists from random IR trees (the unit tests' generator), against the host engine.
TEST_F(Kernels, BlockListsMatchTheHostEngine) {
  std::mt19937_64 rng(78);
  int lists = 0;
  for (int t = 0; t < 6000 && lists < 1500; ++t) {
    ir::Node tree = strider::testing::random_tree(rng, 2 + t % 4);
    if (t == 0) {
      // hindexed_block(3,[1596,0],hvector(4,2,-101,indexed_block(3,[0],
      //   darray(1,0,C,[2],[none],[default],[1],short_int)))), as the decoder builds it.
      using ir::Node;
      const Node short_int = Node::list({Node::dense(0, 2), Node::dense(4, 4)});
      const std::int64_t g[] = {2}, d[] = {ir::kDefaultDistributionArg}, ps[] = {1};
      const ir::Distribution none[] = {ir::Distribution::None};
      const Node da = ir::darray(1, 0, ir::Order::C, g, none, d, ps, {short_int, 8});
      const std::int64_t zero[] = {0};
      const Node ib = ir::indexed_block(3, zero, {da, 16});
      const Node hv = ir::hvector(4, 2, -101, {ib, 48});
      const std::int64_t disps[] = {1596, 0};
      tree = ir::hindexed_block(3, disps, {hv, 399});
    }
    const auto form = canon::canonical_form(tree);
    ASSERT_TRUE(form.has_value());
    if (form->size == 0 || form->strided()) continue;
    ++lists;
    const ir::Span sp = ir::true_span(tree);
    std::int64_t extent = std::max<std::int64_t>(1, sp.hi - sp.lo) + pick(rng, 0, 5);
    std::int64_t count = pick(rng, 1, 3);
    if (t == 0) {
      extent = 2793;
      count = 4;
    }
    const Region r = region(*form, extent, count);
    const std::int64_t shift = pick(rng, 0, 1) ? 0 : pick(rng, 1, 15);
    std::byte* origin = user_ + 4096 + shift - r.lo;
    std::vector<std::byte> host_user(static_cast<std::size_t>(r.hi - r.lo) + 8192);
    for (auto& b : host_user) b = static_cast<std::byte>(rng());
    copy_bytes(user_, host_user.data(), host_user.size());
    std::byte* host_origin = host_user.data() + 4096 + shift - r.lo;
    const auto bytes = static_cast<std::size_t>(form->size * count);
    auto shape = list_shape(*form, extent, count, reinterpret_cast<std::uintptr_t>(origin),
                            reinterpret_cast<std::uintptr_t>(packed_));
    ASSERT_TRUE(shape.has_value());
    std::vector<std::int64_t> touched;
    for (std::int64_t e = 0; e < count; ++e) {
      for (std::int64_t off : ir::byte_offsets(tree)) touched.push_back(off + e * extent);
    }
    std::sort(touched.begin(), touched.end());
    const bool overlapping = std::adjacent_find(touched.begin(), touched.end()) != touched.end();
    for (int variant = 0; variant < 4; ++variant) {
      const bool wide = variant & 1;
      const ListKernel kind = variant & 2 ? ListKernel::WarpPerPiece : ListKernel::Search;
      const std::vector<std::byte> table_host = wide ? list_table<Divmod64>(*form, shape->word)
                                                     : list_table<FastDivmod32>(*form, shape->word);
      void* table = nullptr;
      ASSERT_EQ(cudaMalloc(&table, table_host.size()), cudaSuccess);
      copy_bytes(table, table_host.data(), table_host.size());
      ASSERT_EQ(cudaMemset(packed_, 0xab, bytes + 64), cudaSuccess);
      ASSERT_EQ(launch_list(*shape, table, static_cast<int>(form->pieces.size()), wide, origin,
                            packed_, Direction::Pack, stream_, 132, kind),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      std::vector<std::byte> want(bytes + 64, std::byte{0xab});
      cpu::pack(*form, extent, count, host_origin, want.data());
      std::vector<std::byte> got(bytes + 64);
      copy_bytes(got.data(), packed_, got.size());
      std::size_t first_bad = 0;
      while (first_bad < got.size() && got[first_bad] == want[first_bad]) ++first_bad;
      ASSERT_EQ(first_bad, got.size())
          << canon::to_string(*form) << " count " << count << " extent " << extent << " word "
          << shape->word << " wide " << wide << " warp per piece " << (variant >> 1)
          << " first wrong packed byte " << first_bad;

      // Unpack the packed bytes over a fresh random user buffer, where the typemap touches no
      // byte twice (unpacking into an overlapping type is erroneous in MPI).
      if (overlapping) {
        cudaFree(table);
        continue;
      }
      std::vector<std::byte> fresh(host_user.size());
      for (auto& b : fresh) b = static_cast<std::byte>(rng());
      copy_bytes(user_, fresh.data(), fresh.size());
      ASSERT_EQ(launch_list(*shape, table, static_cast<int>(form->pieces.size()), wide, origin,
                            packed_, Direction::Unpack, stream_, 132, kind),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      cpu::unpack(*form, extent, count, want.data(), fresh.data() + 4096 + shift - r.lo);
      std::vector<std::byte> back(fresh.size());
      copy_bytes(back.data(), user_, back.size());
      ASSERT_EQ(back, fresh) << canon::to_string(*form) << " unpack, warp per piece "
                             << (variant >> 1);
      cudaFree(table);
    }
  }
  std::printf("block lists checked: %d\n", lists);
  EXPECT_GT(lists, 500);
}

}  // namespace
}  // namespace strider::engine::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!strider::testing::gpu_available()) return strider::testing::kSkipExitCode;
  return RUN_ALL_TESTS();
}
