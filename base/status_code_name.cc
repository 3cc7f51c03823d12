#include "strata/base/status_code_name.h"

#include <array>
#include <string>

#include "absl/status/status.h"

namespace strata::base {
namespace {

// absl::StatusCode's values are the gRPC codes 0..16 (absl::StatusCode::kUnauthenticated).
constexpr int kCodes = static_cast<int>(absl::StatusCode::kUnauthenticated) + 1;

}  // namespace

std::string_view StatusCodeName(int code) {
  static const std::array<std::string, kCodes>* const kNames = [] {
    auto* names = new std::array<std::string, kCodes>;
    for (int c = 0; c < kCodes; ++c) {
      (*names)[c] = absl::StatusCodeToString(static_cast<absl::StatusCode>(c));
    }
    return names;
  }();
  if (code < 0 || code >= kCodes) return {};
  return (*kNames)[static_cast<size_t>(code)];
}

}  // namespace strata::base
