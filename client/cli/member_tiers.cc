// AskMemberTiers (member_tiers.h).
#include "client/cli/member_tiers.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "strata/client.h"

namespace strata::cli {

std::vector<std::optional<NodeTiers>> AskMemberTiers(const CommandContext& ctx,
                                                     const ClusterMembers& members) {
  std::vector<std::optional<NodeTiers>> tiers(members.nodes.size());
  std::vector<std::thread> asks;
  for (size_t i = 0; i < members.nodes.size(); ++i) {
    asks.emplace_back([&, i] {
      ClientOptions options = ctx.options();
      options.node = members.nodes[i].grpc_address;
      options.wait_for_node = false;
      absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
      if (!client.ok()) return;
      absl::StatusOr<NodeTiers> answer = (*client)->Tiers(
          CallOptions::WithTimeout(std::min(absl::Seconds(2), options.default_timeout)));
      if (answer.ok()) tiers[i] = *std::move(answer);
    });
  }
  for (std::thread& ask : asks) ask.join();
  return tiers;
}

}  // namespace strata::cli
