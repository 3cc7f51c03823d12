// TierMover: eviction under pressure without I/O (DRAM, SSD, TEXT), allocation in DRAM and
// the background mover thread. Demotion to SSD and promotion back into DRAM (I/O without
// the lock) are in tier_mover_moves.cc.
#include "strata/store/core/tier_mover.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::core {
namespace {

// How often the mover looks at DRAM use when nothing signals it.
constexpr absl::Duration kMoverPoll = absl::Milliseconds(200);

}  // namespace

TierMover::TierMover(const TierMoverOptions& options, const Deps& deps)
    : options_(options), deps_(deps) {
  CHECK(deps_.table != nullptr && deps_.ledger != nullptr && deps_.journal != nullptr &&
        deps_.dram != nullptr && deps_.records != nullptr && deps_.index_mu != nullptr)
      << "TierMover: a dependency is missing";
  CHECK(options_.dram_low_watermark > 0 &&
        options_.dram_low_watermark <= options_.dram_high_watermark &&
        options_.dram_high_watermark <= 1)
      << "TierMover: bad watermarks";
}

TierMover::~TierMover() { Stop(); }

void TierMover::CheckLock(const absl::Mutex& mu) const {
  DCHECK_EQ(&mu, deps_.index_mu) << "TierMover called with another lock than its index lock";
}

// ------------------------------------------------------------------------- the thread

void TierMover::Start() {
  CHECK(!thread_.joinable()) << "TierMover started twice";
  thread_ = std::thread([this] { Loop(); });
}

void TierMover::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  {
    absl::MutexLock lock(deps_.index_mu);
    pressure_.SignalAll();
  }
  thread_.join();
}

bool TierMover::AbovePressure(const absl::Mutex& mu) const {
  CheckLock(mu);
  const report::TierStats stats = deps_.dram->Stats();
  return static_cast<double>(stats.used_bytes) >
         options_.dram_high_watermark * static_cast<double>(stats.capacity_bytes);
}

void TierMover::SignalIfAbovePressure(const absl::Mutex& mu) {
  if (AbovePressure(mu)) pressure_.Signal();
}

void TierMover::Loop() {
  // After a round whose demotions all failed (a full or failing SSD), wait before the
  // next one, doubling up to kMaxMoverBackoff; allocation pressure still frees DRAM
  // without I/O meanwhile, so the node keeps serving from DRAM.
  constexpr absl::Duration kFirstMoverBackoff = absl::Seconds(1);
  constexpr absl::Duration kMaxMoverBackoff = absl::Seconds(60);
  absl::Mutex& mu = *deps_.index_mu;
  absl::Duration backoff = absl::ZeroDuration();
  while (!stop_.HasBeenNotified()) {
    {
      TimedMutexLock lock(&mu, deps_.lock_hold);  // only waits: writes nothing
      if (stop_.HasBeenNotified()) return;
      LockHoldPause pause;
      pressure_.WaitWithTimeout(&mu, std::max(kMoverPoll, backoff));
    }
    if (stop_.HasBeenNotified()) return;
    if (DemoteRound()) {
      backoff = std::clamp(backoff * 2, kFirstMoverBackoff, kMaxMoverBackoff);
      LOG(WARNING) << "mover: nothing freed, next try in " << backoff;
    } else {
      backoff = absl::ZeroDuration();
    }
  }
}

