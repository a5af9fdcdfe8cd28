// The batch kernel on the GPU, on the unit test's random batches (tests/unit/batch_cases.hpp:
// packs, unpacks and layout-to-layout copies of strided forms and block lists, mixed word sizes)
// against the same host-engine results: enqueue_batch with 32- and 64-bit indexing, then the
// synchronous pack_batch / unpack_batch with the packed buffer in device, mapped pinned and
// pageable memory (and the objects in host memory, for the host engine), and copy_layout.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "batch_cases.hpp"
#include "engine/cuda/batch.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "gpu_available.hpp"
#include "gpu_memory.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::engine::cuda {
namespace {

using strider::testing::BatchCase;
using strider::testing::copy_bytes;
using strider::testing::Kind;
using strider::testing::Pool;

// A pool of a memory kind with a 64-byte aligned start, as the cases' host arenas have.
class Buffer {
 public:
  Buffer(Kind kind, std::size_t bytes) : pool_(kind, bytes + 64) {}
  std::byte* data() const {
    std::byte* p = pool_.base();
    return p + (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64;
  }

 private:
  Pool pool_;
};

std::size_t first_difference(const std::vector<std::byte>& got,
                             const std::vector<std::byte>& want) {
  std::size_t i = 0;
  while (i < want.size() && got[i] == want[i]) ++i;
  return i;
}

class Batches : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaGetDevice(&device_), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override { cudaStreamDestroy(stream_); }

