// RangeMap<V>: non-overlapping address ranges [start, start + size), each with a value; finds
// the range that wholly contains a query range. The client keeps its memory registrations
// in one (Client::RegisterMemory), so a transfer inside a registered buffer uses it.
//
// Errors: Insert INVALID_ARGUMENT for an empty range or one overlapping an existing range;
// Erase NOT_FOUND when no range starts at the address.
//
// Not thread-safe: the owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata::client_internal {

template <typename V>
class RangeMap {
 public:
  absl::Status Insert(const void* start, size_t size, V value) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(start);
    if (size == 0 || begin + size < begin) {
      return absl::InvalidArgumentError("memory range: empty or wraps around");
    }
    auto next = ranges_.lower_bound(begin);
    if (next != ranges_.end() && next->first < begin + size) return Overlap(next->first);
    if (next != ranges_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second.first > begin) return Overlap(prev->first);
    }
    ranges_.emplace(begin, std::make_pair(size, std::move(value)));
    return absl::OkStatus();
  }

  absl::Status Erase(const void* start) {
    if (ranges_.erase(reinterpret_cast<uintptr_t>(start)) == 0) {
      return absl::NotFoundError("no registered memory starts at that address");
    }
    return absl::OkStatus();
  }

  // The value of the range holding all of [p, p + n), if any.
  std::optional<V> Find(const void* p, size_t n) const {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
    auto it = ranges_.upper_bound(begin);
    if (it == ranges_.begin()) return std::nullopt;
    --it;
    if (begin + n > it->first + it->second.first || begin + n < begin) return std::nullopt;
    return it->second.second;
  }

  size_t size() const { return ranges_.size(); }

 private:
  static absl::Status Overlap(uintptr_t other) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory range overlaps the registered range at 0x", absl::Hex(other)));
  }

  std::map<uintptr_t, std::pair<size_t, V>> ranges_;  // start -> (size, value)
};

}  // namespace strata::client_internal
