// KvStore over a Client or a ClusterClient (kv_store.h).
#include "client/tools/kv_store.h"

#include <string>
#include <vector>

namespace strata::tools {
namespace {

class NodeStore final : public KvStore {
 public:
  explicit NodeStore(Client* client) : client_(client) {}

  absl::StatusOr<Lookup> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                               LookupPhase phase, const CallOptions& call) override {
    absl::StatusOr<MatchResult> m = client_->Match(ns, tokens, phase, call);
    if (!m.ok()) return m.status();
    Lookup lookup;
    lookup.owners.assign(m->segments.size(), "");
    lookup.match = *std::move(m);
    return lookup;
  }

  absl::Status Read(const Namespace& ns, const Lookup& lookup, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call) override {
    return client_->Read(ns, lookup.match.segments, pages, destination, call);
  }

  absl::StatusOr<WriteResult> Write(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    uint32_t first_page, const MemoryDescriptor& source,
                                    const std::optional<Parent>& parent,
                                    const CallOptions& call) override {
    return client_->Write(ns, first_page > 0 ? parent : std::nullopt,
                          tokens.subspan(size_t{first_page} * ns.layout().page_tokens), source,
                          call);
  }

 private:
  Client* const client_;
};

class ClusterStore final : public KvStore {
 public:
  explicit ClusterStore(ClusterClient* cluster) : cluster_(cluster) {}

  absl::StatusOr<Lookup> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                               LookupPhase phase, const CallOptions& call) override {
    return cluster_->Match(ns, tokens, phase, call);
  }

  absl::Status Read(const Namespace& ns, const Lookup& lookup, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call) override {
    return cluster_->Read(ns, lookup, pages, destination, call);
  }

  absl::StatusOr<WriteResult> Write(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    uint32_t first_page, const MemoryDescriptor& source,
                                    const std::optional<Parent>& parent,
                                    const CallOptions& call) override {
    absl::StatusOr<ClusterWriteResult> pieces =
        cluster_->Write(ns, tokens, first_page, source, parent, call);
    if (!pieces.ok()) return pieces.status();
    WriteResult sum;
    sum.existed = true;
    for (const WriteResult& piece : pieces->pieces) {
      sum.existed = sum.existed && piece.existed;
      sum.indexed_pages += piece.indexed_pages;
      sum.key = piece.key;
    }
    return sum;
  }

 private:
  ClusterClient* const cluster_;
};

}  // namespace

std::unique_ptr<KvStore> KvStore::OfNode(Client* client) {
  return std::make_unique<NodeStore>(client);
}

std::unique_ptr<KvStore> KvStore::OfCluster(ClusterClient* cluster) {
  return std::make_unique<ClusterStore>(cluster);
}

std::optional<Parent> ParentAt(const KvStore::Lookup& lookup, uint32_t pages) {
  if (pages == 0) return std::nullopt;
  const Segment* last = nullptr;
  for (const Segment& segment : lookup.match.segments) {
    if (segment.seq_page_begin < pages) last = &segment;
  }
  if (last == nullptr) return std::nullopt;
  return Parent{last->blob, pages};
}

}  // namespace strata::tools
