// ExactMrc: the exact byte-weighted miss-ratio curve of an access stream (Mattson's stack
// algorithm), the reference that ShardsMrc's estimates are checked against.
//
// An access hits in an LRU cache of capacity C iff its byte-weighted stack distance — the
// bytes of the distinct keys accessed since its previous access (each at the size of its
// latest access), plus its own bytes — is <= C; a first access is a miss at every capacity.
// Hit ratio = hits / accesses (access-weighted). This is exactly what an LRU cache that
// evicts from its cold end until its contents fit would see, provided each key keeps one
// size and no key is larger than C.
//
// Cost: O(log n) per access (a Fenwick tree over access times, compacted as keys are
// re-accessed, n = distinct keys), memory O(n + distinct distances). Handles millions of
// accesses over ~1M distinct keys in about a second.
//
// Not thread-safe: for tests, offline replay (strata-replay) and benchmarks. Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

#include "strata/tiering/mrc/internal/byte_lru_stack.h"
#include "strata/tiering/mrc/miss_ratio_curve.h"

namespace strata::tiering::mrc {

class ExactMrc {
 public:
  ExactMrc() = default;

  // One access of `key` (a well-mixed 64-bit hash) occupying `bytes`.
  void Access(uint64_t key, uint64_t bytes);

  // The curve at `capacities` (sorted and deduplicated here).
  // Empty `capacities`: 64 evenly spaced points up to the working set.
  MissRatioCurve Curve(absl::Span<const uint64_t> capacities) const;

  uint64_t accesses() const { return accesses_; }
  uint64_t distinct_keys() const { return stack_.size(); }
  uint64_t working_set_bytes() const { return stack_.live_bytes(); }

 private:
  internal::ByteLruStack stack_;
  uint64_t accesses_ = 0;
  uint64_t cold_misses_ = 0;
  absl::flat_hash_map<uint64_t, uint64_t> distance_counts_;  // stack distance -> accesses
};

}  // namespace strata::tiering::mrc
