// TierMover: moving bytes between tiers with I/O outside the index lock — demotion of DRAM
// blobs to SSD (background, and on Evict) and promotion of SSD blobs into DRAM (on Read
// and Prefetch).
//
// A record being moved is marked `moving` and held (Records::HoldRecord), so it is neither
// evicted nor erased while the lock is dropped; every other call keeps running. Callers
// that need a moving record wait with WaitMoved.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/tier_mover.h"

namespace strata::store::core {
namespace {

constexpr uint64_t kBlock = 4096;
// Most bytes one demotion round moves (bounds how long records stay `moving`).
constexpr uint64_t kMaxDemotionRoundBytes = uint64_t{256} << 20;

// The bytes of a blob that travel to and from SSD: its size rounded up to the device
// block; both extents are whole granules, so this lies inside each.
uint64_t IoBytes(uint64_t blob_bytes, const tiering::Extent& a, const tiering::Extent& b) {
  const uint64_t rounded = (blob_bytes + kBlock - 1) / kBlock * kBlock;
  return std::min({rounded, a.length, b.length});
}

// Submits one batch through `submit` and waits for its completion.
template <typename Submit>
std::vector<absl::Status> RunBatch(Submit submit) {
  absl::Notification finished;
  std::vector<absl::Status> statuses;
  submit([&](std::vector<absl::Status> results) {
    statuses = std::move(results);
    finished.Notify();
  });
  finished.WaitForNotification();
  return statuses;
}

}  // namespace

void TierMover::WaitMoved(absl::Mutex& mu) {
  CheckLock(mu);
  LockHoldPause pause;
  moved_.Wait(&mu);
}

// ------------------------------------------------------------------------- promotion

absl::Status TierMover::Promote(absl::Mutex& mu, const std::vector<BlobRecord*>& records) {
  CheckLock(mu);
  tiering::DramArena& dram = *deps_.dram;
  // Reserve DRAM and mark every record moving before dropping the lock.
  std::vector<BlobRecord*> moving;
  std::vector<tiering::Extent> targets;
  absl::Status first_error;
  for (BlobRecord* record : records) {
    if (record->moving || record->in_dram() || !record->on_ssd()) continue;
    absl::StatusOr<tiering::Extent> extent =
        Allocate(mu, record->bytes, TierLedger::LabelOf(*record));
    if (!extent.ok()) {
      first_error.Update(extent.status());
      break;
    }
    record->moving = true;
    deps_.records->HoldRecord(record);
    moving.push_back(record);
    targets.push_back(*extent);
  }
  if (moving.empty()) return first_error;

  std::vector<tiering::TierRead> reads;
  reads.reserve(moving.size());
  for (size_t i = 0; i < moving.size(); ++i) {
    const BlobRecord& r = *moving[i];
    reads.push_back(tiering::TierRead{
        *r.ssd_extent, 0,
        dram.Data(targets[i]).first(IoBytes(r.bytes, *r.ssd_extent, targets[i]))});
  }
  std::vector<absl::Status> results;
  std::vector<uint64_t> bad(moving.size());
  {
    LockHoldPause pause;  // the I/O and checksums run without the lock
    mu.Unlock();
    results = RunBatch(
        [&](tiering::TierIoDone done) { deps_.ssd->ReadBatch(std::move(reads), std::move(done)); });
    // Checksums were fixed at commit and a moving record keeps them.
    for (size_t i = 0; i < moving.size(); ++i) {
      if (!results[i].ok()) continue;
      const BlobRecord& r = *moving[i];
      bad[i] = FirstBadChunk(dram.Data(targets[i]).first(r.bytes), r.checksums,
                             r.ns->layout().BytesPerLayerPage());
    }
    mu.Lock();
  }

  for (size_t i = 0; i < moving.size(); ++i) {
    BlobRecord* record = moving[i];
    record->moving = false;
    deps_.records->UnholdRecord(record);
    absl::Status status = results[i];
    if (status.ok() && bad[i] != record->checksums.size()) {
      status = absl::DataLossError(absl::StrCat(
          "blob ", record->key.ToHex(), ": its SSD copy at offset ", record->ssd_extent->offset,
          " is corrupt (chunk ", bad[i], " fails its checksum); the blob is TEXT now"));
    }
    if (!status.ok()) {
      deps_.ledger->FreeDramExtent(*record, targets[i]);
      LOG(WARNING) << "promotion of " << record->key.ToHex() << " failed: " << status;
      // Only lost bytes cost the SSD copy; a transient error (UNAVAILABLE) keeps it.
      if (absl::IsDataLoss(status) && record->state == BlobState::kLinked && record->on_ssd() &&
          !record->in_dram()) {
        if (record->children_with_bytes == 0) {
          EvictReply dropped;
          DropToText(mu, record, &dropped);
        } else {
          // Children still hold bytes: keep the record but forget the bad copy.
          deps_.ledger->DetachSsd(record);
          deps_.journal->Persist(*record);
        }
      }
      first_error.Update(status);
    } else if (record->state == BlobState::kLinked) {
      deps_.ledger->AttachDram(record, targets[i]);
      dram.counters().RecordPromotion();
    } else {
      deps_.ledger->FreeDramExtent(*record, targets[i]);  // deleted meanwhile
    }
    deps_.records->ReleaseRecord(record);
  }
  moved_.SignalAll();
  return first_error;
}

absl::Status TierMover::PromoteForRead(
    absl::Mutex& mu, absl::FunctionRef<absl::Status(std::vector<BlobRecord*>*)> resolve,
    std::vector<BlobRecord*>* records) {
  CheckLock(mu);
  constexpr int kMaxPromotionRounds = 8;
  for (int round = 0;; ++round) {
    records->clear();
    STRATA_RETURN_IF_ERROR(resolve(records));
    std::vector<BlobRecord*> promote;
    bool wait = false;
    for (BlobRecord* record : *records) {
      if (record->in_dram()) continue;  // even while being demoted: the DRAM copy serves
      if (record->moving) {
        wait = true;  // being promoted by another call
      } else if (std::find(promote.begin(), promote.end(), record) == promote.end()) {
        promote.push_back(record);
      }
    }
    if (wait) {
      WaitMoved(mu);
      continue;
    }
    if (promote.empty()) return absl::OkStatus();
    if (round == kMaxPromotionRounds) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "DRAM tier too small to hold the ", records->size(), " blobs of this read at once"));
    }
    if (deps_.ssd != nullptr) deps_.ssd->counters().RecordHit(promote.size());
    // Admission decides, with this read counted, whether the copy stays in DRAM.
    std::vector<bool> keep(promote.size());
    for (size_t i = 0; i < promote.size(); ++i) keep[i] = deps_.ledger->ShouldPromote(*promote[i]);
    STRATA_RETURN_IF_ERROR(Promote(mu, promote));
    for (size_t i = 0; i < promote.size(); ++i) {
      if (!keep[i] && promote[i]->in_dram()) promote[i]->transient_dram = true;
    }
  }
}

