// ByteLruStack: byte-weighted LRU stack distances in O(log n) per access, shared by ExactMrc
// and ShardsMrc (internal; not part of the module's public surface).
//
// Each live key holds its latest size at the time of its latest access in a Fenwick tree
// indexed by access time. An access of a key seen before returns the bytes of the distinct
// keys accessed since its previous access (its own bytes excluded). Times are renumbered
// 0..n-1 (n = live keys) when the tree fills, so memory stays O(n) and the amortized cost
// O(log n).
//
// Not thread-safe (callers lock). Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace strata::tiering::mrc::internal {

class ByteLruStack {
 public:
  ByteLruStack() = default;

  // Records an access of `key` at size `bytes`. Returns the bytes of the distinct other keys
  // accessed since the key's previous access, or nullopt on its first access.
  std::optional<uint64_t> Access(uint64_t key, uint64_t bytes);

  // Forgets `key` (as if never accessed). Returns false if it was not live.
  bool Remove(uint64_t key);

  void Clear();

  uint64_t size() const { return last_access_.size(); }
  uint64_t live_bytes() const { return live_bytes_; }

 private:
  struct LastAccess {
    uint64_t time = 0;
    uint64_t bytes = 0;
  };
  static constexpr uint64_t kVacant = ~uint64_t{0};

  void Compact();
  void Add(uint64_t time, uint64_t bytes);
  void Subtract(uint64_t time, uint64_t bytes);
  uint64_t Prefix(uint64_t time) const;  // bytes at times [0, time]

  absl::flat_hash_map<uint64_t, LastAccess> last_access_;
  std::vector<uint64_t> tree_;      // Fenwick tree (1-based inside) of bytes by access time
  std::vector<uint64_t> time_key_;  // key whose latest access is at time t, or kVacant
  uint64_t next_time_ = 0;
  uint64_t live_bytes_ = 0;
};

}  // namespace strata::tiering::mrc::internal
