// A planted sub-folder that is no layer, for the layering test's self-check: every folder with
// sources must be a layer of cmake/Layers.cmake.
#pragma once
