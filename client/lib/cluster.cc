// ParseClusterUrl and ReadClusterMembers (strata/cluster.h): etcd through store/cluster.
#include "strata/cluster.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "strata/base/status_macros.h"
#include "strata/store/cluster/etcd_client.h"
#include "strata/store/cluster/membership.h"
#include "strata/store/cluster/node_record.h"

namespace strata {
namespace {

constexpr char kScheme[] = "etcd://";
constexpr size_t kSchemeBytes = sizeof(kScheme) - 1;

}  // namespace

absl::StatusOr<ClusterUrl> ParseClusterUrl(std::string_view url) {
  const std::string text(url);
  if (!absl::StartsWith(text, kScheme)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster URL \"", text, "\": expected etcd://HOST:PORT[,HOST:PORT...][/NAME]"));
  }
  std::string rest = text.substr(kSchemeBytes);
  ClusterUrl parsed;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    parsed.name = rest.substr(slash + 1);
    rest.resize(slash);
    if (!store::cluster::IsClusterName(parsed.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cluster URL \"", text, "\": the name must be 1 to 64 letters, digits, '.', '_' or '-'"));
    }
  }
  parsed.etcd_endpoints = absl::StrSplit(rest, ',', absl::SkipEmpty());
  if (parsed.etcd_endpoints.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cluster URL \"", text, "\": no etcd endpoint"));
  }
  if (absl::Status endpoints = store::cluster::CheckEtcdEndpoints(parsed.etcd_endpoints);
      !endpoints.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster URL \"", text, "\": ", endpoints.message()));
  }
  return parsed;
}

absl::StatusOr<ClusterMembers> ReadClusterMembers(const ClusterUrl& url, absl::Duration timeout) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<store::cluster::EtcdClient> etcd,
                          store::cluster::EtcdClient::Create(
                              {.endpoints = url.etcd_endpoints, .call_timeout = timeout}));
  STRATA_ASSIGN_OR_RETURN(store::cluster::MembersRead read,
                          store::cluster::ReadMembers(*etcd, url.name));
  ClusterMembers members{
      .name = url.name, .etcd_revision = read.revision, .undecodable = read.undecodable};
  for (const auto& [key, record] : read.nodes) {
    members.nodes.push_back(ClusterNode{.id = record.id,
                                        .state = std::string(NodeStateName(record.state)),
                                        .grpc_address = record.grpc_address,
                                        .dataplane_address = record.dataplane_address,
                                        .http_address = record.http_address,
                                        .version = record.version,
                                        .hbm_bytes = record.hbm_bytes,
                                        .dram_bytes = record.dram_bytes,
                                        .ssd_bytes = record.ssd_bytes,
                                        .started = absl::FromUnixMillis(record.started_ms)});
  }
  std::sort(members.nodes.begin(), members.nodes.end(),
            [](const ClusterNode& a, const ClusterNode& b) { return a.id < b.id; });
  return members;
}

}  // namespace strata
