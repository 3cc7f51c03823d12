// SegmentPagesFlag, ConnectCluster (cluster_connect.h).
#include "client/cli/cluster_connect.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "client/cli/exit_codes.h"
#include "strata/cluster.h"

namespace strata::cli {

FlagSpec SegmentPagesFlag() {
  return {.name = "segment-pages",
          .value_name = "N",
          .help =
              "with --cluster: pages per segment, as the cluster's writers use (default 256, "
              "strata/cluster_client.h)"};
}

absl::StatusOr<std::unique_ptr<ClusterClient>> ConnectCluster(const CommandContext& ctx,
                                                              const ParsedArgs& args) {
  ClusterClientOptions options;
  options.cluster_url = ctx.cluster_url();
  if (absl::StatusOr<ClusterUrl> url = ParseClusterUrl(options.cluster_url); !url.ok()) {
    return UsageError(std::string(url.status().message()));
  }
  options.node_options = ctx.options();
  if (const std::optional<std::string> s = args.Value("segment-pages"); s.has_value()) {
    if (!absl::SimpleAtoi(*s, &options.segment_pages) || options.segment_pages == 0) {
      return UsageError(absl::StrCat("--segment-pages: \"", *s, "\" is not a page count >= 1"));
    }
  }
  return ClusterClient::Connect(std::move(options));
}

}  // namespace strata::cli
