// Tier: where a blob's bytes, or only its tokens, live. The one tier enum of strata: the
// tiers of `tiering` (their kind()), the engine's record states, the client's match
// segments and the statistics all use it, and its numbers are the wire's (strata.v1.Tier;
// the one converter is strata/proto/report_convert.h).
//
//   value  name    holds
//   -----  ------  --------------------------------------------------------------
//   1      "hbm"   GPU memory of the node (no node has one yet)
//   2      "dram"  the node's DRAM arena: reads are served from it
//   3      "ssd"   the node's SSD tier: a read promotes the blob into DRAM first
//   4      "text"  KV bytes gone, tokens kept: not readable, rebuildable
//
// Listed fastest first: a smaller value is a faster tier. kHbm, kDram and kSsd are byte
// tiers (a blob may be in DRAM and on SSD at once); kText is alone.
//
// Value type and pure functions; thread-safe. Errors: none.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace strata::report {

enum class Tier : int {
  kHbm = 1,
  kDram = 2,
  kSsd = 3,
  kText = 4,
};

// Every tier, fastest first.
inline constexpr std::array<Tier, 4> kTiers = {Tier::kHbm, Tier::kDram, Tier::kSsd, Tier::kText};

// "hbm", "dram", "ssd", "text"; "unknown" for a value outside the enum.
std::string_view TierName(Tier tier);
// The tier of a name TierName returns; nullopt for any other string (case matters).
std::optional<Tier> TierFromName(std::string_view name);
// Whether `value` is the number of a tier (1..4).
constexpr bool IsTierValue(int value) {
  return value >= static_cast<int>(Tier::kHbm) && value <= static_cast<int>(Tier::kText);
}
// kHbm, kDram or kSsd: a tier that holds KV bytes.
constexpr bool IsByteTier(Tier tier) {
  return tier == Tier::kHbm || tier == Tier::kDram || tier == Tier::kSsd;
}

}  // namespace strata::report
