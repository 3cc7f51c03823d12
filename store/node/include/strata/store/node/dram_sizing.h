// How big the DRAM tier is when nobody says (dram_bytes = auto).
//
//   DefaultDramBytes(available) = clamp(available / 4, 64 MiB, 8 GiB), rounded down to
//                                 2 MiB (a hugepage; also a multiple of the arena granule)
//
// where `available` is MemAvailable from /proc/meminfo: the kernel's estimate of memory a
// new workload can take without swapping. A quarter leaves room for the inference workers
// that share the host; 8 GiB keeps an unconfigured node from surprising anyone; 64 MiB is
// enough to try the node out even on a small machine. Production nodes set dram_bytes.
//
// Errors: MemAvailableBytes returns NOT_FOUND when the text has no MemAvailable line and
// INVALID_ARGUMENT when it does not parse; ReadMemAvailableBytes adds the errors of
// reading the file (UNAVAILABLE).
// Pure functions apart from the file read; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::store::node {

inline constexpr uint64_t kMinDefaultDramBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxDefaultDramBytes = uint64_t{8} << 30;

uint64_t DefaultDramBytes(uint64_t mem_available_bytes);

// MemAvailable (in bytes) from the text of /proc/meminfo ("MemAvailable:  123 kB").
absl::StatusOr<uint64_t> MemAvailableBytes(std::string_view meminfo);
// Any line of /proc/meminfo by name ("MemTotal"), in bytes.
absl::StatusOr<uint64_t> MemInfoBytes(std::string_view meminfo, std::string_view name);
absl::StatusOr<uint64_t> ReadMemInfoBytes(std::string_view name,
                                          const std::string& path = "/proc/meminfo");

// MemAvailable of this machine, from `path`.
absl::StatusOr<uint64_t> ReadMemAvailableBytes(const std::string& path = "/proc/meminfo");

}  // namespace strata::store::node
