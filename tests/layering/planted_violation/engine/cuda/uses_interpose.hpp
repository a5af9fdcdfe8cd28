// A planted violation in a sub-folder layer (engine/cuda) for the layering test's self-check:
// the engine may not see interpose.
#pragma once
#include "interpose/entry.hpp"
