// KvStore: what a worker does against strata — look a context up, read the cached prefix,
// write the pages after it — the same for one node (strata::Client) and for a cluster
// (strata::ClusterClient), so the tools (strata-demo, strata-replay) run against either.
//
// A Lookup is a cluster lookup (ClusterMatch: the match with the node of each segment); for
// one node its owners are "" and it reads as Client::Read. Write takes the sequence from
// page 0 and writes pages [first_page, end): one blob on a node, pieces split at segment
// boundaries on a cluster (their WriteResult: existed when every piece did, indexed_pages
// summed, the key of the last piece).
//
// Thread-safe as the clients are. Errors: those of the client underneath.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/client.h"
#include "strata/cluster_client.h"

namespace strata::tools {

class KvStore {
 public:
  using Lookup = ClusterMatch;

  // REQUIRES: the client outlives the store.
  static std::unique_ptr<KvStore> OfNode(Client* client);
  static std::unique_ptr<KvStore> OfCluster(ClusterClient* cluster);
  virtual ~KvStore() = default;

  virtual absl::StatusOr<Lookup> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                       LookupPhase phase, const CallOptions& call) = 0;
  // Pages [0, pages) of `lookup` into `destination` (radix::BlobLayout of `pages` pages).
  virtual absl::Status Read(const Namespace& ns, const Lookup& lookup, uint32_t pages,
                            const MemoryDescriptor& destination, const CallOptions& call) = 0;
  // Sequence pages [first_page, tokens.size() / page_tokens); `parent` the blob holding page
  // first_page - 1 (from the lookup) when first_page > 0.
  virtual absl::StatusOr<WriteResult> Write(const Namespace& ns, absl::Span<const TokenId> tokens,
                                            uint32_t first_page, const MemoryDescriptor& source,
                                            const std::optional<Parent>& parent,
                                            const CallOptions& call) = 0;
};

// The blob of `lookup` holding page `pages` - 1 (what a write from `pages` continues), or
// none for pages 0. REQUIRES: pages <= lookup.match.matched_pages.
std::optional<Parent> ParentAt(const KvStore::Lookup& lookup, uint32_t pages);

}  // namespace strata::tools
