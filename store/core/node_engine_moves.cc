// NodeEngine: moving bytes between tiers with I/O outside the engine lock — demotion of
// DRAM blobs to SSD (background, and on Evict) and promotion of SSD blobs into DRAM (on
// Read and Prefetch).
//
// A record being moved is marked `moving` and held (holds + 1), so it is neither evicted
// nor erased while the lock is dropped; every other engine call keeps running. Readers
// that need a moving record wait on `moved_`.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

constexpr uint64_t kBlock = 4096;
// Most bytes one demotion round moves (bounds how long records stay `moving`).
constexpr uint64_t kMaxDemotionRoundBytes = uint64_t{256} << 20;
// How often the mover looks at DRAM use when nothing signals it.
constexpr absl::Duration kMoverPoll = absl::Milliseconds(200);

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

// The first chunk of `bytes` whose checksum differs from `checksums`, or checksums.size().
uint64_t FirstBadChunk(absl::Span<const std::byte> bytes, absl::Span<const uint64_t> checksums,
                       uint64_t chunk_bytes) {
  for (uint64_t i = 0; i < checksums.size(); ++i) {
    if (ChunkChecksum(bytes.subspan(i * chunk_bytes, chunk_bytes)) != checksums[i]) return i;
  }
  return checksums.size();
}

}  // namespace

// ------------------------------------------------------------------------- promotion

absl::Status NodeEngine::PromoteLocked(const std::vector<BlobRecord*>& records) {
  // Reserve DRAM and mark every record moving before dropping the lock.
  std::vector<BlobRecord*> moving;
  std::vector<tiering::Extent> targets;
  absl::Status first_error;
  for (BlobRecord* record : records) {
    if (record->moving || record->in_dram() || !record->on_ssd()) continue;
    absl::StatusOr<tiering::Extent> extent = AllocateLocked(record->bytes);
    if (!extent.ok()) {
      first_error.Update(extent.status());
      break;
    }
    record->moving = true;
    ++record->holds;
    ++holds_;
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
        arena_->Data(targets[i]).first(IoBytes(r.bytes, *r.ssd_extent, targets[i]))});
  }
  std::vector<absl::Status> results;
  std::vector<uint64_t> bad(moving.size());
  {
    LockHoldPause pause;  // the I/O and checksums run without the lock
    mu_.Unlock();
    results = RunBatch(
        [&](tiering::TierIoDone done) { ssd_->ReadBatch(std::move(reads), std::move(done)); });
    // Checksums were fixed at commit and a moving record keeps them.
    for (size_t i = 0; i < moving.size(); ++i) {
      if (!results[i].ok()) continue;
      const BlobRecord& r = *moving[i];
      bad[i] = FirstBadChunk(arena_->Data(targets[i]).first(r.bytes), r.checksums,
                             r.ns->layout().BytesPerLayerPage());
    }
    mu_.Lock();
  }

  for (size_t i = 0; i < moving.size(); ++i) {
    BlobRecord* record = moving[i];
    record->moving = false;
    --record->holds;
    --holds_;
    absl::Status status = results[i];
    if (status.ok() && bad[i] != record->checksums.size()) {
      status = absl::DataLossError(absl::StrCat(
          "blob ", record->key.ToHex(), ": its SSD copy at offset ", record->ssd_extent->offset,
          " is corrupt (chunk ", bad[i], " fails its checksum); the blob is TEXT now"));
    }
    if (!status.ok()) {
      arena_->Free(targets[i]);
      LOG(WARNING) << "promotion of " << record->key.ToHex() << " failed: " << status;
      // Only lost bytes cost the SSD copy; a transient error (UNAVAILABLE) keeps it.
      if (absl::IsDataLoss(status) && record->state == BlobState::kLinked && record->on_ssd() &&
          !record->in_dram()) {
        if (record->children_with_bytes == 0) {
          EvictReply dropped;
          DropToTextLocked(record, &dropped);
        } else {
          // Children still hold bytes: keep the record but forget the bad copy.
          ledger_.DetachSsd(record);
          journal_.Persist(*record);
        }
      }
      first_error.Update(status);
    } else if (record->state == BlobState::kLinked) {
      ledger_.AttachDram(record, targets[i]);
      arena_->counters().RecordPromotion();
    } else {
      arena_->Free(targets[i]);  // deleted meanwhile
    }
    MaybeRelease(record);
  }
  moved_.SignalAll();
  return first_error;
}

// ------------------------------------------------------------------------- demotion

uint64_t NodeEngine::MoveOutOfDram(uint64_t bytes, EvictReply* reply) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  return MoveOutOfDramLocked(bytes, reply);
}

