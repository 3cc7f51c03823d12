// ReceivedBytes: which bytes of a blob being put have arrived, as a set of disjoint,
// non-adjacent intervals [begin, end) of [0, size). Overlapping and repeated ranges merge.
//
// Value type; thread-compatible. Errors: Add returns OUT_OF_RANGE for a range that does
// not lie inside [0, size) (nothing is recorded).
#pragma once

#include <cstdint>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"

namespace strata::store::core {

class ReceivedBytes {
 public:
  explicit ReceivedBytes(uint64_t size) : size_(size) {}

  // Records [offset, offset + length). length 0 records nothing (OK if offset <= size).
  absl::Status Add(uint64_t offset, uint64_t length);
  // Bytes covered so far.
  uint64_t covered() const { return covered_; }
  uint64_t size() const { return size_; }
  bool complete() const { return covered_ == size_; }
  size_t intervals() const { return intervals_.size(); }

 private:
  uint64_t size_;
  uint64_t covered_ = 0;
  absl::btree_map<uint64_t, uint64_t> intervals_;  // begin -> end
};

}  // namespace strata::store::core
