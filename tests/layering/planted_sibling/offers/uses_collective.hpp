// A planted violation between two sibling layers for the layering test's self-check: offers and
// collective both sit on transfer, neither may see the other.
#pragma once
#include "collective/call.hpp"