bool TierMover::DemoteRound() {
  absl::Mutex& mu = *deps_.index_mu;
  // What to move: each label above its DRAM quota's high watermark down to its low one,
  // then the tier above its high watermark down to its low one.
  std::vector<std::pair<std::string, uint64_t>> labels;
  uint64_t excess = 0;
  {
    TimedMutexLock lock(&mu, deps_.lock_hold);  // reads use: writes nothing
    TierLedger& ledger = *deps_.ledger;
    for (std::string& label : ledger.LabelsAbove(Tier::kDram, options_.dram_high_watermark)) {
      const auto low = static_cast<uint64_t>(options_.dram_low_watermark *
                                             static_cast<double>(ledger.quota(label, Tier::kDram)));
      const uint64_t charged = ledger.charged(label, Tier::kDram);
      labels.emplace_back(std::move(label), charged - std::min(charged, low));
    }
    const report::TierStats stats = deps_.dram->Stats();
    const auto low = static_cast<uint64_t>(options_.dram_low_watermark *
                                           static_cast<double>(stats.capacity_bytes));
    if (AbovePressure(mu) && stats.used_bytes > low) excess = stats.used_bytes - low;
  }
  bool tried = false;
  bool all_failed = true;
  const auto move = [&](uint64_t bytes, const std::string* only) {
    if (bytes == 0) return;
    EvictReply reply;
    const uint64_t freed = MoveOutOfDram(mu, bytes, &reply, only);
    tried = true;
    if (freed > 0 || reply.demotions_failed == 0) all_failed = false;
    if (reply.demotions_failed > 0) {
      LOG(WARNING) << "mover: " << reply.demotions_failed
                   << " demotions failed: " << reply.first_failure;
    }
    VLOG(1) << "mover: freed " << freed << " DRAM bytes (" << reply.blobs_demoted << " demoted, "
            << reply.blobs_dropped << " dropped)"
            << (only != nullptr ? absl::StrCat(" of tenant label ", *only) : std::string());
  };
  for (const auto& [label, bytes] : labels) move(bytes, &label);
  move(excess, nullptr);
  return tried && all_failed;
}

// ------------------------------------------------------------------------- TEXT

void TierMover::DropToText(absl::Mutex& mu, BlobRecord* record, EvictReply* reply) {
  CheckLock(mu);
  CHECK_EQ(record->children_with_bytes, 0u) << "dropping the bytes of a blob others continue";
  TierLedger& ledger = *deps_.ledger;
  if (record->in_dram()) {
    ledger.DetachDram(record);
    deps_.dram->counters().RecordEviction();
  }
  const bool had_ssd = record->on_ssd();
  if (had_ssd) {
    ledger.DetachSsd(record);
    deps_.ssd->counters().RecordEviction();
  }
  ledger.CountTextDrop();
  ++reply->blobs_dropped;
  if (options_.text_bytes == 0) {
    // No TEXT tier: the blob leaves the index (with whatever hangs below it, all TEXT).
    // A pinned path or a pending put continuing it keeps it for now (as TEXT, removed by
    // a later TEXT eviction).
    DeleteReply removed;
    const absl::Status status = deps_.records->RemoveFromIndex(
        record, record->end_page() - record->pages_in_index, &removed);
    reply->pages_evicted += removed.pages_removed;
    reply->blobs_unlinked += removed.blobs_unlinked;
    if (status.ok()) {
      // Its parent may be a TEXT blob that only this one's pins or pending puts kept.
      TrimText(mu, reply);
      return;
    }
    VLOG(1) << "dropping " << record->key.ToHex() << ": " << status;
  }
  // Durable state changed only if an SSD copy went (a DRAM-only blob is TEXT after a
  // restart anyway).
  if (had_ssd) deps_.journal->Persist(*record);
  TrimText(mu, reply);
}

void TierMover::EvictText(absl::Mutex& mu, uint64_t bytes, EvictReply* reply) {
  CheckLock(mu);
  BlobTable& table = *deps_.table;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    deps_.ledger->text_policy().CollectVictims(
        bytes - freed,
        [&table](tiering::BlobId id) {
          const BlobRecord* r = table.Find(id);
          return r != nullptr && r->text_tracked && r->children == 0 && !r->pinned &&
                 r->path_pins == 0 && !r->moving && r->holds == 0;
        },
        &victims);
    if (victims.empty()) return;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table.Find(id);
      if (record == nullptr || !record->text_tracked) continue;  // removed with a parent
      const uint64_t text = TierLedger::TextBytes(*record);
      DeleteReply removed;
      const absl::Status status = deps_.records->RemoveFromIndex(
          record, record->end_page() - record->pages_in_index, &removed);
      if (!status.ok()) {
        // Its pages are pinned by a match (a pending put's prefix): it stays for now.
        VLOG(1) << "TEXT eviction of " << record->key.ToHex() << ": " << status;
        continue;
      }
      freed += text;
      deps_.ledger->CountTextDeletion();
      reply->bytes_freed += text;
      reply->pages_evicted += removed.pages_removed;
      reply->blobs_unlinked += removed.blobs_unlinked;
    }
    if (freed == freed_before) return;  // every candidate is held by the index
  }
}

