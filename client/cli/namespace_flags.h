// The --tenant / --model / --layout flags that name a namespace (put, match, ls).
//
// Errors: NamespaceFromFlags returns usage errors (exit_codes.h): a missing flag (when
// required), a layout spec that does not parse (layout_spec.h), or a tenant or model
// radix::Namespace refuses. Pure; thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"

#include "client/cli/argument_parser.h"
#include "strata/types.h"

namespace strata::cli {

// The three flags; `required` marks them required in the spec.
std::vector<FlagSpec> NamespaceFlags(bool required);

// The namespace the flags name. With none of the three given: nullopt (when the flags are
// optional). Some but not all given: a usage error naming the missing one.
absl::StatusOr<std::optional<Namespace>> NamespaceFromFlags(const ParsedArgs& args);

}  // namespace strata::cli
