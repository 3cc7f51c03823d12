// ReplayTrace: a request trace as the policy replay sees it.
//
// A request is the chain of fixed-size token blocks of its prompt, root first: block i's
// prefix is blocks [0, i), so equal ids mean equal prefixes (a prefix hash per block, as in
// the Mooncake trace). Each block id is one blob of the replayed tier; its parent is the
// previous block of any request that contains it, its depth its position. Ids are
// BlobIds, never 0 (0 means "no parent" in BlobTraits).
//
// Producers: ParseMooncakeTrace / LoadMooncakeTrace (mooncake_trace.h) and
// GenerateAgenticTrace (agentic_trace.h). Consumers: ReplayPrefixCache
// (prefix_cache_replay.h) and the sweep behind strata-policy-replay.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "strata/tiering/blob_id.h"

namespace strata::tiering::sim {

struct ReplayRequest {
  // Block ids, root first. Never 0.
  std::vector<BlobId> blocks;
  // Tokens in the last block (a prompt's last block may be partial); every other block
  // holds ReplayTrace::block_tokens. 0 when `blocks` is empty.
  uint32_t last_block_tokens = 0;
  // Which session issued the request (synthetic traces); 0 = unknown (Mooncake).
  uint64_t session = 0;
  // Arrival time in milliseconds from the trace's start (informational; the replay uses
  // the order of requests only).
  double timestamp_ms = 0;
};

struct ReplayTrace {
  std::string name;             // "mooncake", "agentic"
  uint32_t block_tokens = 512;  // tokens per full block
  std::vector<ReplayRequest> requests;
};

// Counts over a whole trace.
struct TraceSummary {
  uint64_t requests = 0;
  uint64_t block_reads = 0;      // sum of request lengths in blocks
  uint64_t token_reads = 0;      // the same in tokens
  uint64_t distinct_blocks = 0;  // the working set
  uint64_t sessions = 0;         // distinct non-zero sessions
  // Hit rates of an unbounded cache (every block cached from its first use on): the
  // ceiling of every replay.
  double unbounded_block_hit_rate = 0;
  double unbounded_token_hit_rate = 0;
};

TraceSummary Summarize(const ReplayTrace& trace);

// INVALID_ARGUMENT (naming the request) if a block id is 0, a block appears twice in one
// request, a block follows different parents in different requests (the trace is not a
// prefix trace), or last_block_tokens is out of (0, block_tokens] for a non-empty request.
absl::Status ValidateTrace(const ReplayTrace& trace);

// For every request r and block position i: the index of the next request after r that
// contains requests[r].blocks[i], or kNoNextUse. Flattened: entry `offsets[r] + i`.
struct NextUses {
  static constexpr uint32_t kNoNextUse = ~uint32_t{0};
  std::vector<uint64_t> offsets;  // requests.size() + 1 entries
  std::vector<uint32_t> next;
};
NextUses ComputeNextUses(const ReplayTrace& trace);

}  // namespace strata::tiering::sim
