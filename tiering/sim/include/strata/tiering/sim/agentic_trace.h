// A seeded generator of agentic request traces for the policy replay.
//
// Sessions (agent runs, coding assistants) arrive as a Poisson process. Each session picks
// a shared system prompt (tool definitions; Zipf popularity, so a few prompts are read by
// most sessions) and then runs turns. Every turn sends the whole context so far plus newly
// appended blocks (the previous output, tool results, the next user message): the previous
// request is a prefix of the next one, which is where the reuse comes from. Between turns:
//   * think gaps (the model and tools working; exponential, mean think_s), or with
//     probability idle_probability a long idle gap (the user is away; mean idle_s);
//   * with probability branch_probability the turn forks from an earlier turn boundary
//     (an edit, a retry): the context is cut back there; the old continuation is never
//     read again;
//   * when the context is longer than compact_blocks, the session is compacted: its history
//     is replaced by its system prompt plus summary_blocks fresh blocks; the old chain is
//     never read again.
// Turns per session are log-normal (median turns_median, shape turns_sigma), so most
// sessions are short and a few run for hundreds of turns. A block is `block_tokens` tokens;
// every block is full. Block ids are fresh integers (prompts first), so equal ids are equal
// prefixes and each block has one parent. Requests are ordered by arrival time; each keeps
// its session id (1-based).
//
// The defaults resemble agent traffic (prompts of 2-16 K tokens, ~1.3 K tokens appended per
// turn, compaction past 64 K tokens, a few hundred sessions live at once); they were fixed
// before the policy comparisons in tiering/sim/README.md and not tuned to them. Every one
// is a flag of strata-policy-replay. Same options and seed, same
// trace (given the same standard library). Pure function; thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

#include "strata/tiering/sim/replay_trace.h"

namespace strata::tiering::sim {

struct AgenticTraceOptions {
  uint64_t seed = 1;
  uint32_t sessions = 3000;
  double session_interarrival_s = 4.0;  // mean gap between new sessions (exponential)
  uint32_t system_prompts = 16;         // distinct shared system prompts
  uint32_t system_prompt_blocks_min = 4;
  uint32_t system_prompt_blocks_max = 32;  // sizes uniform in [min, max]
  double system_prompt_zipf = 1.0;         // prompt k (1-based) is chosen with weight 1/k^zipf
  double turns_median = 8;                 // turns per session: ceil(log-normal), >= 1
  double turns_sigma = 1.0;
  uint32_t turns_max = 300;
  double append_blocks_mean = 2.0;  // blocks appended per turn: 1 + floor(Exp(mean))
  double think_s = 10;              // mean gap between turns (exponential)
  double idle_probability = 0.1;    // chance that a gap is an idle gap instead
  double idle_s = 1200;             // mean idle gap (exponential)
  double branch_probability = 0.03;
  uint32_t compact_blocks = 128;  // compact when the context exceeds this many blocks
  uint32_t summary_blocks = 8;
  uint32_t block_tokens = 512;
};

// INVALID_ARGUMENT for options out of range: sessions, system_prompts, block_tokens or
// system_prompt_blocks_min 0; min > max; a mean, median or sigma not > 0 (sigma may be 0);
// a probability outside [0, 1]; compact_blocks <= system_prompt_blocks_max + summary_blocks
// (a compacted session would compact again at once).
absl::StatusOr<ReplayTrace> GenerateAgenticTrace(const AgenticTraceOptions& options);

}  // namespace strata::tiering::sim
