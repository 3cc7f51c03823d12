// RunSweep: replay one trace through several policies at several capacities, and the table
// strata-policy-replay prints.
//
// Capacities are fractions of the trace's working set (its distinct blocks), rounded to
// whole blocks (at least one). Every (policy, capacity) replay starts from an empty tier
// with a fresh policy from MakeEvictionPolicy, or a BeladyPolicy for "belady". "lru" and
// "belady" are always replayed (added if missing) because the table reports each other
// policy's "gap closed" = (policy - lru) / (belady - lru) of the hit rate; where belady and
// lru are within 1e-9 of each other the gap is shown as "-".
//
// Errors: INVALID_ARGUMENT for an empty policy list entry, an unknown policy name, a
// capacity outside (0, 1], or an invalid trace (ValidateTrace); otherwise whatever
// ReplayPrefixCache returns. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/tiering/sim/prefix_cache_replay.h"
#include "strata/tiering/sim/replay_trace.h"

namespace strata::tiering::sim {

struct SweepOptions {
  std::vector<std::string> policies = {"lru", "branch-lru"};
  std::vector<double> capacities = {0.01, 0.02, 0.05, 0.10, 0.20, 0.40, 0.60, 0.80};
  uint64_t block_bytes = 1;
  SessionHints session_hints = SessionHints::kSession;
};

struct SweepRow {
  double capacity = 0;                // fraction of the working set
  uint64_t capacity_blocks = 0;       // what was replayed
  std::vector<ReplayResult> results;  // one per SweepTable::policies entry
};

struct SweepTable {
  std::string trace_name;
  TraceSummary summary;
  std::vector<std::string> policies;  // "lru" first, "belady" last
  std::vector<SweepRow> rows;
};

absl::StatusOr<SweepTable> RunSweep(const ReplayTrace& trace, const SweepOptions& options);

// The table as text: a header line with the trace's counts, then one row per capacity with
// each policy's hit rate in percent and the gap closed by each policy other than lru and
// belady. `tokens` selects token-weighted instead of block hit rates.
std::string FormatSweep(const SweepTable& table, bool tokens);

}  // namespace strata::tiering::sim
