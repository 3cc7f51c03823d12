// StatusCodeName: the canonical name of a status code number ("OK", "NOT_FOUND", ...),
// taken from absl::StatusCodeToString, for places that need a name with static lifetime
// (metric labels, the C API's const char*).
//
// Returns "" for a number that is not an absl::StatusCode (outside 0..16); callers choose
// their own fallback. The view's data is NUL-terminated and lives for the whole process.
// Thread-safe (the table is built once, on first use).
#pragma once

#include <string_view>

namespace strata::base {

std::string_view StatusCodeName(int code);

}  // namespace strata::base
