// What `strata cluster status` and `strata capacity --cluster` ask every member: its
// Admin.Tiers, all at once.
#pragma once

#include <optional>
#include <vector>

#include "client/cli/command.h"
#include "strata/cluster.h"
#include "strata/types.h"

namespace strata::cli {

// Every member's NodeTiers, asked in parallel, each within 2 s (or --timeout when shorter);
// nullopt for a node that did not answer (dead, cut off, slow). In the members' order.
std::vector<std::optional<NodeTiers>> AskMemberTiers(const CommandContext& ctx,
                                                     const ClusterMembers& members);

}  // namespace strata::cli
