// What the commands that work across a cluster share (`strata --cluster URL match|get|put`):
// the --segment-pages flag and a ClusterClient over --cluster (or $STRATA_CLUSTER) with the
// command's client options for every node.
#pragma once

#include <memory>

#include "absl/status/statusor.h"

#include "client/cli/argument_parser.h"
#include "client/cli/command.h"
#include "strata/cluster_client.h"

namespace strata::cli {

FlagSpec SegmentPagesFlag();

// A usage error (exit 2) for a bad --segment-pages or --cluster URL; etcd not answering is
// UNAVAILABLE (exit 3). REQUIRES: ctx.cluster_url() is set.
absl::StatusOr<std::unique_ptr<ClusterClient>> ConnectCluster(const CommandContext& ctx,
                                                              const ParsedArgs& args);

}  // namespace strata::cli
