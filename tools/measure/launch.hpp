#pragma once

namespace strider::measure {

// Launches an empty kernel on `stream` (a cudaStream_t) and waits for it; a cudaError_t.
int launch_empty_and_wait(void* stream);

}  // namespace strider::measure
