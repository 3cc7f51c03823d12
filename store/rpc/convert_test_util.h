// What the store/rpc converter tests share. Test-only.
#pragma once

#include <cstdint>

#include "absl/time/time.h"

#include "strata/radix/blob_key.h"

namespace strata::store::rpc::convert_test {

// The node's "now" in the tests (2030-01-01T00:00:00Z).
inline const absl::Time kNow = absl::FromUnixSeconds(1893456000);

inline radix::BlobKey Key(uint64_t hi, uint64_t lo) {
  return radix::BlobKey{.hash = {.hi = hi, .lo = lo}};
}

}  // namespace strata::store::rpc::convert_test
