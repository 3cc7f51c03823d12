#include "strata/types.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace strata {

std::vector<TokenId> RebuildTask::OwnTokens() const {
  if (!ns.has_value()) return {};
  const uint64_t own = uint64_t{pages} * ns->layout().page_tokens;
  if (own > sequence_tokens.size()) return {};
  return std::vector<TokenId>(sequence_tokens.end() - static_cast<ptrdiff_t>(own),
                              sequence_tokens.end());
}

absl::Status CheckMemoryDescriptor(const MemoryDescriptor& memory, uint64_t expected_bytes,
                                   std::string_view what) {
  const std::string name(what);
  switch (memory.kind) {
    case MemoryKind::kHost:
    case MemoryKind::kPinnedHost:
      break;
    case MemoryKind::kDevice:
      break;
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
