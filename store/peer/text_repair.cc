// TextRepairer (text_repair.h).
#include "strata/store/peer/text_repair.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "glog/logging.h"

#include "strata/store/cluster/placement.h"

namespace strata::store::peer {
namespace {

// The ids placement ranks (serving and joining), sorted.
std::vector<std::string> PlacedIds(const cluster::Placement& placement) {
  std::vector<std::string> ids;
  for (const auto& node : placement.nodes()) ids.push_back(node.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The ids of the first `n` nodes of `placement` for `key`, best first.
std::vector<std::string> Top(const cluster::Placement& placement, const radix::PrefixHash& key,
                             size_t n) {
  std::vector<std::string> ids;
  for (const int r : placement.Ranked(key, n)) ids.push_back(placement.nodes()[r].id);
  return ids;
}

}  // namespace

TextRepairer::TextRepairer(core::NodeEngine* engine,
                           std::function<std::vector<cluster::NodeRecord>()> members,
                           TextRepairOptions options)
    : engine_(engine),
      members_(std::move(members)),
      options_(std::move(options)),
      clients_(options_.token) {
  thread_ = std::thread([this] { Run(); });
}

TextRepairer::~TextRepairer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

TextRepairStats TextRepairer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

bool TextRepairer::Stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void TextRepairer::Run() {
  std::optional<std::vector<cluster::NodeRecord>> acted;  // the view last acted on
  // A pass with failed copies is done again (from the same view acted on) after a while,
  // twice as long after each failed pass, until one succeeds.
  absl::Time retry_at = absl::InfiniteFuture();
  absl::Duration backoff = options_.retry_after;
  for (bool first = true;; first = false) {
    if (!first) {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.interval);
      if (stopping_) return;
    }
    std::vector<cluster::NodeRecord> now = members_();
    if (PlacementOf(now).empty()) continue;  // no view yet (etcd away at start)
    if (!acted.has_value()) {
      acted = std::move(now);  // the first view: what the writers placed by
      continue;
    }
    if (PlacedIds(PlacementOf(*acted)) == PlacedIds(PlacementOf(now)) && absl::Now() < retry_at) {
      continue;
    }
    if (Repair(*acted, now) > 0) {
      retry_at = absl::Now() + backoff;
      backoff = std::min(2 * backoff, kMaxRetryWait);
      continue;  // `acted` kept: the next pass copies what this one could not
    }
    retry_at = absl::InfiniteFuture();
    backoff = options_.retry_after;
    acted = std::move(now);
  }
}

uint64_t TextRepairer::Repair(const std::vector<cluster::NodeRecord>& before,
                              const std::vector<cluster::NodeRecord>& now) {
  const cluster::Placement old_placement = PlacementOf(before);
  const cluster::Placement placement = PlacementOf(now);
  const size_t r = options_.replicas;
  absl::flat_hash_map<std::string, std::string> address;
  for (const cluster::NodeRecord& n : now) address[n.id] = n.grpc_address;
  const std::vector<std::string> ids = PlacedIds(placement);
  const absl::flat_hash_set<std::string> members(ids.begin(), ids.end());

  const std::vector<core::BlobInfo> blobs = ListAll(*engine_);
  TextRepairStats pass;
  pass.passes = 1;
  for (const auto& [root, chain] : SegmentsOf(blobs)) {
    if (Stopping()) break;
    absl::StatusOr<core::BlobInfo> first = engine_->Stat(root, /*with_tokens=*/true);
    absl::StatusOr<radix::PrefixHash> key = first.ok() ? PlacementKey(*first) : first.status();
    if (!key.ok()) continue;  // gone meanwhile
    const std::vector<std::string> old_top = Top(old_placement, *key, r);
    const std::vector<std::string> ranking = Top(placement, *key, placement.nodes().size());
    std::vector<std::string> targets;
    for (size_t i = 0; i < std::min(r, ranking.size()); ++i) {
      const std::string& id = ranking[i];
      if (id != options_.self_id &&
          std::find(old_top.begin(), old_top.end(), id) == old_top.end()) {
        targets.push_back(id);
      }
    }
    if (targets.empty()) continue;
    // The copier: the best-ranked surviving old holder; none left: every node holding it.
    std::string copier = options_.self_id;
    for (const std::string& id : ranking) {
      if (members.contains(id) && std::find(old_top.begin(), old_top.end(), id) != old_top.end()) {
        copier = id;
        break;
      }
    }
    if (copier != options_.self_id) continue;
    bool failed = false;
    for (const std::string& target : targets) {
      absl::StatusOr<Client*> client = clients_.For(address[target]);
      absl::Status status = client.status();
      for (const core::BlobInfo* blob : chain) {
        if (!status.ok()) break;
        absl::StatusOr<core::BlobInfo> own = engine_->Stat(blob->key, /*with_tokens=*/true);
        absl::StatusOr<radix::Namespace> ns =
            radix::Namespace::Create(blob->tenant, blob->model, blob->layout);
        if (!own.ok() || !ns.ok()) {
          status = own.ok() ? ns.status() : own.status();
          break;
        }
        std::optional<Parent> parent;
        std::optional<SegmentStart> start;
        if (own->parent.has_value()) {
          parent = Parent{own->parent->key, own->parent->pages};
        } else if (own->first_page > 0) {
          start = SegmentStart{own->start_hash, own->first_page};
        }
        absl::StatusOr<WriteResult> written =
            (*client)->WriteText(*ns, parent, start, own->tokens, own->chunk_checksums,
                                 CallOptions::WithTimeout(absl::Seconds(30)));
        if (!written.ok()) {
          status = written.status();
          break;
        }
        ++pass.text_puts;
        pass.existing += written->existed;
      }
      if (!status.ok()) {
        LOG_EVERY_N(WARNING, 20) << "text repair of segment " << root.ToHex() << " to node "
                                 << target << ": " << status;
        failed = true;
      }
    }
    ++(failed ? pass.failures : pass.segments);
  }
  LOG(INFO) << "text repair (" << before.size() << " -> " << now.size()
            << " members): " << pass.segments << " segment(s) copied, " << pass.text_puts
            << " TEXT put(s) (" << pass.existing << " there already), " << pass.failures
            << " failed";
  absl::MutexLock lock(&mu_);
  stats_.passes += pass.passes;
  stats_.segments += pass.segments;
  stats_.text_puts += pass.text_puts;
  stats_.existing += pass.existing;
  stats_.failures += pass.failures;
  return pass.failures;
}

}  // namespace strata::store::peer
