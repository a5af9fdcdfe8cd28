// Which objects another process of the node may copy in place (direct_layout.hpp): the object
// cut into segments, each inside one cudaMalloc allocation that CUDA IPC exports; and the form of
// such an object in the process that mapped it.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "engine/cuda/type_state.hpp"
#include "ipc/direct_layout.hpp"
#include "ipc/memory_export.hpp"
#include "transfer/object.hpp"

namespace strider::transfer {

// The object's allocations as its owner addresses them (for its own records).
using AllocationBases = std::array<const std::byte*, ipc::DirectPolicy::kMaxAllocations>;

// The allocations a call's objects lie in, exported once per call (a call's objects share a few
// buffers, and no allocation can be freed while the call runs).
using CallExports = std::vector<ipc::MemoryExport>;

// The object as another process may copy it in place, if it can: a non-empty object in device
// memory (not managed) whose blocks, cut along their outer dims where an allocation ends, make
// at most kMaxSegments segments in at most kMaxAllocations exported allocations. False with
// `why` otherwise. Descriptions are kept per (address, plan, count, GPU) and used again while
// their allocations are the same (the driver's buffer IDs): 3 us a receive offered in place on
// an H100, where checking takes one driver query per allocation.
bool describe_in_place(const Object& object, CallExports& exports, ipc::DirectLayout& out,
                       AllocationBases& bases, std::string& why);

// The mapping process's form of an object and its engine state (a block list's device tables).
// Forms of several segments are cached (their tables are uploaded once); each holder keeps its
// entry alive.
struct MappedForm {
  canon::CanonicalForm form;
  engine::cuda::TypeState state;
};
std::shared_ptr<const MappedForm> mapped_form_of(const ipc::DirectLayout& layout,
                                                 const AllocationBases& bases);

}  // namespace strider::transfer
