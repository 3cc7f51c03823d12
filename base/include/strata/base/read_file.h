// ReadFileToString: the whole of a small local file (a config file, the tenants file, a PEM
// certificate or key), read once. Errors: the errno of opening it through ErrnoToStatus
// (NOT_FOUND no such file, PERMISSION_DENIED not readable, FAILED_PRECONDITION a
// directory, ...), with "<path>: " in front; UNAVAILABLE a read that failed midway;
// RESOURCE_EXHAUSTED the file is larger than `max_bytes`. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace strata::base {

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t max_bytes = SIZE_MAX);

}  // namespace strata::base
