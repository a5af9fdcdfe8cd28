// The exports of application memory (ipc/memory_export.hpp) tell a live allocation from one
// freed and made anew: a cached description of an object in place (transfer/direct_object.hpp)
// is used again only while ipc::still_exported holds for each allocation it names. Checked on
// allocations of random sizes, freed and allocated again until the allocator hands the same
// address back (when it does; either way a freed allocation's export must no longer hold).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gpu_available.hpp"
#include "ipc/memory_export.hpp"

namespace {

using strider::ipc::export_memory;
using strider::ipc::MemoryExport;
using strider::ipc::still_exported;

TEST(MemoryExport, AFreedAllocationsExportNoLongerHoldsEvenAtTheSameAddress) {
  std::mt19937 rng(20261127);
  int same_address = 0;
  for (int round = 0; round < 16; ++round) {
    const std::size_t bytes = std::size_t{1} << (16 + rng() % 8);
    void* first = nullptr;
    ASSERT_EQ(cudaMalloc(&first, bytes), cudaSuccess);
    MemoryExport exported;
    std::string why;
    // An address inside the allocation names the whole of it.
    const auto* inside = static_cast<const std::byte*>(first) + bytes / 2;
    ASSERT_TRUE(export_memory(inside, 0, exported, why)) << why;
    EXPECT_EQ(exported.base, first);
    EXPECT_EQ(exported.bytes, bytes);
    EXPECT_NE(exported.buffer_id, 0u);
    EXPECT_TRUE(still_exported(exported));
    ASSERT_EQ(cudaFree(first), cudaSuccess);
    EXPECT_FALSE(still_exported(exported)) << "round " << round << ": freed";
    // Allocated again (same size, then another) until the address comes back, at most 8 tries.
    std::vector<void*> held;
    for (int attempt = 0; attempt < 8; ++attempt) {
      void* again = nullptr;
      const std::size_t size = attempt % 2 == 0 ? bytes : bytes * 2;
      ASSERT_EQ(cudaMalloc(&again, size), cudaSuccess);
      held.push_back(again);
      if (again != first) continue;
      ++same_address;
      EXPECT_FALSE(still_exported(exported)) << "round " << round << ": a new allocation";
      MemoryExport fresh;
      ASSERT_TRUE(export_memory(again, 0, fresh, why)) << why;
      EXPECT_NE(fresh.buffer_id, exported.buffer_id);
      EXPECT_TRUE(still_exported(fresh));
      break;
    }
    for (void* p : held) ASSERT_EQ(cudaFree(p), cudaSuccess);
  }
  std::printf("the same address came back in %d of 16 rounds\n", same_address);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!strider::testing::gpu_available()) return strider::testing::kSkipExitCode;
  return RUN_ALL_TESTS();
}
