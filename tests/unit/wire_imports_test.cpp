// The mapping cache of peers' wires, over a fake mapper: reuse by (GPU, handle), pins that keep a
// mapping open past the bounds, oldest-first closing by count and by bytes.
#include "ipc/wire_imports.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace strider::ipc {
namespace {

WireHandle handle_of(unsigned char id) {
  WireHandle h;
  h.bytes.fill(0);
  h.bytes[0] = id;
  h.bytes[63] = static_cast<unsigned char>(id * 7 + 1);
  return h;
}

// Hands out distinct fake addresses and records what is open. Handles whose first byte is at
// least kOwn stand for this process's own allocations: "mapped" at a fixed address of their own,
// nothing opened.
struct FakeMapper {
  static constexpr unsigned char kOwn = 200;
  std::map<std::byte*, int> open;  // mapping -> device
  int opens = 0, closes = 0;
  bool fail = false;
  std::byte* held = nullptr;  // while open, every open clashes (its range came back)
  std::vector<std::byte> arena = std::vector<std::byte>(4096);

  WireImports::Mapper mapper() {
    return {[this](const WireHandle& handle, int device, std::string& error, bool& clash,
                   bool& own) -> std::byte* {
              if (fail) {
                error = "refused";
                return nullptr;
              }
              if (handle.bytes[0] >= kOwn) {
                own = true;
                return arena.data() + 2048 + handle.bytes[0];
              }
              if (held != nullptr && open.count(held) != 0) {
                clash = true;
                error = "already mapped";
                return nullptr;
              }
              std::byte* p = arena.data() + opens++;
              open[p] = device;
              return p;
            },
            [this](std::byte* mapped, int device) {
              ASSERT_EQ(open.count(mapped), 1u);
              EXPECT_EQ(open[mapped], device);
              open.erase(mapped);
              ++closes;
            }};
  }
};

TEST(WireImports, SameHandleAndGpuIsMappedOnce) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 8, 1 << 20);
  std::string error;
  std::byte* a = cache.pin(handle_of(1), 100, 0, error);
  std::byte* b = cache.pin(handle_of(1), 100, 0, error);
  std::byte* c = cache.pin(handle_of(1), 100, 1, error);  // another GPU: its own mapping
  std::byte* d = cache.pin(handle_of(2), 100, 0, error);  // another allocation
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_EQ(fake.opens, 3);
  EXPECT_EQ(cache.mappings(), 3u);
  EXPECT_EQ(cache.bytes(), 300u);
}

TEST(WireImports, CountBoundClosesTheOldestUnpinned) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 2, 1 << 20);
  std::string error;
  std::byte* first = cache.pin(handle_of(1), 10, 0, error);
  cache.unpin(first);
  std::byte* second = cache.pin(handle_of(2), 10, 0, error);
  cache.unpin(second);
  cache.pin(handle_of(3), 10, 0, error);  // over the bound: the oldest goes
  EXPECT_EQ(cache.mappings(), 2u);
  EXPECT_EQ(fake.open.count(first), 0u);
  EXPECT_EQ(fake.open.count(second), 1u);
  // Used again, the closed one is mapped anew.
  cache.pin(handle_of(1), 10, 0, error);
  EXPECT_EQ(fake.opens, 4);
}

TEST(WireImports, PinnedMappingsStayOpenPastTheBounds) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 1, 1 << 20);
  std::string error;
  std::byte* a = cache.pin(handle_of(1), 10, 0, error);
  std::byte* b = cache.pin(handle_of(2), 10, 0, error);
  std::byte* c = cache.pin(handle_of(3), 10, 0, error);
  EXPECT_EQ(cache.mappings(), 3u);  // all read by a call now
  EXPECT_EQ(fake.closes, 0);
  cache.unpin(b);  // the oldest unpinned goes once the bounds are applied again
  EXPECT_EQ(fake.open.count(b), 0u);
  EXPECT_EQ(fake.open.count(a), 1u);
  // A mapping pinned twice needs two unpins.
  EXPECT_EQ(cache.pin(handle_of(1), 10, 0, error), a);
  cache.unpin(a);
  EXPECT_EQ(fake.open.count(a), 1u);
  cache.unpin(a);
  cache.unpin(c);
  EXPECT_EQ(cache.mappings(), 1u);
}

TEST(WireImports, ByteBoundClosesStaleMappings) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 100, 250);
  std::string error;
  for (unsigned char id = 1; id <= 5; ++id) cache.unpin(cache.pin(handle_of(id), 100, 0, error));
  EXPECT_LE(cache.bytes(), 250u);
  EXPECT_EQ(cache.mappings(), 2u);
  EXPECT_EQ(fake.closes, 3);
}

