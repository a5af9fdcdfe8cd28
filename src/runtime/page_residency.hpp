// Whether the host holds a range's pages now. Managed memory lives on the host or on a GPU,
// moved by page faults: the pages the host wrote last are resident in host memory (mincore sees
// them), those a kernel touched last are not. Asking costs one system call per probed page.
#pragma once

#include <cstddef>

namespace strider::runtime {

// True when the pages holding the first and the last byte of [begin, begin + bytes) are both
// resident in host memory; false otherwise, or when the system cannot say.
bool host_resident(const void* begin, std::size_t bytes);

}  // namespace strider::runtime
