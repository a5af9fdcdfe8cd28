# Strider's layers: one folder under src/ each (a folder may sit inside another's, as engine/cpu
# does), and one CMake target each (strider_<folder>, '/' as '_'). Dependencies point down only.
# src/CMakeLists.txt links each target to the layers listed here, and the layering test
# (cmake/CheckLayers.cmake, ctest -R layering) fails when a folder with sources is no layer, or
# a file in a layer's folder includes a header of a layer that is neither its own nor reachable
# through this table.
#
#   layer        target               direct dependencies
#   ir           strider_ir           -
#   canon        strider_canon        ir
#   model        strider_model        canon          (perf data, cost, method choice)
#   runtime      strider_runtime      model          (config, log, memory kinds, device contexts)
#   engine/cpu   strider_engine_cpu   canon runtime  (host loops over the canonical form)
#   engine/cuda  strider_engine_cuda  engine/cpu     (CUDA kernels and their plans; MPI-free)
#   plan         strider_plan         engine/cuda    (decode, plan, plan cache; a plan holds the
#                                                     engine's per-type state)
#   ipc          strider_ipc          runtime canon  (wire buffer pools, CUDA IPC, shared layouts)
#   transfer     strider_transfer     ipc plan       (objects, methods, wires, requests)
#   offers       strider_offers       transfer       (same-node point-to-point offers)
#   collective   strider_collective   transfer       (a served collective's call, its transports)
#   calls        strider_calls        offers collective (the MPI semantics behind the entry points)
#   interpose    strider              calls          (libstrider.so: the MPI entry points)
set(STRIDER_LAYERS ir canon model runtime engine/cpu engine/cuda plan ipc transfer offers collective
    calls interpose)
set(STRIDER_LAYER_DEPS_ir "")
set(STRIDER_LAYER_DEPS_canon ir)
set(STRIDER_LAYER_DEPS_model canon)
set(STRIDER_LAYER_DEPS_runtime model)
set(STRIDER_LAYER_DEPS_engine/cpu canon runtime)
set(STRIDER_LAYER_DEPS_engine/cuda engine/cpu)
set(STRIDER_LAYER_DEPS_plan engine/cuda)
set(STRIDER_LAYER_DEPS_ipc runtime canon)
set(STRIDER_LAYER_DEPS_transfer ipc plan)
set(STRIDER_LAYER_DEPS_offers transfer)
set(STRIDER_LAYER_DEPS_collective transfer)
set(STRIDER_LAYER_DEPS_calls offers collective)
set(STRIDER_LAYER_DEPS_interpose calls)

# Includes allowed against the table, as "file:header" (none).
set(STRIDER_LAYER_EXCEPTIONS "")

# strider_layer_closure(<layer> <out-var>): every layer <layer> may include, itself first.
function(strider_layer_closure layer out)
  set(seen ${layer})
  set(todo ${STRIDER_LAYER_DEPS_${layer}})
  while(todo)
    list(POP_FRONT todo next)
    if(NOT next IN_LIST seen)
      list(APPEND seen ${next})
      list(APPEND todo ${STRIDER_LAYER_DEPS_${next}})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# strider_layer_of(<folder> <out-var>): the layer a folder of src/ (relative, e.g. engine/cuda)
# or a header's folder belongs to: the longest layer that is the folder or contains it; "" if
# none does.
function(strider_layer_of folder out)
  set(best "")
  foreach(layer IN LISTS STRIDER_LAYERS)
    string(LENGTH "${layer}" n)
    string(LENGTH "${best}" b)
    if((folder STREQUAL layer OR folder MATCHES "^${layer}/") AND n GREATER b)
      set(best ${layer})
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()
