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
#include "strata/store/peer/segment_push.h"

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

}  // namespace

absl::StatusOr<HandOverReport> HandOverSegments(core::NodeEngine& engine,
                                                const std::vector<cluster::NodeRecord>& members,
                                                const HandOverOptions& options) {
  std::vector<cluster::NodeRecord> others;
  for (const cluster::NodeRecord& r : members) {
    if (r.id != options.self_id) others.push_back(r);
  }
  const cluster::Placement placement = PlacementOf(others);
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

  PeerClients clients(options.token);
  uint64_t budget = options.max_bytes;
  for (const HeldSegment* segment : order) {
    if (segment->bytes > budget || absl::Now() >= options.deadline) {
      ++report.over_budget_segments;
      continue;
    }
    const core::BlobInfo& first = *segment->blobs.front();
    absl::StatusOr<core::BlobInfo> with_tokens = engine.Stat(first.key, /*with_tokens=*/true);
    absl::StatusOr<radix::PrefixHash> key =
        with_tokens.ok() ? PlacementKey(*with_tokens) : with_tokens.status();
    if (!key.ok()) {
      ++report.failures;
      continue;
    }
    const std::string owner = placement.nodes()[placement.Owner(*key)].id;
    absl::StatusOr<Client*> client = clients.For(address[owner]);
    if (!client.ok()) {
      LOG(WARNING) << "hand-over: node " << owner << ": " << client.status();
      ++report.failures;
      continue;
    }
    std::vector<core::BlobInfo> chain;
    for (const core::BlobInfo* blob : segment->blobs) chain.push_back(*blob);
    const PushResult pushed =
        PushChain(engine, chain, **client,
                  CallOptions{std::min(options.deadline, absl::Now() + absl::Seconds(30))});
    report.bytes += pushed.bytes;  // moved, even when the segment failed after them
    if (!pushed.status.ok()) {
      LOG(WARNING) << "hand-over of segment " << first.key.ToHex() << " to node " << owner << ": "
                   << pushed.status;
      ++report.failures;
      continue;
    }
    budget -= segment->bytes;
    ++report.segments;
    report.blobs += pushed.blobs;
    report.blobs_existing += pushed.existing;
  }
  LOG(INFO) << "hand-over: " << report.segments << " segment(s), " << report.blobs << " blob(s), "
            << report.bytes << " bytes sent; " << report.cold_segments << " cold and "
            << report.over_budget_segments << " over budget left, " << report.failures << " failed";
  return report;
}

}  // namespace strata::store::peer
