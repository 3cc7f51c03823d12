#include "strata/store/core/received_bytes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace strata::store::core {

absl::Status ReceivedBytes::Add(uint64_t offset, uint64_t length) {
  if (offset > size_ || length > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("bytes [", offset, ", +", length,
                                              ") are not inside the blob's ", size_, " bytes"));
  }
  if (length == 0) return absl::OkStatus();
  uint64_t begin = offset;
  uint64_t end = offset + length;
  // The first interval that could touch [begin, end): the last one starting at or before
  // begin, if it reaches begin; else the first starting after begin.
  auto it = intervals_.upper_bound(begin);
  if (it != intervals_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) it = prev;
  }
  while (it != intervals_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    covered_ -= it->second - it->first;
    it = intervals_.erase(it);
  }
  intervals_.emplace(begin, end);
  covered_ += end - begin;
  return absl::OkStatus();
}

}  // namespace strata::store::core
