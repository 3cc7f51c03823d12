// ReadFileToString: the whole contents of a file, for tests that look at what they or a
// child process wrote (a child's stdout, a report, a PNG). Test-only (strata::testing).
//
// Errors: none reported; a file that does not exist or cannot be read reads as "" (a test
// asserts on the contents, which then fail to match).
// Thread-safe (no shared state).
#pragma once

#include <string>

namespace strata::testing {

std::string ReadFileToString(const std::string& path);

}  // namespace strata::testing
