#include "strata/report/tier.h"

namespace strata::report {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kHbm:
      return "hbm";
    case Tier::kDram:
      return "dram";
    case Tier::kSsd:
      return "ssd";
    case Tier::kText:
      return "text";
  }
  return "unknown";
}

std::optional<Tier> TierFromName(std::string_view name) {
  for (const Tier tier : kTiers) {
    if (TierName(tier) == name) return tier;
  }
  return std::nullopt;
}

}  // namespace strata::report