// ------------------------------------------------------------------------- demotion

absl::StatusOr<tiering::Extent> TierMover::AllocateSsd(absl::Mutex& mu, const BlobRecord& record,
                                                       EvictReply* reply) {
  CheckLock(mu);
  const std::string& label = TierLedger::LabelOf(record);
  tiering::Tier& ssd = *deps_.ssd;
  STRATA_RETURN_IF_ERROR(MakeRoomUnderQuota(mu, Tier::kSsd, label, record.bytes));
  absl::StatusOr<tiering::Extent> target = ssd.Allocate(record.bytes);
  if (!target.ok() && absl::IsResourceExhausted(target.status())) {
    FreeSsd(mu, record.bytes, reply);
    target = ssd.Allocate(record.bytes);
  }
  if (!target.ok()) return target;
  if (target->length > record.bytes) {  // rounded up to the granule: it must fit too
    if (absl::Status room = MakeRoomUnderQuota(mu, Tier::kSsd, label, target->length); !room.ok()) {
      ssd.Free(*target);
      return room;
    }
  }
  deps_.ledger->Charge(label, Tier::kSsd, target->length);
  return target;
}

uint64_t TierMover::MoveOutOfDram(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                                  const std::string* only) {
  const MetaJournal::FlushOnExit flush(deps_.journal);  // after the lock below
  TimedMutexLock lock(&mu, deps_.lock_hold);
  return MoveOutOfDramLocked(mu, bytes, reply, only);
}

