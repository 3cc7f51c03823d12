// AbslView: a std::string_view seen as an absl::string_view, without a copy.
//
// Debian's Abseil (20220623) has its own absl::string_view class rather than an alias of
// std::string_view, so a std::string_view passed to an Abseil call taking
// absl::string_view (absl::SimpleAtoi, absl::StrSplit, ...) needs this conversion. The
// result views the same bytes: it lives no longer than `s`'s data.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace strata::base {

inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace strata::base