  // The case on device arenas through one launch; its destination arena read back.
  std::vector<std::byte> run_on_gpu(BatchCase& c, bool force_wide) {
    const std::size_t source_bytes = c.source().size(), dest_bytes = c.dest_before().size();
    Buffer source(Kind::Device, source_bytes), dest(Kind::Device, dest_bytes);
    copy_bytes(source.data(), c.source().data(), source_bytes);
    copy_bytes(dest.data(), c.dest_before().data(), dest_bytes);
    const auto copies = c.bind(source.data(), dest.data());
    const Queue queue{device_, stream_, sms_, {}};
    if (!force_wide) {
      const std::size_t bytes = batch_memory_bytes(copies.size());
      Buffer host(Kind::Pinned, bytes), device(Kind::Device, bytes);
      EXPECT_EQ(enqueue_batch(copies, queue, {host.data(), device.data(), bytes}, Policy{}),
                cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    } else {
      // The 64-bit path, forced: the plan by hand, the block lists' tables uploaded here.
      BatchShape shape;
      EXPECT_EQ(shape_batch(copies, Policy{}.max_word, shape, true), BatchStatus::Ok);
      std::vector<void*> tables;
      for (CopyShape& cs : shape.copies) {
        for (SideShape* side : {&cs.from, &cs.to}) {
          if (side->kind != MapKind::List) continue;
          const auto host = list_table<Divmod64>(*side->form, cs.word);
          void* table = nullptr;
          EXPECT_EQ(cudaMalloc(&table, host.size()), cudaSuccess);
          copy_bytes(table, host.data(), host.size());
          tables.push_back(table);
          side->table = static_cast<const std::byte*>(table);
        }
      }
      std::vector<std::byte> table(batch_table_bytes(shape));
      const BatchPlan plan = plan_batch(shape, sms_, table);
      Buffer device(Kind::Device, table.size());
      copy_bytes(device.data(), table.data(), table.size());
      EXPECT_EQ(launch_batch(plan, device.data(), stream_), cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      for (void* t : tables) cudaFree(t);
    }
    std::vector<std::byte> got(dest_bytes);
    copy_bytes(got.data(), dest.data(), dest_bytes);
    return got;
  }

  int device_ = 0, sms_ = 1;
  cudaStream_t stream_{};
};

TEST_F(Batches, EnqueueBatchMatchesTheHostEngine) {
  std::mt19937_64 rng(2024);  // the unit test's batches
  for (int t = 0; t < 300; ++t) {
    BatchCase c(rng, 1 + t % 24, BatchCase::Mix::Any);
    for (bool wide : {false, true}) {
      const auto got = run_on_gpu(c, wide);
      ASSERT_EQ(first_difference(got, c.expected()), c.expected().size())
          << "batch " << t << " wide " << wide;
    }
  }
}

TEST_F(Batches, SelfCopiesBetweenFormsOfEqualSize) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 200; ++t) {
    BatchCase c(rng, 1 + t % 8, BatchCase::Mix::Self);
    for (bool wide : {false, true}) {
      const auto got = run_on_gpu(c, wide);
      ASSERT_EQ(first_difference(got, c.expected()), c.expected().size())
          << "batch " << t << " wide " << wide;
    }
  }
}

TEST_F(Batches, AHalosJobsInOneLaunch) {
  std::mt19937_64 rng(11);
  BatchCase c(rng, 208, BatchCase::Mix::Pack);
  const auto got = run_on_gpu(c, false);
  ASSERT_EQ(first_difference(got, c.expected()), c.expected().size());
}

// The items of a pack (or unpack) case: its layouts in `user`, its packed bytes in `packed`.
std::vector<BatchItem> items_of(const BatchCase& c, bool pack, std::byte* user) {
  std::vector<BatchItem> items;
  for (const auto& copy : c.copies()) {
    const strider::testing::CaseSide& side = pack ? copy.from : copy.to;
    const strider::testing::CaseSide& packed = pack ? copy.to : copy.from;
    const std::int64_t lo =
        strider::testing::touched_region(*side.form, side.extent, side.count).first;
    items.push_back({side.form, side.extent, side.state, side.count,
                     runtime::view_buffer(user + side.at, lo), packed.at});
  }
  return items;
}

TEST_F(Batches, PackAndUnpackBatchOverEveryPackedMemory) {
  std::mt19937_64 rng(99);
  for (Kind user_kind : {Kind::Device, Kind::Pageable}) {
    for (Kind packed_kind : {Kind::Device, Kind::Pinned, Kind::Pageable}) {
      for (int t = 0; t < 40; ++t) {
        for (bool pack : {true, false}) {
          BatchCase c(rng, 1 + t % 12, pack ? BatchCase::Mix::Pack : BatchCase::Mix::Unpack);
          const std::size_t source_bytes = c.source().size();
          const std::size_t dest_bytes = c.dest_before().size();
          Buffer source(pack ? user_kind : packed_kind, source_bytes);
          Buffer dest(pack ? packed_kind : user_kind, dest_bytes);
          copy_bytes(source.data(), c.source().data(), source_bytes);
          copy_bytes(dest.data(), c.dest_before().data(), dest_bytes);
          const auto items = items_of(c, pack, pack ? source.data() : dest.data());
          std::string error;
          const Outcome outcome =
              pack ? pack_batch(items, runtime::view_buffer(dest.data(), 0),
                                static_cast<std::int64_t>(dest_bytes), Policy{}, error)
                   : unpack_batch(runtime::view_buffer(source.data(), 0),
                                  static_cast<std::int64_t>(source_bytes), items, Policy{}, error);
          ASSERT_EQ(outcome, Outcome::Done) << error;
          std::vector<std::byte> got(dest_bytes);
          copy_bytes(got.data(), dest.data(), dest_bytes);
          ASSERT_EQ(first_difference(got, c.expected()), c.expected().size())
              << (pack ? "pack" : "unpack") << " user " << strider::testing::name(user_kind)
              << " packed " << strider::testing::name(packed_kind) << " batch " << t;
        }
      }
    }
  }
}

TEST_F(Batches, CopyLayoutBetweenFormsOfEqualSize) {
  std::mt19937_64 rng(5);
  for (int t = 0; t < 300; ++t) {
    BatchCase c(rng, 1, BatchCase::Mix::Self);
    const auto& copy = c.copies().front();
    Buffer source(Kind::Device, c.source().size()), dest(Kind::Device, c.dest_before().size());
    copy_bytes(source.data(), c.source().data(), c.source().size());
    copy_bytes(dest.data(), c.dest_before().data(), c.dest_before().size());
    const auto lo = [](const strider::testing::CaseSide& s) {
      return strider::testing::touched_region(*s.form, s.extent, s.count).first;
    };
    const Layout from{*copy.from.form, copy.from.extent, *copy.from.state};
    const Layout to{*copy.to.form, copy.to.extent, *copy.to.state};
    std::string error;
    ASSERT_EQ(
        copy_layout(from, copy.from.count,
                    runtime::view_buffer(source.data() + copy.from.at, lo(copy.from)), to,
                    copy.to.count, runtime::view_buffer(dest.data() + copy.to.at, lo(copy.to)),
                    Policy{}, error),
        Outcome::Done)
        << error;
    std::vector<std::byte> got(c.dest_before().size());
    copy_bytes(got.data(), dest.data(), got.size());
    ASSERT_EQ(first_difference(got, c.expected()), c.expected().size()) << "copy " << t;
  }
}

}  // namespace
}  // namespace strider::engine::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!strider::testing::gpu_available()) return strider::testing::kSkipExitCode;
  return RUN_ALL_TESTS();
}