void TierMover::TrimText(absl::Mutex& mu, EvictReply* reply) {
  CheckLock(mu);
  const uint64_t used = deps_.ledger->text().used_bytes;
  if (used <= options_.text_bytes) return;
  EvictReply ignored;
  EvictText(mu, used - options_.text_bytes, reply != nullptr ? reply : &ignored);
}

// ------------------------------------------------------------------------- DRAM, SSD

uint64_t TierMover::FreeDram(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                             const std::string* only) {
  CheckLock(mu);
  BlobTable& table = *deps_.table;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    deps_.ledger->dram_policy().CollectVictims(
        bytes - freed,
        [&table, only](tiering::BlobId id) {
          const BlobRecord* r = table.Find(id);
          return r != nullptr && TierLedger::DramEvictable(*r) &&
                 (r->on_ssd() || r->children_with_bytes == 0) &&
                 (only == nullptr || TierLedger::LabelOf(*r) == *only);
        },
        &victims);
    if (victims.empty()) break;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table.Find(id);
      if (record == nullptr || !TierLedger::DramEvictable(*record)) continue;
      const uint64_t length = record->extent->length;
      if (record->on_ssd()) {
        deps_.ledger->DetachDram(record);  // the SSD copy stays
        deps_.dram->counters().RecordEviction();
      } else if (record->children_with_bytes == 0) {
        DropToText(mu, record, reply);
      } else {
        continue;
      }
      if (only != nullptr) deps_.ledger->CountQuotaEvictions(*only, 1);
      freed += length;
    }
    if (freed == freed_before) break;
  }
  reply->bytes_freed += freed;
  return freed;
}

uint64_t TierMover::FreeSsd(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                            const std::string* only) {
  CheckLock(mu);
  if (deps_.ssd == nullptr) return 0;
  BlobTable& table = *deps_.table;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  const auto evictable = [only](const BlobRecord& r) {
    // A DRAM copy keeps the blob whole; without one, the bytes go only if no child
    // needs them.
    return r.state == BlobState::kLinked && r.on_ssd() && !r.moving && !r.pinned &&
           r.path_pins == 0 && (r.in_dram() || r.children_with_bytes == 0) &&
           (only == nullptr || TierLedger::LabelOf(r) == *only);
  };
  while (freed < bytes) {
    victims.clear();
    deps_.ledger->ssd_policy().CollectVictims(
        bytes - freed,
        [&](tiering::BlobId id) {
          const BlobRecord* r = table.Find(id);
          return r != nullptr && evictable(*r);
        },
        &victims);
    if (victims.empty()) break;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table.Find(id);
      if (record == nullptr || !evictable(*record)) continue;
      const uint64_t length = record->ssd_extent->length;
      if (record->in_dram()) {
        deps_.ledger->DetachSsd(record);
        deps_.ssd->counters().RecordEviction();
        deps_.journal->Persist(*record);
      } else {
        DropToText(mu, record, reply);
      }
      if (only != nullptr) deps_.ledger->CountQuotaEvictions(*only, 1);
      freed += length;
    }
    if (freed == freed_before) break;
  }
  reply->bytes_freed += freed;
  return freed;
}

