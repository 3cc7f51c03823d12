#include "strata/gpu/memory_kind.h"

namespace strata::gpu {

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost:
      return "host";
    case MemoryKind::kPinnedHost:
      return "pinned_host";
    case MemoryKind::kDevice:
      return "device";
  }
  return "unknown";
}

}  // namespace strata::gpu
