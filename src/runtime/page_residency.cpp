#include "runtime/page_residency.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace strider::runtime {
namespace {

bool page_resident(std::uintptr_t address, std::uintptr_t page) {
  unsigned char resident = 0;
  void* start = reinterpret_cast<void*>(address & ~(page - 1));
  return mincore(start, 1, &resident) == 0 && (resident & 1) != 0;
}

}  // namespace

bool host_resident(const void* begin, std::size_t bytes) {
  static const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0 || bytes == 0) return false;
  const auto page = static_cast<std::uintptr_t>(page_size);
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t last = first + bytes - 1;
  if (!page_resident(first, page)) return false;
  return (last & ~(page - 1)) == (first & ~(page - 1)) || page_resident(last, page);
}

}  // namespace strider::runtime
