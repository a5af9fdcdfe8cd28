// runtime::host_resident against pages whose residency the test sets itself: anonymous memory
// is resident once written and not before, nor after MADV_DONTNEED gave it back.
#include "runtime/page_residency.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace strider::runtime {
namespace {

TEST(PageResidency, FollowsTheFirstAndLastPages) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = 8 * page;
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(map);
  EXPECT_FALSE(host_resident(p, bytes)) << "never written";
  std::memset(p, 1, bytes);
  EXPECT_TRUE(host_resident(p, bytes));
  EXPECT_TRUE(host_resident(p + 100, 1));
  ASSERT_EQ(madvise(p + 7 * page, page, MADV_DONTNEED), 0);
  EXPECT_FALSE(host_resident(p, bytes)) << "the last page was given back";
  EXPECT_TRUE(host_resident(p, 7 * page));
  ASSERT_EQ(madvise(p, page, MADV_DONTNEED), 0);
  EXPECT_FALSE(host_resident(p + 10, 20)) << "the first page was given back";
  EXPECT_FALSE(host_resident(p, 0));
  munmap(map, bytes);
}

}  // namespace
}  // namespace strider::runtime
