// Hand-over of a leaving node's hot segments (hand_over.h).
#include "strata/store/peer/hand_over.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
};

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

  // The segments; a blob with a TEXT blob above it (itself included) in its segment stays.
  const std::vector<core::BlobInfo> blobs = ListAll(engine);
  HandOverReport report;
  std::map<radix::BlobKey, HeldSegment> segments;  // by the segment's first blob
  std::vector<HeldSegment*> order;
  for (const auto& [root, chain] : SegmentsOf(blobs)) {
    HeldSegment& segment = segments[root];
    absl::flat_hash_set<radix::BlobKey> text;   // TEXT blobs and the blobs below them
    for (const core::BlobInfo* blob : chain) {  // parents first
      if (blob->tiers == std::vector<Tier>{Tier::kText} ||
          (blob->parent.has_value() && text.contains(blob->parent->key))) {
        text.insert(blob->key);
        ++report.text_blobs;
        continue;
      }
      segment.blobs.push_back(blob);
      segment.hits += blob->hits;
      segment.last_access = std::max(segment.last_access, blob->last_access);
      segment.bytes += blob->bytes;
      report.held_bytes += blob->bytes;
    }
    if (segment.blobs.empty()) continue;
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
