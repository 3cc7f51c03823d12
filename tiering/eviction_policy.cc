#include "strata/tiering/eviction_policy.h"

#include "absl/strings/str_cat.h"

#include "strata/tiering/branch_lru_policy.h"
#include "strata/tiering/gdsf_policy.h"
#include "strata/tiering/lru_policy.h"

namespace strata::tiering {

absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(std::string_view name) {
  if (name == "lru") return std::make_unique<LruPolicy>();
  if (name == "branch-lru") return std::make_unique<BranchLruPolicy>();
  if (name == "gdsf") return std::make_unique<GdsfPolicy>();
  return absl::InvalidArgumentError(absl::StrCat("unknown eviction policy \"",
                                                 absl::string_view(name.data(), name.size()),
                                                 "\" (known: lru, branch-lru, gdsf)"));
}

}  // namespace strata::tiering