uint64_t NodeEngine::MoveOutOfDramLocked(uint64_t bytes, EvictReply* reply) {
  if (ssd_ == nullptr) return FreeDramLocked(bytes, reply);
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    // Pick this round's victims: leaves of DRAM in policy order.
    victims.clear();
    ledger_.dram_policy().CollectVictims(
        std::min(bytes - freed, kMaxDemotionRoundBytes),
        [this](tiering::BlobId id) {
          mu_.AssertHeld();
          const BlobRecord* r = table_.Find(id);
          return r != nullptr && TierLedger::DramEvictable(*r);
        },
        &victims);
    if (victims.empty()) break;
    std::vector<BlobRecord*> demoting;
    std::vector<tiering::Extent> targets;
    uint64_t round_freed = 0;
    bool progress = false;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table_.Find(id);
      if (record == nullptr || !TierLedger::DramEvictable(*record)) continue;
      const uint64_t length = record->extent->length;
      if (record->on_ssd()) {
        ledger_.DetachDram(record);  // already durable on SSD
        arena_->counters().RecordEviction();
        round_freed += length;
        continue;
      }
      if (!ledger_.ShouldDemote(*record)) {
        // Not worth an SSD write: drop to TEXT if nothing continues it.
        if (record->children_with_bytes == 0) {
          DropToTextLocked(record, reply);
          round_freed += length;
        }
        continue;
      }
      absl::StatusOr<tiering::Extent> target = ssd_->Allocate(record->bytes);
      if (!target.ok() && absl::IsResourceExhausted(target.status())) {
        FreeSsdLocked(record->bytes, reply);
        target = ssd_->Allocate(record->bytes);
      }
      if (!target.ok()) {
        VLOG(1) << "no SSD room for " << record->key.ToHex() << ": " << target.status();
        if (record->children_with_bytes == 0) {
          DropToTextLocked(record, reply);
          round_freed += length;
        }
        continue;
      }
      record->moving = true;
      ++record->holds;
      ++holds_;
      demoting.push_back(record);
      targets.push_back(*target);
    }
    if (!demoting.empty()) {
      std::vector<tiering::TierWrite> writes;
      writes.reserve(demoting.size());
      for (size_t i = 0; i < demoting.size(); ++i) {
        const BlobRecord& r = *demoting[i];
        writes.push_back(tiering::TierWrite{
            targets[i], 0, arena_->Data(*r.extent).first(IoBytes(r.bytes, *r.extent, targets[i]))});
      }
      std::vector<absl::Status> results;
      absl::Status flushed;
      {
        LockHoldPause pause;  // the I/O runs without the lock
        mu_.Unlock();
        results = RunBatch([&](tiering::TierIoDone done) {
          ssd_->WriteBatch(std::move(writes), std::move(done));
        });
        // Visible on SSD only once durable there.
        flushed = ssd_->Flush();
        mu_.Lock();
      }
      // The bytes are durable: record the extents (synced) before anyone sees them.
      meta::MetaBatch batch(/*sync=*/true);
      std::vector<bool> written(demoting.size());
      for (size_t i = 0; i < demoting.size(); ++i) {
        BlobRecord* record = demoting[i];
        record->moving = false;
        --record->holds;
        --holds_;
        const absl::Status status = flushed.ok() ? results[i] : flushed;
        if (!status.ok() || record->state != BlobState::kLinked) {
          ssd_->Free(targets[i]);
          if (!status.ok()) {
            VLOG(1) << "demotion of " << record->key.ToHex() << " failed: " << status;
            if (reply->demotions_failed++ == 0) reply->first_failure = status;
          }
          MaybeRelease(record);
          continue;
        }
        written[i] = true;
        ledger_.AttachSsd(record, targets[i]);
        journal_.Add(*record, &batch);
      }
      const absl::Status recorded = journal_.Apply(batch);
      for (size_t i = 0; i < demoting.size(); ++i) {
        if (!written[i]) continue;
        BlobRecord* record = demoting[i];
        if (!recorded.ok()) {
          ledger_.DetachSsd(record);  // not recorded: as if never written
          continue;
        }
        arena_->counters().RecordDemotion();
        progress = true;
        ++reply->blobs_demoted;
        // Read while it was being written: keep the DRAM copy, it is hot.
        if (TierLedger::DramEvictable(*record)) {
          round_freed += record->extent->length;
          ledger_.DetachDram(record);
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

void NodeEngine::MoverLoop() {
  // After a round whose demotions all failed (a full or failing SSD), wait before the
  // next one, doubling up to kMaxMoverBackoff; allocation pressure still frees DRAM
  // without I/O meanwhile, so the node keeps serving from DRAM.
  constexpr absl::Duration kFirstMoverBackoff = absl::Seconds(1);
  constexpr absl::Duration kMaxMoverBackoff = absl::Seconds(60);
  absl::Duration backoff = absl::ZeroDuration();
  while (!stop_reaper_.HasBeenNotified()) {
    uint64_t excess = 0;
    {
      TimedMutexLock lock(&mu_, lock_hold_);  // waits and reads DRAM use: writes nothing
      {
        LockHoldPause pause;
        pressure_.WaitWithTimeout(&mu_, std::max(kMoverPoll, backoff));
      }
      if (stop_reaper_.HasBeenNotified()) return;
      const tiering::TierStats stats = arena_->Stats();
      const auto low = static_cast<uint64_t>(options_.dram_low_watermark *
                                             static_cast<double>(stats.capacity_bytes));
      if (AbovePressureLocked() && stats.used_bytes > low) excess = stats.used_bytes - low;
    }
    if (excess == 0) continue;
    EvictReply reply;
    const uint64_t freed = MoveOutOfDram(excess, &reply);
    if (reply.demotions_failed > 0 && freed == 0) {
      backoff = std::clamp(backoff * 2, kFirstMoverBackoff, kMaxMoverBackoff);
      LOG(WARNING) << "mover: nothing freed, next try in " << backoff << "; "
                   << reply.demotions_failed << " demotions failed: " << reply.first_failure;
    } else {
      backoff = absl::ZeroDuration();
      if (reply.demotions_failed > 0) {
        LOG(WARNING) << "mover: " << reply.demotions_failed
                     << " demotions failed: " << reply.first_failure;
      }
    }
    VLOG(1) << "mover: freed " << freed << " DRAM bytes (" << reply.blobs_demoted << " demoted, "
            << reply.blobs_dropped << " dropped)";
  }
}

}  // namespace strata::store::core
