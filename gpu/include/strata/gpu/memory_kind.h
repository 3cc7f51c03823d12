// MemoryKind: where the bytes of a DeviceBuffer (or of any pointer handed to a
// Device) live, as the memory descriptors of the data plane need to know it.
//
//   kHost        ordinary pageable host memory
//   kPinnedHost  page-locked host memory the device can DMA from and to (staging)
//   kDevice      memory on the accelerator, not addressable by the host CPU
//
// A value type; MemoryKindName is pure and thread-safe.
#pragma once

#include <string_view>

namespace strata::gpu {

enum class MemoryKind {
  kHost,
  kPinnedHost,
  kDevice,
};

// "host", "pinned_host" or "device"; "unknown" for a value outside the enum.
std::string_view MemoryKindName(MemoryKind kind);

}  // namespace strata::gpu
