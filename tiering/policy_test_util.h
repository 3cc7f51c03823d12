// What the eviction-policy tests share. Test-only.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"

#include "strata/tiering/eviction_policy.h"

namespace strata::tiering::policy_test {

// The policy's victims for `bytes` (default: as many as it has), in its order, among the
// blobs `evictable` accepts (default: all).
inline std::vector<BlobId> Victims(
    const EvictionPolicy& policy, uint64_t bytes = ~uint64_t{0},
    absl::FunctionRef<bool(BlobId)> evictable = [](BlobId) { return true; }) {
  std::vector<BlobId> victims;
  policy.CollectVictims(bytes, evictable, &victims);
  return victims;
}

}  // namespace strata::tiering::policy_test