absl::Status TierMover::MakeRoomUnderQuota(absl::Mutex& mu, Tier tier, const std::string& label,
                                           uint64_t bytes) {
  CheckLock(mu);
  TierLedger& ledger = *deps_.ledger;
  const uint64_t quota = ledger.quota(label, tier);
  if (quota == 0) return absl::OkStatus();
  const char* const name = tier == Tier::kDram ? "DRAM" : "SSD";
  if (bytes > quota) {
    ledger.CountQuotaRefusal(label);
    return absl::ResourceExhaustedError(
        absl::StrCat("tenant label \"", label, "\" has a ", name, " quota of ", quota,
                     " bytes: ", bytes, " bytes can never fit it (nothing was evicted)"));
  }
  const uint64_t charged = ledger.charged(label, tier);
  if (charged + bytes <= quota) return absl::OkStatus();
  EvictReply evicted;
  if (tier == Tier::kDram) {
    FreeDram(mu, charged + bytes - quota, &evicted, &label);
  } else {
    FreeSsd(mu, charged + bytes - quota, &evicted, &label);
  }
  const uint64_t now = ledger.charged(label, tier);
  if (now + bytes <= quota) return absl::OkStatus();
  ledger.CountQuotaRefusal(label);
  return absl::ResourceExhaustedError(absl::StrCat(
      "tenant label \"", label, "\" is at its ", name, " quota (", now, " of ", quota,
      " bytes) and no room for ", bytes, " more: what it holds there is pinned, leased, ",
      "pending or continued by other blobs (", evicted.bytes_freed, " bytes of its own freed)"));
}

absl::StatusOr<tiering::Extent> TierMover::Allocate(absl::Mutex& mu, uint64_t bytes,
                                                    const std::string& label) {
  CheckLock(mu);
  STRATA_RETURN_IF_ERROR(MakeRoomUnderQuota(mu, Tier::kDram, label, bytes));
  absl::StatusOr<tiering::Extent> extent = deps_.dram->Allocate(bytes);
  if (!extent.ok() && absl::IsResourceExhausted(extent.status())) {
    EvictReply evicted;
    // Free at least the request; fragmentation may need more, so retry with what remains.
    for (int round = 0; round < 64; ++round) {
      if (FreeDram(mu, bytes, &evicted) == 0) break;
      extent = deps_.dram->Allocate(bytes);
      if (extent.ok() || !absl::IsResourceExhausted(extent.status())) break;
    }
    if (!extent.ok() && absl::IsResourceExhausted(extent.status())) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "DRAM tier full: no room for ", bytes, " bytes after dropping ", evicted.blobs_dropped,
          " blobs (", evicted.bytes_freed,
          " bytes freed); the rest is pinned, leased, pending or continued by other blobs"));
    }
  }
  if (!extent.ok()) return extent;
  // The granted extent is the request rounded up to the granule: it must fit too.
  if (extent->length > bytes) {
    if (absl::Status room = MakeRoomUnderQuota(mu, Tier::kDram, label, extent->length);
        !room.ok()) {
      deps_.dram->Free(*extent);
      return room;
    }
  }
  TierLedger& ledger = *deps_.ledger;
  ledger.Charge(label, Tier::kDram, extent->length);
  const uint64_t quota = ledger.quota(label, Tier::kDram);
  if (quota != 0 && static_cast<double>(ledger.charged(label, Tier::kDram)) >
                        options_.dram_high_watermark * static_cast<double>(quota)) {
    pressure_.Signal();  // the thread demotes the label's blobs to its low watermark
  } else {
    SignalIfAbovePressure(mu);
  }
  return extent;
}

absl::StatusOr<EvictReply> TierMover::Evict(absl::Mutex& mu, Tier tier, uint64_t bytes) {
  EvictReply reply;
  switch (tier) {
    case Tier::kDram:
      MoveOutOfDram(mu, bytes, &reply);
      if (reply.demotions_failed > 0) {
        LOG(WARNING) << "Evict(DRAM): " << reply.demotions_failed
                     << " blobs stay in DRAM, their demotions failed: " << reply.first_failure;
      }
      return reply;
    case Tier::kSsd: {
      if (deps_.ssd == nullptr) break;
      const MetaJournal::FlushOnExit flush(deps_.journal);  // after the lock below
      TimedMutexLock lock(&mu, deps_.lock_hold);
      FreeSsd(mu, bytes, &reply);
      return reply;
    }
    case Tier::kText: {
      const MetaJournal::FlushOnExit flush(deps_.journal);  // after the lock below
      TimedMutexLock lock(&mu, deps_.lock_hold);
      EvictText(mu, bytes, &reply);
      return reply;
    }
    case Tier::kHbm:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("this node has no ", std::string(TierName(tier)), " tier"));
}

}  // namespace strata::store::core
