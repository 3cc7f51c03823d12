// The Mooncake trace format (FAST '25 release, one JSON object a line):
//
//   {"timestamp": <ms>, "input_length": <tokens>, "output_length": <tokens>,
//    "hash_ids": [<int>, ...]}
//
// Each hash_ids entry names one `block_tokens`-token block of the prompt by a renumbered
// prefix hash. A request becomes a ReplayRequest whose blocks are hash_id + 1 (BlobId 0 is
// reserved) and whose last block holds input_length - block_tokens * (n - 1) tokens (clamped
// to [1, block_tokens]; a full block when input_length is absent), unless
// drop_partial_last_block leaves a partial last block out. Other keys are skipped,
// as are blank lines; requests keep file order. session is 0 (the trace has none).
//
// Errors: INVALID_ARGUMENT with the 1-based line number and column for malformed JSON, a
// line that is not an object, a missing or non-array hash_ids, an id that is not an integer
// in [0, 2^63), a non-numeric timestamp or input_length, or an id that follows different
// ids on different lines (not a prefix trace). A repeated id within one line is a cycle and
// is reported the same way. LoadMooncakeTrace: NOT_FOUND if the file cannot be opened,
// DATA_LOSS if reading it fails midway. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "strata/tiering/sim/replay_trace.h"

namespace strata::tiering::sim {

struct MooncakeTraceOptions {
  // Tokens per hash_ids block. REQUIRES: > 0.
  uint32_t block_tokens = 512;
  // Leave out each request's last block when it is partial (input_length is not a multiple
  // of block_tokens), as strata's engine never caches a partial page: the replay then
  // treats a block as a page. With it kept (the default), a partial last block is a blob of
  // its own, which the next turn of the conversation re-hashes and never reads.
  bool drop_partial_last_block = false;
};

absl::StatusOr<ReplayTrace> ParseMooncakeTrace(std::string_view text,
                                               const MooncakeTraceOptions& options = {});
absl::StatusOr<ReplayTrace> LoadMooncakeTrace(const std::string& path,
                                              const MooncakeTraceOptions& options = {});

}  // namespace strata::tiering::sim
