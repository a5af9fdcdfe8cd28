// What leaves libstrider.so: the MPI_* entry points and the strider_* API, nothing else
// (src/CMakeLists.txt hides every other symbol).
#pragma once

#define STRIDER_EXPORT extern "C" __attribute__((visibility("default")))
