// FormatMetrics: a NodeSnapshot as Prometheus text exposition format 0.0.4 (what /metrics
// serves), and the escaping rules it follows.
//
// Every family has its `# HELP` and `# TYPE` lines; counters end in `_total`; sizes are in
// bytes and durations in seconds; histograms are written as cumulative `_bucket{le=...}`
// series ending in le="+Inf", then `_sum` and `_count`. The families, their labels and what
// each counts are listed in docs/api.md ("HTTP endpoint"); the tier label is "dram", "ssd"
// or "text" (an SSD tier that does not exist reports zeros), the phase label "prefill",
// "midfill" or "decode".
//
// Pure functions of their arguments; thread-safe. No errors.
#pragma once

#include <string>
#include <string_view>

#include "strata/store/http/node_snapshot.h"

namespace strata::store::http {

// The whole /metrics body; ends with a newline.
std::string FormatMetrics(const NodeSnapshot& snapshot);

// A label value with `\`, `"` and newline escaped as `\\`, `\"` and `\n`.
std::string EscapeLabelValue(std::string_view value);
// HELP text with `\` and newline escaped as `\\` and `\n`.
std::string EscapeHelp(std::string_view text);
// A sample value: integers as written, other finite values in the shortest form that reads
// back exactly ("2.5e-05", "0.75"); "+Inf", "-Inf", "NaN" otherwise.
std::string FormatValue(double value);

// gRPC's name of a status code: "OK", "NOT_FOUND", ... (base::StatusCodeName, i.e.
// absl::StatusCodeToString; "UNKNOWN" outside 0..16).
std::string_view GrpcCodeName(int code);

}  // namespace strata::store::http
