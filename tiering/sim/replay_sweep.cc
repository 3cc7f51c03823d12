#include "strata/tiering/sim/replay_sweep.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "strata/base/status_macros.h"
#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/sim/belady_policy.h"

namespace strata::tiering::sim {
namespace {

absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakePolicy(const std::string& name) {
  if (name == "belady") return std::make_unique<BeladyPolicy>();
  return MakeEvictionPolicy(name);
}

double Rate(const ReplayResult& result, bool tokens) {
  return tokens ? result.token_hit_rate() : result.block_hit_rate();
}

}  // namespace

absl::StatusOr<SweepTable> RunSweep(const ReplayTrace& trace, const SweepOptions& options) {
  STRATA_RETURN_IF_ERROR(ValidateTrace(trace));
  SweepTable table;
  table.trace_name = trace.name;
  table.summary = Summarize(trace);
  table.policies.push_back("lru");
  for (const std::string& name : options.policies) {
    if (name.empty()) return absl::InvalidArgumentError("empty policy name");
    if (name == "lru" || name == "belady") continue;
    if (std::find(table.policies.begin(), table.policies.end(), name) != table.policies.end()) {
      continue;
    }
    STRATA_RETURN_IF_ERROR(MakePolicy(name).status());
    table.policies.push_back(name);
  }
  table.policies.push_back("belady");
  for (const double capacity : options.capacities) {
    if (!(capacity > 0 && capacity <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("capacity ", capacity, " is not a fraction in (0, 1]"));
    }
  }

  const NextUses next_uses = ComputeNextUses(trace);
  for (const double capacity : options.capacities) {
    SweepRow row;
    row.capacity = capacity;
    row.capacity_blocks = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::llround(capacity * table.summary.distinct_blocks)));
    ReplayOptions replay;
    replay.block_bytes = options.block_bytes;
    replay.capacity_bytes = row.capacity_blocks * options.block_bytes;
    replay.session_hints = options.session_hints;
    for (const std::string& name : table.policies) {
      STRATA_ASSIGN_OR_RETURN(std::unique_ptr<EvictionPolicy> policy, MakePolicy(name));
      STRATA_ASSIGN_OR_RETURN(ReplayResult result,
                              ReplayPrefixCache(trace, replay, policy.get(), &next_uses));
      row.results.push_back(result);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string FormatSweep(const SweepTable& table, bool tokens) {
  const TraceSummary& s = table.summary;
  std::string out = absl::StrFormat(
      "trace %s: %d requests, %d block reads, %d distinct blocks (the working set), "
      "%d sessions; unbounded cache: %.3f%% of blocks, %.3f%% of tokens\n",
      table.trace_name, s.requests, s.block_reads, s.distinct_blocks, s.sessions,
      100 * s.unbounded_block_hit_rate, 100 * s.unbounded_token_hit_rate);
  absl::StrAppend(&out, tokens ? "token-weighted" : "block", " hit rate (%)\n");
  absl::StrAppendFormat(&out, "%9s %9s", "capacity", "blocks");
  for (const std::string& name : table.policies) absl::StrAppendFormat(&out, " %11s", name);
  const size_t first_other = 1;
  const size_t last_other = table.policies.size() - 1;  // belady
  for (size_t p = first_other; p < last_other; ++p) {
    absl::StrAppendFormat(&out, "  %s", absl::StrCat("gap closed (", table.policies[p], ")"));
  }
  absl::StrAppend(&out, "\n");
  for (const SweepRow& row : table.rows) {
    absl::StrAppendFormat(&out, "%8.4g%% %9d", 100 * row.capacity, row.capacity_blocks);
    for (const ReplayResult& result : row.results) {
      absl::StrAppendFormat(&out, " %11.3f", 100 * Rate(result, tokens));
    }
    const double lru = Rate(row.results.front(), tokens);
    const double belady = Rate(row.results.back(), tokens);
    for (size_t p = first_other; p < last_other; ++p) {
      const std::string header = absl::StrCat("gap closed (", table.policies[p], ")");
      const std::string gap =
          belady - lru > 1e-9
              ? absl::StrFormat("%.1f%%",
                                100 * (Rate(row.results[p], tokens) - lru) / (belady - lru))
              : std::string("-");
      absl::StrAppendFormat(&out, "  %*s", static_cast<int>(header.size()), gap);
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace strata::tiering::sim
