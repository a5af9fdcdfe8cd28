# Strider's layers: one folder under src/ and one CMake target each. Dependencies point down
# only. src/CMakeLists.txt links each target to the layers listed here, and the layering test
# (cmake/CheckLayers.cmake, ctest -R layering) fails when a file in src/<layer>/ includes a
# header of a layer that is neither its own nor reachable through this table.
#
#   layer      target            direct dependencies
#   ir         strider_ir        -
#   canon      strider_canon     ir
#   model      strider_model     canon            (perf data, cost, method choice)
#   runtime    strider_runtime   model            (config, log, memory kinds, device contexts)
#   engine     strider_engine    canon runtime    (CPU loops, CUDA kernels; MPI-free)
#   plan       strider_plan      canon model engine (decode, plan, plan cache; a plan holds the
#                                                   engine's per-type state)
#   transfer   strider_transfer  engine plan      (operations, methods, wire buffers)
#   interpose  strider           transfer         (libstrider.so: the MPI entry points)
set(STRIDER_LAYERS ir canon model runtime engine plan transfer interpose)
set(STRIDER_LAYER_DEPS_ir "")
set(STRIDER_LAYER_DEPS_canon ir)
set(STRIDER_LAYER_DEPS_model canon)
set(STRIDER_LAYER_DEPS_runtime model)
set(STRIDER_LAYER_DEPS_engine canon runtime)
set(STRIDER_LAYER_DEPS_plan canon model engine)
set(STRIDER_LAYER_DEPS_transfer engine plan runtime model)
set(STRIDER_LAYER_DEPS_interpose transfer)

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
