// HotReplicator (hot_replicator.h).
#include "strata/store/peer/hot_replicator.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "glog/logging.h"

#include "strata/store/peer/segment_push.h"

namespace strata::store::peer {

HotReplicator::HotReplicator(core::NodeEngine* engine,
                             std::function<std::vector<cluster::NodeRecord>()> members,
                             HotReplicatorOptions options)
    : engine_(engine),
      members_(std::move(members)),
      options_(std::move(options)),
      clients_(options_.token) {
  thread_ = std::thread([this] { Run(); });
}

HotReplicator::~HotReplicator() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

HotReplicatorStats HotReplicator::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void HotReplicator::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.interval);
      if (stopping_) return;
    }
    for (const radix::BlobKey& key : engine_->TakeHotBlobs()) {
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) return;
      }
      Replicate(key);
    }
  }
}

void HotReplicator::Replicate(const radix::BlobKey& key) {
  auto fail = [&](const absl::Status& why) {
    LOG_EVERY_N(WARNING, 20) << "hot replica of blob " << key.ToHex() << ": " << why;
    absl::MutexLock lock(&mu_);
    ++stats_.failures;
  };
  // The blob and the blobs before it in its segment, first blob first.
  std::deque<core::BlobInfo> chain;
  absl::StatusOr<core::BlobInfo> blob = engine_->Stat(key);
  for (int steps = 0; blob.ok(); ++steps) {
    chain.push_front(*blob);
    if (!blob->parent.has_value() || steps > 100000) break;
    blob = engine_->Stat(blob->parent->key);
  }
  if (!blob.ok()) return fail(blob.status());
  absl::StatusOr<core::BlobInfo> first = engine_->Stat(chain.front().key, /*with_tokens=*/true);
  absl::StatusOr<radix::PrefixHash> placement_key =
      first.ok() ? PlacementKey(*first) : first.status();
  if (!placement_key.ok()) return fail(placement_key.status());

  const std::vector<cluster::NodeRecord> members = members_();
  const cluster::Placement placement = PlacementOf(members);
  const std::vector<int> ranked = placement.Ranked(*placement_key, options_.copies);
  if (ranked.empty() || placement.nodes()[ranked[0]].id != options_.self_id) {
    absl::MutexLock lock(&mu_);
    ++stats_.not_owner;
    return;
  }
  absl::flat_hash_map<std::string, std::string> address;
  for (const cluster::NodeRecord& r : members) address[r.id] = r.grpc_address;
  const std::vector<core::BlobInfo> blobs(chain.begin(), chain.end());
  uint32_t holders = 1;
  for (size_t r = 1; r < ranked.size(); ++r) {
    absl::StatusOr<Client*> client = clients_.For(address[placement.nodes()[ranked[r]].id]);
    if (!client.ok()) {
      fail(client.status());
      continue;
    }
    const PushResult pushed =
        PushChain(*engine_, blobs, **client, CallOptions::WithTimeout(absl::Seconds(30)));
    {
      absl::MutexLock lock(&mu_);
      stats_.pushed_blobs += pushed.blobs;
      stats_.bytes += pushed.bytes;
    }
    if (!pushed.status.ok()) {
      fail(pushed.status);
      continue;
    }
    ++holders;
  }
  if (holders < 2) return;
  for (const core::BlobInfo& b : blobs) engine_->MarkReplicated(b.key, holders);
  absl::MutexLock lock(&mu_);
  ++stats_.blobs;
}

}  // namespace strata::store::peer
