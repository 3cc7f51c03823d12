// Hand-over of a leaving node's hot segments (hand_over.h).
#include "strata/store/peer/hand_over.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/cluster/placement.h"

namespace strata::store::peer {
namespace {

// One segment of this node: its first blob and the blobs below it, parents first.
struct HeldSegment {
  std::vector<const core::BlobInfo*> blobs;
  uint64_t hits = 0;
  absl::Time last_access = absl::InfinitePast();
  uint64_t bytes = 0;
  bool has_text = false;
};

// Every linked blob of the engine (List, page by page).
std::vector<core::BlobInfo> AllBlobs(core::NodeEngine& engine) {
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

// A blob's bytes, leased in the engine while the owner receives them.
absl::StatusOr<WriteResult> SendBlob(core::NodeEngine& engine, const radix::Namespace& ns,
                                     const core::BlobInfo& blob,
                                     const std::vector<radix::TokenId>& tokens,
                                     const std::optional<SegmentStart>& start, Client& owner,
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
    if (start.has_value()) {
      written = owner.Write(ns, *start, tokens, bytes, call);
    } else {
      std::optional<Parent> parent;
      if (blob.parent.has_value()) parent = Parent{blob.parent->key, blob.parent->pages};
      written = owner.Write(ns, parent, tokens, bytes, call);
    }
  }
  engine.Release(lease.lease_id).IgnoreError();  // it also expires
  return written;
}

}  // namespace

absl::StatusOr<HandOverReport> HandOverSegments(core::NodeEngine& engine,
                                                const std::vector<cluster::NodeRecord>& members,
                                                const HandOverOptions& options) {
  using cluster::NodeState;
  std::vector<cluster::NodeRecord> others;
  for (const cluster::NodeRecord& r : members) {
    if (r.id != options.self_id) others.push_back(r);
  }
  const cluster::Placement placement =
      cluster::Placement::FromView(others, {NodeState::kServing, NodeState::kJoining});
  absl::flat_hash_map<std::string, std::string> address;
  for (const cluster::NodeRecord& r : others) address[r.id] = r.grpc_address;

  // The segments: each blob under its first blob (parents are linked before children and
  // List names every linked blob; a blob whose parent is not linked is skipped).
  const std::vector<core::BlobInfo> blobs = AllBlobs(engine);
  absl::flat_hash_map<radix::BlobKey, const core::BlobInfo*> by_key;
  for (const core::BlobInfo& blob : blobs) by_key[blob.key] = &blob;
  std::map<radix::BlobKey, HeldSegment> segments;  // by the segment's first blob
  HandOverReport report;
  for (const core::BlobInfo& blob : blobs) {
    const core::BlobInfo* root = &blob;
    bool text = blob.tiers == std::vector<Tier>{Tier::kText};
    while (root != nullptr && root->parent.has_value()) {
      const auto it = by_key.find(root->parent->key);
      root = it == by_key.end() ? nullptr : it->second;
      if (root != nullptr) text = text || root->tiers == std::vector<Tier>{Tier::kText};
    }
    if (root == nullptr) continue;
    HeldSegment& segment = segments[root->key];
    if (text) {
      ++report.text_blobs;
      segment.has_text = true;
      continue;
    }
    segment.blobs.push_back(&blob);
    segment.hits += blob.hits;
    segment.last_access = std::max(segment.last_access, blob.last_access);
    segment.bytes += blob.bytes;
    report.held_bytes += blob.bytes;
  }
  std::vector<HeldSegment*> order;
  for (auto& [key, segment] : segments) {
    if (segment.blobs.empty()) continue;
    // Parents first: a child starts after its parent's first page.
    std::sort(segment.blobs.begin(), segment.blobs.end(),
              [](const core::BlobInfo* a, const core::BlobInfo* b) {
                return a->first_page < b->first_page;
              });
    if (segment.hits == 0) {
      ++report.cold_segments;
      continue;
    }
    order.push_back(&segment);
  }
  std::sort(order.begin(), order.end(), [](const HeldSegment* a, const HeldSegment* b) {
    return a->hits != b->hits ? a->hits > b->hits : a->last_access > b->last_access;
  });
  if (placement.empty()) {
    report.over_budget_segments = order.size();
    LOG(WARNING) << "hand-over: no serving node to hand " << order.size() << " segment(s) to";
    return report;
  }

  std::map<std::string, std::unique_ptr<Client>> clients;  // by node id
  uint64_t budget = options.max_bytes;
  for (const HeldSegment* segment : order) {
    if (segment->bytes > budget || absl::Now() >= options.deadline) {
      ++report.over_budget_segments;
      continue;
    }
    const core::BlobInfo& first = *segment->blobs.front();
    STRATA_ASSIGN_OR_RETURN(const radix::Namespace ns,
                            radix::Namespace::Create(first.tenant, first.model, first.layout));
    const uint32_t page_tokens = first.layout.page_tokens;
    absl::StatusOr<core::BlobInfo> with_tokens = engine.Stat(first.key, /*with_tokens=*/true);
    if (!with_tokens.ok() || with_tokens->tokens.size() < page_tokens) {
      ++report.failures;
      continue;
    }
    // Placed by the hash through the segment's first page (ClusterClient's placement).
    const radix::PrefixHash key = radix::PrefixHashAt(
        first.start_hash, absl::MakeConstSpan(with_tokens->tokens).first(page_tokens), page_tokens);
    const std::string owner = placement.nodes()[placement.Owner(key)].id;
    std::unique_ptr<Client>& client = clients[owner];
    if (client == nullptr) {
      ClientOptions o;
      o.node = address[owner];
      o.token = options.token;
      o.wait_for_node = false;
      absl::StatusOr<std::unique_ptr<Client>> made = Client::Connect(o);
      if (!made.ok()) {
        LOG(WARNING) << "hand-over: node " << owner << " at " << o.node << ": " << made.status();
        ++report.failures;
        continue;
      }
      client = std::move(*made);
    }
    const CallOptions call{std::min(options.deadline, absl::Now() + absl::Seconds(30))};
    absl::Status failed = absl::OkStatus();
    uint64_t sent = 0, existing = 0;
    for (const core::BlobInfo* blob : segment->blobs) {
      absl::StatusOr<core::BlobInfo> own = engine.Stat(blob->key, /*with_tokens=*/true);
      if (!own.ok()) {
        failed = own.status();
        break;
      }
      std::optional<SegmentStart> start;
      if (!blob->parent.has_value() && blob->first_page > 0) {
        start = SegmentStart{blob->start_hash, blob->first_page};
      }
      absl::StatusOr<WriteResult> written =
          SendBlob(engine, ns, *blob, own->tokens, start, *client, call);
      if (!written.ok()) {
        failed = written.status();
        break;
      }
      if (written->existed) {
        ++existing;
      } else {
        sent += blob->bytes;
      }
    }
    report.bytes += sent;  // moved, even when the segment failed after them
    if (!failed.ok()) {
      LOG(WARNING) << "hand-over of segment " << first.key.ToHex() << " to node " << owner << ": "
                   << failed;
      ++report.failures;
      continue;
    }
    budget -= segment->bytes;
    ++report.segments;
    report.blobs += segment->blobs.size();
    report.blobs_existing += existing;
  }
  LOG(INFO) << "hand-over: " << report.segments << " segment(s), " << report.blobs << " blob(s), "
            << report.bytes << " bytes sent; " << report.cold_segments << " cold and "
            << report.over_budget_segments << " over budget left, " << report.failures << " failed";
  return report;
}

}  // namespace strata::store::peer
