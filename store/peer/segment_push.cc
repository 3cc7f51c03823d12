// PushChain, PlacementKey, PlacementOf, PeerClients (segment_push.h).
#include "strata/store/peer/segment_push.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"

namespace strata::store::peer {
namespace {

// One blob's bytes, leased in the engine while the peer receives them.
absl::StatusOr<WriteResult> SendBlob(core::NodeEngine& engine, const radix::Namespace& ns,
                                     const core::BlobInfo& blob,
                                     const std::vector<radix::TokenId>& tokens, Client& to,
                                     const CallOptions& call) {
  const core::ReadRange range{.blob = blob.key,
                              .first_page = 0,
                              .num_pages = blob.pages,
                              .layer_begin = 0,
                              .layer_end = blob.layout.num_layers};
  STRATA_ASSIGN_OR_RETURN(const core::ReadReply lease, engine.Read(ns, {&range, 1}));
  absl::StatusOr<core::HeldSpan> held = engine.ReadSource(lease.lease_id, blob.key, 0, blob.bytes);
  absl::StatusOr<WriteResult> written = absl::CancelledError("not sent");
  if (!held.ok()) {
    written = held.status();
  } else {
    const MemoryDescriptor bytes = MemoryDescriptor::Host(held->data(), held->size());
    if (!blob.parent.has_value() && blob.first_page > 0) {
      written = to.Write(ns, SegmentStart{blob.start_hash, blob.first_page}, tokens, bytes, call);
    } else {
      std::optional<Parent> parent;
      if (blob.parent.has_value()) parent = Parent{blob.parent->key, blob.parent->pages};
      written = to.Write(ns, parent, tokens, bytes, call);
    }
  }
  engine.Release(lease.lease_id).IgnoreError();  // it also expires
  return written;
}

}  // namespace

PushResult PushChain(core::NodeEngine& engine, absl::Span<const core::BlobInfo> chain, Client& to,
                     const CallOptions& call) {
  PushResult result;
  for (const core::BlobInfo& blob : chain) {
    absl::StatusOr<radix::Namespace> ns =
        radix::Namespace::Create(blob.tenant, blob.model, blob.layout);
    absl::StatusOr<core::BlobInfo> own = engine.Stat(blob.key, /*with_tokens=*/true);
    if (!ns.ok() || !own.ok()) {
      result.status = ns.ok() ? own.status() : ns.status();
      return result;
    }
    absl::StatusOr<WriteResult> written = SendBlob(engine, *ns, blob, own->tokens, to, call);
    if (!written.ok()) {
      result.status = written.status();
      return result;
    }
    ++result.blobs;
    if (written->existed) {
      ++result.existing;
    } else {
      result.bytes += blob.bytes;
    }
  }
  return result;
}

absl::StatusOr<radix::PrefixHash> PlacementKey(const core::BlobInfo& first) {
  const uint32_t page_tokens = first.layout.page_tokens;
  if (page_tokens == 0 || first.tokens.size() < page_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("blob ", first.key.ToHex(), ": no whole first page of tokens"));
  }
  return radix::PrefixHashAt(first.start_hash, absl::MakeConstSpan(first.tokens).first(page_tokens),
                             page_tokens);
}

std::vector<core::BlobInfo> ListAll(core::NodeEngine& engine) {
  std::vector<core::BlobInfo> blobs;
  core::ListRequest request;
  request.limit = 1000;
  for (;;) {
    absl::StatusOr<core::ListReply> page = engine.List(request);
    if (!page.ok()) break;  // a page token gone stale: what was listed is enough
    for (core::BlobInfo& blob : page->blobs) blobs.push_back(std::move(blob));
    if (page->next_page_token.empty()) break;
    request.page_token = page->next_page_token;
  }
  return blobs;
}

std::map<radix::BlobKey, std::vector<const core::BlobInfo*>> SegmentsOf(
    const std::vector<core::BlobInfo>& blobs) {
  absl::flat_hash_map<radix::BlobKey, const core::BlobInfo*> by_key;
  for (const core::BlobInfo& blob : blobs) by_key[blob.key] = &blob;
  std::map<radix::BlobKey, std::vector<const core::BlobInfo*>> segments;
  for (const core::BlobInfo& blob : blobs) {
    const core::BlobInfo* root = &blob;
    while (root != nullptr && root->parent.has_value()) {
      const auto it = by_key.find(root->parent->key);
      root = it == by_key.end() ? nullptr : it->second;
    }
    if (root != nullptr) segments[root->key].push_back(&blob);
  }
  for (auto& [key, chain] : segments) {
    // Parents first: a child starts after its parent's first page.
    std::sort(chain.begin(), chain.end(), [](const core::BlobInfo* a, const core::BlobInfo* b) {
      return a->first_page < b->first_page;
    });
  }
  return segments;
}

cluster::Placement PlacementOf(const std::vector<cluster::NodeRecord>& members) {
  return cluster::Placement::FromView(members,
                                      {cluster::NodeState::kServing, cluster::NodeState::kJoining});
}

absl::StatusOr<Client*> PeerClients::For(const std::string& address) {
  std::unique_ptr<Client>& client = clients_[address];
  if (client == nullptr) {
    ClientOptions options;
    options.node = address;
    options.token = token_;
    options.wait_for_node = false;
    STRATA_ASSIGN_OR_RETURN(client, Client::Connect(options));
  }
  return client.get();
}

}  // namespace strata::store::peer
