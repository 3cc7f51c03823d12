// Local files the CLI reads (token files, blob bytes for put) and writes (get's output).
// The name "-" means the process's stdin (reading) or stdout (writing), passed in as
// streams so tests can substitute them.
//
// Errors (the errno of the failing call, mapped by base::ErrnoToStatus): NOT_FOUND no
// such file, PERMISSION_DENIED, FAILED_PRECONDITION a directory, others as mapped; a
// failing stream is UNKNOWN. The message names the path and the call's strerror.
// Thread-safe for distinct paths.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strata::cli {

// The whole content of `path` ("-": `stdin_stream` to its end).
absl::StatusOr<std::string> ReadLocalFile(const std::string& path, std::istream& stdin_stream);

// Replaces `path` ("-": writes to `stdout_stream` and flushes it) with `bytes`. A regular
// file is written under a temporary name beside it and renamed over `path` once complete,
// so a failure never leaves a half-written file under the requested name; other files
// (devices, pipes) are written in place.
absl::Status WriteLocalFile(const std::string& path, absl::Span<const char> bytes,
                            std::ostream& stdout_stream);

}  // namespace strata::cli