TEST(WireImports, FailedOpenCachesNothingAndSaysWhy) {
  FakeMapper fake;
  fake.fail = true;
  WireImports cache(fake.mapper(), 8, 1 << 20);
  std::string error;
  EXPECT_EQ(cache.pin(handle_of(1), 10, 0, error), nullptr);
  EXPECT_EQ(error, "refused");
  EXPECT_EQ(cache.mappings(), 0u);
  fake.fail = false;
  EXPECT_NE(cache.pin(handle_of(1), 10, 0, error), nullptr);
}

TEST(WireImports, CloseAllClosesPinnedOnesToo) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 8, 1 << 20);
  std::string error;
  cache.pin(handle_of(1), 10, 0, error);
  cache.unpin(cache.pin(handle_of(2), 10, 1, error));
  cache.close_all();
  EXPECT_TRUE(fake.open.empty());
  EXPECT_EQ(cache.mappings(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

// An exporter freed an allocation this process still maps and reallocated its range: the
// stale unpinned mapping on that GPU is closed and the open tried once more; pinned mappings
// and other GPUs' stay.
TEST(WireImports, ARangeStillMappedIsClosedAndTheOpenRetried) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 8, 1 << 20);
  std::string error;
  std::byte* stale = cache.pin(handle_of(1), 100, 0, error);
  cache.unpin(stale);
  std::byte* pinned = cache.pin(handle_of(2), 100, 0, error);
  std::byte* other_gpu = cache.pin(handle_of(3), 100, 1, error);
  cache.unpin(other_gpu);
  fake.held = stale;
  std::byte* fresh = cache.pin(handle_of(4), 100, 0, error);
  ASSERT_NE(fresh, nullptr) << error;
  EXPECT_EQ(fake.open.count(stale), 0u);
  EXPECT_EQ(fake.open.count(pinned), 1u);
  EXPECT_EQ(fake.open.count(other_gpu), 1u);
  // A clash that closing does not cure fails as before.
  fake.held = pinned;
  EXPECT_EQ(cache.pin(handle_of(5), 100, 0, error), nullptr);
  EXPECT_EQ(fake.open.count(pinned), 1u);
}

// A message to the process itself maps its own allocation as it is (ipc/wire_ipc.cu): kept in
// the cache like any mapping, but never closed, by the bounds, a clash or close_all.
TEST(WireImports, OwnAllocationsAreCachedButNeverClosed) {
  FakeMapper fake;
  WireImports cache(fake.mapper(), 2, 1 << 20);
  std::string error;
  std::byte* own = cache.pin(handle_of(FakeMapper::kOwn), 10, 0, error);
  ASSERT_NE(own, nullptr) << error;
  EXPECT_EQ(cache.pin(handle_of(FakeMapper::kOwn), 10, 0, error), own);  // cached
  cache.unpin(own);
  cache.unpin(own);
  EXPECT_EQ(fake.opens, 0);
  for (unsigned char id = 1; id <= 3; ++id) cache.unpin(cache.pin(handle_of(id), 10, 0, error));
  EXPECT_EQ(cache.mappings(), 2u);  // the own one went by the count bound
  EXPECT_EQ(fake.closes, 1);        // and only the oldest peer mapping was closed with it
  cache.pin(handle_of(FakeMapper::kOwn + 1), 10, 0, error);
  cache.close_all();
  EXPECT_TRUE(fake.open.empty());
  EXPECT_EQ(fake.closes, 3);  // the two peer mappings left; no own one
}

// The lookup by (GPU, handle) stays right as mappings are pinned again, closed and reopened in
// random order (against a model of what is cached).
TEST(WireImports, LookupsMatchTheCacheUnderRandomUse) {
  FakeMapper fake;
  fake.arena.resize(1 << 16);
  WireImports cache(fake.mapper(), 6, 1 << 20);
  std::string error;
  std::map<std::pair<int, int>, std::byte*> seen;  // (id, GPU) -> its mapping while open
  unsigned state = 12345;
  for (int step = 0; step < 2000; ++step) {
    state = state * 1103515245u + 12345u;
    const int id = 1 + static_cast<int>((state >> 8) % 12);
    const int gpu = static_cast<int>((state >> 20) % 2);
    std::byte* m = cache.pin(handle_of(static_cast<unsigned char>(id)), 10, gpu, error);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(fake.open.count(m), 1u) << "a pin returned a closed mapping";
    EXPECT_EQ(fake.open[m], gpu);
    const auto key = std::make_pair(id, gpu);
    // The same mapping as last time exactly while it stayed open.
    if (seen.count(key) != 0 && fake.open.count(seen[key]) != 0 && seen[key] != m) {
      ADD_FAILURE() << "handle " << id << " on GPU " << gpu << " mapped twice at once";
    }
    seen[key] = m;
    cache.unpin(m);
    ASSERT_LE(cache.mappings(), 6u);
  }
}

}  // namespace
}  // namespace strider::ipc
