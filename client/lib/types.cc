#include "strata/types.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace strata {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kHbm:
      return "hbm";
    case Tier::kDram:
      return "dram";
    case Tier::kSsd:
      return "ssd";
    case Tier::kText:
      return "text";
  }
  return "unknown";
}

absl::Status CheckMemoryDescriptor(const MemoryDescriptor& memory, uint64_t expected_bytes,
                                   std::string_view what) {
  const std::string name(what);
  switch (memory.kind) {
    case MemoryKind::kHost:
    case MemoryKind::kPinnedHost:
      break;
    case MemoryKind::kDevice:
      return absl::UnimplementedError(
          absl::StrCat(name, ": CUDA device memory (device ", memory.device,
                       ") is not supported yet; pass host or pinned host memory"));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": unknown memory kind ", static_cast<int>(memory.kind)));
  }
  if (memory.device < 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": negative device ", memory.device));
  }
  if (memory.ptr == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": null pointer"));
  }
  if (memory.bytes != expected_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", memory.bytes, " bytes, expected ", expected_bytes));
  }
  return absl::OkStatus();
}

}  // namespace strata
