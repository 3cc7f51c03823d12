// ReplayPrefixCache: one tier of a prefix cache, driven through a real EvictionPolicy.
//
// The model is the node engine's, reduced to one byte tier of `capacity_bytes` holding
// blocks of `block_bytes` each:
//   * A request's hit is the longest cached prefix of its blocks. The cache stays
//     prefix-closed (below), so every cached block of a request is in that prefix.
//   * The hit blocks are read (policy OnAccess, root first), then each missing block is
//     inserted (OnInsert, root first, with BlobTraits: bytes, first_page = its position,
//     pages = 1, page_tokens = block_tokens, parent = the previous block, session_hint per
//     ReplayOptions). Before each insert, while the tier is full, the replay asks
//     CollectVictims for the missing bytes and erases what it returns (OnErase).
//   * Evictable (the engine's constraint): a cached block with no cached child (leaf-first:
//     a continuation without its prefix is useless), not read or written by the current
//     request (pinned while it is served).
//   * If nothing is evictable (a request longer than the tier), the rest of the request is
//     not cached (counted in not_cached_blocks).
// Token-weighted hits count block_tokens per hit block, and the last block's own tokens
// when the whole request hits.
//
// Errors: INVALID_ARGUMENT if block_bytes is 0 or a block is cached after a missing one
// (the trace is not a prefix trace; see ValidateTrace); FAILED_PRECONDITION for a
// BeladyPolicy without `next_uses`; INTERNAL if the policy offers a blob that is not
// evictable (a policy bug). Thread safety: a replay uses only its arguments; `policy` must
// not be shared with a concurrent replay.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/sim/replay_trace.h"

namespace strata::tiering::sim {

// What BlobTraits::session_hint carries in a replay.
enum class SessionHints {
  kNone,     // 0: the policy learns nothing about sessions
  kSession,  // the request's session id with bit 63 set, so that it is never a block id
             // (synthetic traces; 0 where the trace has none)
  kRoot,     // the request's first block, as the node engine passes its root blob
};

struct ReplayOptions {
  uint64_t capacity_bytes = 0;
  uint64_t block_bytes = 1;
  SessionHints session_hints = SessionHints::kSession;
};

struct ReplayResult {
  uint64_t requests = 0;
  uint64_t block_reads = 0;
  uint64_t block_hits = 0;
  uint64_t token_reads = 0;
  uint64_t token_hits = 0;
  uint64_t evictions = 0;
  uint64_t not_cached_blocks = 0;

  double block_hit_rate() const {
    return block_reads == 0 ? 0.0 : static_cast<double>(block_hits) / block_reads;
  }
  double token_hit_rate() const {
    return token_reads == 0 ? 0.0 : static_cast<double>(token_hits) / token_reads;
  }
};

// Replays `trace` through `policy` (which should be fresh). A BeladyPolicy is told each
// block's next use from `next_uses` (ComputeNextUses(trace)); other policies ignore it.
absl::StatusOr<ReplayResult> ReplayPrefixCache(const ReplayTrace& trace,
                                               const ReplayOptions& options, EvictionPolicy* policy,
                                               const NextUses* next_uses = nullptr);

}  // namespace strata::tiering::sim
