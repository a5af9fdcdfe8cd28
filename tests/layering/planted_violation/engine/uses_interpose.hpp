// A planted violation for the layering test's self-check: the engine may not see interpose.
#pragma once
#include "interpose/entry.hpp"
