// HbmCache: the HBM tier as an inclusive cache of hot DRAM blobs (docs/design/hbm-tier.md).
// A blob read `admit_reads` times gets a copy of its DRAM bytes in device memory
// (tiering::HbmTier); the copy is extra — the DRAM extent stays, so every other path (the
// UCX data plane, demotion to SSD, the rebuild) is unchanged — and a same-host GPU reader
// copies from it device to device (ReadRangeReply::hbm_offset). Dropping the copy is the
// tier's demotion: when HBM needs room for a new copy (leaf-first, in the HBM policy's
// order, never a leased copy), on Evict(kHbm), and always before the blob's DRAM bytes go
// (TierLedger::DetachDram).
//
// Admission runs on the cache's thread: OnRead queues a blob at its admit_reads-th read;
// the thread allocates HBM extents under the index lock (dropping copies as needed), marks
// the records `hbm_filling` and holds them (TierMover::Records::HoldRecord: their DRAM
// bytes cannot be freed), copies DRAM -> HBM with the lock dropped, and attaches each copy
// that completed to its record if it is still linked and in DRAM (else frees it). The
// DRAM bytes were verified when they were committed or promoted; the copy goes through
// the device (a failed copy is logged and nothing is attached).
//
// Counters (the HBM tier's TierCounters): hits — reads naming a blob with an HBM copy;
// misses — reads of a DRAM blob without one; promotions — copies admitted; demotions —
// copies dropped for room or on Evict(kHbm); evictions — copies dropped because their DRAM
// bytes went.
//
// Ownership: a NodeEngine owns one; Deps are borrowed and outlive it. Without an HBM tier
// (deps.hbm null) every call is a no-op and no thread runs.
//
// Thread safety: what it reads and changes of the records and the ledger is guarded by the
// index lock, passed to each call as `mu` (as TierMover); the admission queue has its own
// lock, taken after `mu` (never the other way round). AdmitQueued drops `mu` for the
// copies and takes it again before returning.
//
// Errors: Evict none; a failed allocation or copy is counted (admission_failures) and
// logged, never returned: the read that queued it was served from DRAM.
#pragma once

#include <cstdint>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/lock_hold.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/store/core/tier_mover.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/hbm_tier.h"

namespace strata::store::core {

struct HbmCacheOptions {
  // A blob is copied into HBM at its admit_reads-th read (BlobRecord::hits). REQUIRES: > 0.
  uint32_t admit_reads = 2;
  // Most bytes one admission round copies with the lock dropped.
  uint64_t round_bytes = uint64_t{256} << 20;
  // Copies into HBM waiting at most; past it a due blob is not queued (it is again at a
  // later read).
  size_t max_queued = 4096;
};

class HbmCache {
 public:
  struct Deps {
    BlobTable* table = nullptr;
    TierLedger* ledger = nullptr;
    tiering::DramArena* dram = nullptr;
    tiering::HbmTier* hbm = nullptr;  // null: no HBM tier
    TierMover::Records* records = nullptr;
    absl::Mutex* index_mu = nullptr;
    LockHoldHistogram* lock_hold = nullptr;  // null: holds not timed
  };

  // REQUIRES: table, ledger, dram, records and index_mu set; options valid.
  HbmCache(const HbmCacheOptions& options, const Deps& deps);
  // Stops the thread (Stop).
  ~HbmCache();
  HbmCache(const HbmCache&) = delete;
  HbmCache& operator=(const HbmCache&) = delete;

  bool enabled() const { return deps_.hbm != nullptr; }

  // Starts the admission thread (no-op without an HBM tier). REQUIRES: not started.
  void Start();
  // Stops and joins it. REQUIRES: index_mu not held.
  void Stop();

  // A read leased `record` (its hits already counted): counts the HBM hit or miss and
  // queues the blob for a copy into HBM once it is due.
  void OnRead(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Drops HBM copies (demotions), leaf-first in the HBM policy's order, until `bytes` are
  // freed or no copy may go. Returns extent bytes freed (also added to reply->bytes_freed).
  uint64_t Free(const absl::Mutex& mu, uint64_t bytes, EvictReply* reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Evict(kHbm, bytes): Free, taking `mu`.
  EvictReply Evict(absl::Mutex& mu, uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu);
  // One admission round: copies what is queued (up to round_bytes) into HBM, dropping `mu`
  // for the copies. Returns the copies attached. (The thread calls it; tests call it to
  // run admission at a known point.)
  uint64_t AdmitQueued(absl::Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Copies waiting to be admitted, and admission failures since creation.
  size_t queued() const ABSL_LOCKS_EXCLUDED(queue_mu_);
  uint64_t admission_failures() const ABSL_LOCKS_EXCLUDED(queue_mu_);

 private:
  void Loop();
  // An HBM extent of `bytes`, dropping copies as the tier needs. RESOURCE_EXHAUSTED when
  // what may go does not free enough.
  absl::StatusOr<tiering::Extent> Allocate(const absl::Mutex& mu, uint64_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  static bool Due(const BlobRecord& record, uint32_t admit_reads);
  void CheckLock(const absl::Mutex& mu) const;

  const HbmCacheOptions options_;
  const Deps deps_;
  mutable absl::Mutex queue_mu_;
  std::deque<tiering::BlobId> queue_ ABSL_GUARDED_BY(queue_mu_);
  uint64_t failures_ ABSL_GUARDED_BY(queue_mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread thread_;
};

}  // namespace strata::store::core
