// The strider_* C API (include/strider/strider.h).
#include <cstring>

#include "interpose/engine_choice.hpp"
#include "interpose/next.hpp"
#include "interpose/state.hpp"
#include "runtime/config.hpp"
#include "strider/strider.h"

using namespace strider;

STRIDER_EXPORT const char* strider_version(void) { return STRIDER_VERSION; }

STRIDER_EXPORT int strider_get_stats(strider_stats* out) {
  const interpose::Counters& c = interpose::counters();
  out->types_planned = c.types_planned.load();
  out->types_unsupported = c.types_unsupported.load();
  out->packs_host = c.packs_host.load();
  out->unpacks_host = c.unpacks_host.load();
  out->packs_forwarded = c.packs_forwarded.load();
  out->unpacks_forwarded = c.unpacks_forwarded.load();
  out->plans_cached = interpose::plans().size();
  out->packs_gpu = c.packs_gpu.load();
  out->unpacks_gpu = c.unpacks_gpu.load();
  out->packs_staged = c.packs_staged.load();
  out->unpacks_staged = c.unpacks_staged.load();
  return 0;
}

STRIDER_EXPORT int strider_describe_type(MPI_Datatype type, char* buffer, int size) {
  if (runtime::config().disabled) return -1;  // a pure pass-through decodes nothing
  auto p = interpose::plan_for(type);
  if (!p) return -1;
  std::string text = plan::describe(*p);
  if (p->supported) {
    text += std::string("engine for host buffers: ") +
            (interpose::host_engine_serves(*p) ? "strider-cpu" : "system MPI") + "\n";
    text += std::string("engine for GPU buffers: ") +
            (!interpose::gpu_engine_serves(*p) ? "staged through host memory"
             : p->form.strided()               ? "strider-gpu (strided kernel)"
                                               : "strider-gpu (block-list kernel)") +
            "\n";
  }
  if (buffer != nullptr && size > 0) {
    const std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(size - 1));
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return static_cast<int>(text.size());
}
