// HbmCache (hbm_cache.h).
#include "strata/store/core/hbm_cache.h"

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "glog/logging.h"

namespace strata::store::core {
namespace {

// How often an idle admission thread looks at its queue without being woken.
constexpr absl::Duration kIdlePoll = absl::Seconds(1);
// Rounds of dropping copies an allocation tries before giving up.
constexpr int kAllocateRounds = 8;

}  // namespace

HbmCache::HbmCache(const HbmCacheOptions& options, const Deps& deps)
    : options_(options), deps_(deps) {
  CHECK(deps_.table != nullptr && deps_.ledger != nullptr && deps_.dram != nullptr &&
        deps_.records != nullptr && deps_.index_mu != nullptr);
  CHECK_GT(options_.admit_reads, 0u);
  CHECK(deps_.hbm == nullptr || deps_.ledger->hbm() == deps_.hbm)
      << "the ledger must count the same HBM tier";
}

HbmCache::~HbmCache() { Stop(); }

void HbmCache::CheckLock(const absl::Mutex& mu) const {
  DCHECK_EQ(&mu, deps_.index_mu) << "HbmCache called with a lock other than its index lock";
}

void HbmCache::Start() {
  if (!enabled()) return;
  CHECK(!thread_.joinable()) << "HbmCache started twice";
  thread_ = std::thread([this] { Loop(); });
}

void HbmCache::Stop() {
  {
    absl::MutexLock lock(&queue_mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

size_t HbmCache::queued() const {
  absl::MutexLock lock(&queue_mu_);
  return queue_.size();
}

uint64_t HbmCache::admission_failures() const {
  absl::MutexLock lock(&queue_mu_);
  return failures_;
}

bool HbmCache::Due(const BlobRecord& r, uint32_t admit_reads) {
  return r.state == BlobState::kLinked && r.in_dram() && !r.in_hbm() && !r.hbm_queued &&
         !r.hbm_filling && !r.moving && r.hits >= admit_reads;
}

void HbmCache::OnRead(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  if (!enabled()) return;
  if (record->in_hbm()) {
    deps_.hbm->counters().RecordHit();
    return;
  }
  deps_.hbm->counters().RecordMiss();
  if (!Due(*record, options_.admit_reads) || record->bytes > deps_.hbm->capacity()) return;
  {
    absl::MutexLock lock(&queue_mu_);
    if (queue_.size() >= options_.max_queued) return;  // behind: a later read queues it
    queue_.push_back(record->id);
  }
  record->hbm_queued = true;
}

uint64_t HbmCache::Free(const absl::Mutex& mu, uint64_t bytes, EvictReply* reply) {
  CheckLock(mu);
  if (!enabled()) return 0;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    deps_.ledger->hbm_policy().CollectVictims(
        bytes - freed,
        [&](tiering::BlobId id) {
          const BlobRecord* r = deps_.table->Find(id);
          return r != nullptr && TierLedger::HbmEvictable(*r);
        },
        &victims);
    bool progress = false;
    for (const tiering::BlobId id : victims) {
      BlobRecord* r = deps_.table->Find(id);
      if (r == nullptr || !TierLedger::HbmEvictable(*r)) continue;
      freed += r->hbm_extent->length;
      deps_.ledger->DetachHbm(r, /*demoted=*/true);
      ++reply->blobs_demoted;
      progress = true;
    }
    // Leaf-first: a parent may go once its children went, so collect again.
    if (!progress) break;
  }
  reply->bytes_freed += freed;
  return freed;
}

EvictReply HbmCache::Evict(absl::Mutex& mu, uint64_t bytes) {
  EvictReply reply;
  TimedMutexLock lock(&mu, deps_.lock_hold);
  Free(mu, bytes, &reply);
  return reply;
}

absl::StatusOr<tiering::Extent> HbmCache::Allocate(const absl::Mutex& mu, uint64_t bytes) {
  for (int round = 0; round < kAllocateRounds; ++round) {
    absl::StatusOr<tiering::Extent> extent = deps_.hbm->Allocate(bytes);
    if (extent.ok() || !absl::IsResourceExhausted(extent.status())) return extent;
    EvictReply dropped;
    if (Free(mu, bytes, &dropped) == 0) break;
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "no room for ", bytes, " bytes in the HBM tier: what it holds is leased or being filled"));
}

uint64_t HbmCache::AdmitQueued(absl::Mutex& mu) {
  CheckLock(mu);
  if (!enabled()) return 0;
  std::deque<tiering::BlobId> ids;
  {
    absl::MutexLock lock(&queue_mu_);
    ids.swap(queue_);
  }
  struct Fill {
    BlobRecord* record;
    tiering::Extent extent;
    absl::Span<const std::byte> source;
  };
  std::vector<Fill> fills;
  uint64_t failures = 0;
  uint64_t round = 0;
  while (!ids.empty() && round < options_.round_bytes) {
    BlobRecord* r = deps_.table->Find(ids.front());
    ids.pop_front();
    if (r == nullptr) continue;  // gone meanwhile
    r->hbm_queued = false;
    if (!Due(*r, 0)) continue;  // dropped, moved or admitted meanwhile
    absl::StatusOr<tiering::Extent> extent = Allocate(mu, r->bytes);
    if (!extent.ok()) {
      VLOG(1) << "HBM admission of " << r->key.ToHex() << ": " << extent.status();
      ++failures;
      continue;
    }
    r->hbm_filling = true;
    deps_.records->HoldRecord(r);  // its DRAM bytes stay while the lock is dropped
    fills.push_back(Fill{r, *extent, deps_.dram->Data(*r->extent).first(r->bytes)});
    round += r->bytes;
  }
  if (!ids.empty()) {
    // Past this round's bytes: first in the queue for the next.
    absl::MutexLock lock(&queue_mu_);
    queue_.insert(queue_.begin(), ids.begin(), ids.end());
  }
  std::vector<absl::Status> results;
  results.reserve(fills.size());
  if (!fills.empty()) {
    LockHoldPause pause;  // the copies run without the lock
    mu.Unlock();
    for (const Fill& f : fills) results.push_back(deps_.hbm->Write(f.extent, 0, f.source));
    mu.Lock();
  }
  uint64_t attached = 0;
  for (size_t i = 0; i < fills.size(); ++i) {
    BlobRecord* r = fills[i].record;
    r->hbm_filling = false;
    deps_.records->UnholdRecord(r);
    if (results[i].ok() && r->state == BlobState::kLinked && r->in_dram() && !r->in_hbm()) {
      deps_.ledger->AttachHbm(r, fills[i].extent);
      deps_.hbm->counters().RecordPromotion();
      ++attached;
    } else {
      deps_.ledger->FreeHbmExtent(fills[i].extent);
      if (!results[i].ok()) {
        LOG(WARNING) << "copying blob " << r->key.ToHex() << " into HBM failed: " << results[i];
        ++failures;
      }
    }
    deps_.records->ReleaseRecord(r);  // may erase it (deleted meanwhile)
  }
  if (failures > 0) {
    absl::MutexLock lock(&queue_mu_);
    failures_ += failures;
  }
  return attached;
}

void HbmCache::Loop() {
  auto wake = [this]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) { return stop_ || !queue_.empty(); };
  for (;;) {
    {
      absl::MutexLock lock(&queue_mu_);
      queue_mu_.AwaitWithTimeout(absl::Condition(&wake), kIdlePoll);
      if (stop_) return;
      if (queue_.empty()) continue;
    }
    absl::Mutex& mu = *deps_.index_mu;
    TimedMutexLock lock(&mu, deps_.lock_hold);
    AdmitQueued(mu);
  }
}

}  // namespace strata::store::core