uint64_t TierMover::MoveOutOfDramLocked(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                                        const std::string* only) {
  CheckLock(mu);
  if (deps_.ssd == nullptr) return FreeDram(mu, bytes, reply, only);
  BlobTable& table = *deps_.table;
  TierLedger& ledger = *deps_.ledger;
  tiering::DramArena& dram = *deps_.dram;
  tiering::Tier& ssd = *deps_.ssd;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  // Blobs whose demotion failed in this call: not tried again (each is counted once).
  absl::flat_hash_set<tiering::BlobId> failed;
  while (freed < bytes) {
    // Pick this round's victims: leaves of DRAM in policy order.
    victims.clear();
    ledger.dram_policy().CollectVictims(
        std::min(bytes - freed, kMaxDemotionRoundBytes),
        [&table, &failed, only](tiering::BlobId id) {
          const BlobRecord* r = table.Find(id);
          return r != nullptr && TierLedger::DramEvictable(*r) && !failed.contains(id) &&
                 (only == nullptr || TierLedger::LabelOf(*r) == *only);
        },
        &victims);
    if (victims.empty()) break;
    std::vector<BlobRecord*> demoting;
    std::vector<tiering::Extent> targets;
    uint64_t round_freed = 0;
    bool progress = false;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table.Find(id);
      if (record == nullptr || !TierLedger::DramEvictable(*record)) continue;
      const uint64_t length = record->extent->length;
      if (record->on_ssd()) {
        ledger.DetachDram(record);  // already durable on SSD
        dram.counters().RecordEviction();
        if (only != nullptr) ledger.CountQuotaEvictions(*only, 1);
        round_freed += length;
        continue;
      }
      if (!ledger.ShouldDemote(*record)) {
        // Not worth an SSD write: drop to TEXT if nothing continues it.
        if (record->children_with_bytes == 0) {
          DropToText(mu, record, reply);
          if (only != nullptr) ledger.CountQuotaEvictions(*only, 1);
          round_freed += length;
        }
        continue;
      }
      // The SSD tier full of what may not go, or the label's SSD quota: drop to TEXT.
      absl::StatusOr<tiering::Extent> target = AllocateSsd(mu, *record, reply);
      if (!target.ok()) {
        VLOG(1) << "no SSD room for " << record->key.ToHex() << ": " << target.status();
        if (record->children_with_bytes == 0) {
          DropToText(mu, record, reply);
          if (only != nullptr) ledger.CountQuotaEvictions(*only, 1);
          round_freed += length;
        }
        continue;
      }
      record->moving = true;
      deps_.records->HoldRecord(record);
      demoting.push_back(record);
      targets.push_back(*target);
    }
    if (!demoting.empty()) {
      std::vector<tiering::TierWrite> writes;
      writes.reserve(demoting.size());
      for (size_t i = 0; i < demoting.size(); ++i) {
        const BlobRecord& r = *demoting[i];
        writes.push_back(tiering::TierWrite{
            targets[i], 0, dram.Data(*r.extent).first(IoBytes(r.bytes, *r.extent, targets[i]))});
      }
      std::vector<absl::Status> results;
      absl::Status flushed;
      {
        LockHoldPause pause;  // the I/O runs without the lock
        mu.Unlock();
        results = RunBatch(
            [&](tiering::TierIoDone done) { ssd.WriteBatch(std::move(writes), std::move(done)); });
        // Visible on SSD only once durable there.
        flushed = ssd.Flush();
        mu.Lock();
      }
      // The bytes are durable. Their records, with the SSD extents, are queued synced
      // under the lock (in order with every other record change) and written after
      // dropping it again; only then are the extents attached, so a blob shows on SSD only
      // once its record is durable. The records stay moving and held meanwhile.
      meta::MetaBatch batch(/*sync=*/true);
      std::vector<bool> written(demoting.size());
      std::vector<bool> pinned(demoting.size());
      for (size_t i = 0; i < demoting.size(); ++i) {
        BlobRecord* record = demoting[i];
        const absl::Status status = flushed.ok() ? results[i] : flushed;
        if (!status.ok() || record->state != BlobState::kLinked) {
          record->moving = false;
          deps_.records->UnholdRecord(record);
          ledger.FreeSsdExtent(*record, targets[i]);
          if (!status.ok()) {
            VLOG(1) << "demotion of " << record->key.ToHex() << " failed: " << status;
            if (failed.insert(record->id).second && reply->demotions_failed++ == 0) {
              reply->first_failure = status;
            }
          }
          deps_.records->ReleaseRecord(record);
          continue;
        }
        written[i] = true;
        pinned[i] = record->pinned;
        deps_.journal->AddDemoted(*record, targets[i], &batch);
      }
      absl::Status recorded;
      if (deps_.journal->enabled() && !batch.empty()) {
        const MetaJournal::Ticket ticket = deps_.journal->Queue(std::move(batch));
        LockHoldPause pause;  // the synced write runs without the lock
        mu.Unlock();
        recorded = deps_.journal->Await(ticket);
        mu.Lock();
      }
      for (size_t i = 0; i < demoting.size(); ++i) {
        if (!written[i]) continue;
        BlobRecord* record = demoting[i];
        record->moving = false;
        deps_.records->UnholdRecord(record);
        if (!recorded.ok() || record->state != BlobState::kLinked) {
          // Not recorded (as if never written), or deleted while it was being recorded
          // (its deletion was queued after the record, so the store has it deleted).
          ledger.FreeSsdExtent(*record, targets[i]);
          deps_.records->ReleaseRecord(record);
          continue;
        }
        ledger.AttachSsd(record, targets[i]);
        // Pinned or unpinned while recorded: that write lacked the extent, write it again.
        if (record->pinned != pinned[i]) deps_.journal->Persist(*record);
        dram.counters().RecordDemotion();
        progress = true;
        ++reply->blobs_demoted;
        // Read while it was being written: keep the DRAM copy, it is hot.
        if (TierLedger::DramEvictable(*record)) {
          round_freed += record->extent->length;
          ledger.DetachDram(record);
          if (only != nullptr) ledger.CountQuotaEvictions(*only, 1);
        }
      }
      moved_.SignalAll();
    }
    progress = progress || round_freed > 0;
    freed += round_freed;
    if (!progress) break;  // every demotion failed and nothing else could go
  }
  reply->bytes_freed += freed;
  return freed;
}

void TierMover::Prefetch(absl::Mutex& mu, absl::Span<const Segment> segments, RebuildQueue& rebuild,
                         PrefetchReply* reply) {
  CheckLock(mu);
  std::vector<BlobRecord*> promote;
  RebuildRequestReply queued;
  for (const Segment& segment : segments) {
    BlobRecord* record = deps_.table->FindLinked(segment.blob);
    if (record == nullptr) continue;  // removed since the match
    if (record->has_bytes()) reply->resident_pages += segment.page_count;
    if (record->in_dram() || record->moving) continue;
    if (record->on_ssd()) {
      if (std::find(promote.begin(), promote.end(), record) == promote.end()) {
        promote.push_back(record);
      }
      continue;
    }
    if (!rebuild.Queue(record, &queued).ok()) break;  // queue full
  }
  reply->rebuilds_queued = queued.queued;
  if (promote.empty()) return;
  reply->promotions = promote.size();
  const absl::Status status = Promote(mu, promote);
  if (!status.ok()) VLOG(1) << "prefetch promotion: " << status;
}

}  // namespace strata::store::core
