// TierMover: moves blobs' bytes between the tiers. Eviction under pressure without I/O
// (DRAM copies of SSD blobs dropped, leaves dropped to TEXT, SSD copies dropped, TEXT
// records deleted from the index), allocation in DRAM that evicts as needed, demotion to
// SSD and promotion back into DRAM with the I/O and checksum passes outside the index
// lock, and the background mover thread that keeps DRAM use between the watermarks.
// Where the bytes are and what counts them stays the TierLedger's; the mover decides
// what goes and runs the moves. Eviction is leaf-first and never touches pinned paths,
// leased or held blobs, or blobs being moved (store/core/README.md, "Eviction").
//
// Ownership: a NodeEngine owns one. Everything in TierMover::Deps is borrowed and outlives
// it: the BlobTable, the TierLedger, the MetaJournal, the DRAM arena, the SSD tier (null:
// none), the lock-hold histogram (null: not timed), the index lock itself, and the record
// owner (TierMover::Records), which keeps the parts of the record life cycle the mover
// does not own: holds, release and removal from the index.
//
// Thread safety: the mover owns no lock. What it reads and changes (records, table,
// ledger) is guarded by its owner's index lock, passed to each call as `mu` and annotated
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) (ABSL_LOCKS_EXCLUDED(mu) for the call that takes it),
// so clang's analysis checks every caller. REQUIRES: `mu` is Deps::index_mu (DCHECKed:
// the analysis cannot see that the two are the same); the borrowed table and ledger are
// not annotated (as in TierLedger), the parameter is what the analysis checks.
//   - Eviction and Allocate run entirely under `mu`, without I/O (the tiers' Allocate and
//     Free take their own locks).
//   - Promote and MoveOutOfDramLocked DROP `mu` for their I/O and checksum passes and take
//     it again before returning. The records they move are marked `moving` and held
//     (Records::HoldRecord) meanwhile, so nothing evicts, frees or erases them; every
//     other call of the owner keeps running, so callers re-check what they read before.
//     WaitMoved waits (dropping `mu`) until some move has ended.
//   - The demotion's synced metadata record is queued under `mu` (MetaJournal::Queue, so
//     it keeps its place among the record changes) and written after dropping `mu` again
//     (MetaJournal::Await), the records still moving and held; the SSD extents are
//     attached only once it is durable, so a blob shows on SSD only then. A record pinned
//     or unpinned meanwhile is written again with its extent. Every other metadata write
//     is queued under `mu` and applied by the owner after releasing it (MoveOutOfDram,
//     which takes `mu` itself, applies them on return).
//   - The background thread (Start, Stop) takes `mu` itself: it waits on a condition
//     variable (SignalIfAbovePressure wakes it, else it polls every 200 ms) and demotes
//     via MoveOutOfDram. Lock order: `mu`, then a tier's or a component's lock.
//
// Errors: Allocate RESOURCE_EXHAUSTED (the tier is full of what may not be evicted) or the
// arena's other errors; Promote DATA_LOSS (a chunk checksum mismatch or the tier's
// DATA_LOSS: the record loses its SSD copy), the tier's transient errors (the copy stays)
// or Allocate's; demotion failures are counted in EvictReply (demotions_failed,
// first_failure) and leave the blob in DRAM. Misuse CHECK-fails.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/types/span.h"

#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/lock_hold.h"
#include "strata/store/core/meta_journal.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/rebuild_queue.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

struct TierMoverOptions {
  // Background demotion starts above high * DRAM capacity and stops at low.
  // REQUIRES: 0 < low <= high <= 1.
  double dram_high_watermark = 0.95;
  double dram_low_watermark = 0.85;
  // The TEXT tier's budget; 0: no TEXT tier (a blob whose bytes go leaves the index).
  uint64_t text_bytes = 0;
};

class TierMover {
 public:
  // The record life cycle the mover needs from the records' owner. Every call REQUIRES the
  // index lock held exclusively.
  class Records {
   public:
    virtual ~Records() = default;
    // Keeps `record` (its bytes, the record itself) while the index lock is dropped, as a
    // HeldSpan does; the owner counts it (its Drain waits for it).
    virtual void HoldRecord(BlobRecord* record) = 0;
    // Ends a HoldRecord without releasing the record (ReleaseRecord afterwards).
    virtual void UnholdRecord(BlobRecord* record) = 0;
    // Frees what nothing needs any more of an unlinked record (its bytes; the record once
    // no child needs its tokens; cascading to the parent). Returns DRAM bytes freed.
    // `record` may be erased.
    virtual uint64_t ReleaseRecord(BlobRecord* record) = 0;
    // Removes the index pages of `record` from `from_page` on and everything below them,
    // unlinking the blobs that lose their last page (adds to `reply`). FAILED_PRECONDITION
    // when a pin or a pending put's match holds them.
    virtual absl::Status RemoveFromIndex(BlobRecord* record, uint32_t from_page,
                                         DeleteReply* reply) = 0;
  };

  struct Deps {
    BlobTable* table = nullptr;
    TierLedger* ledger = nullptr;
    MetaJournal* journal = nullptr;
    tiering::DramArena* dram = nullptr;
    tiering::Tier* ssd = nullptr;  // null: no SSD tier
    Records* records = nullptr;
    absl::Mutex* index_mu = nullptr;
    LockHoldHistogram* lock_hold = nullptr;  // null: holds not timed
  };

  // REQUIRES: every dependency but ssd and lock_hold set; options valid.
  TierMover(const TierMoverOptions& options, const Deps& deps);
  // Stops the thread (Stop).
  ~TierMover();
  TierMover(const TierMover&) = delete;
  TierMover& operator=(const TierMover&) = delete;

  // ---- the background mover
  // Starts the thread that demotes (MoveOutOfDram) while DRAM use is above the high
  // watermark, down to the low one; after a round whose demotions all failed it backs
  // off (1 s doubling to 60 s). REQUIRES: not started.
  void Start();
  // Stops and joins the thread (no-op if not started). REQUIRES: index_mu not held.
  void Stop();
  // Whether DRAM use is above the high watermark.
  bool AbovePressure(const absl::Mutex& mu) const ABSL_SHARED_LOCKS_REQUIRED(mu);
  // Wakes the thread if DRAM use is above the high watermark (after an allocation).
  void SignalIfAbovePressure(const absl::Mutex& mu) ABSL_SHARED_LOCKS_REQUIRED(mu);

  // ---- allocation and eviction without I/O
  // Allocates `bytes` in DRAM for a record of tenant label `label` and charges it there
  // (free it with TierLedger::FreeDramExtent). Under the label's DRAM quota first: a
  // request larger than the quota is refused before anything is evicted; a label at its
  // quota frees its own DRAM (FreeDram of its blobs only). Then frees DRAM (FreeDram, any
  // label) as the tier needs; wakes the thread when the allocation crosses the tier's or
  // the label's high watermark. RESOURCE_EXHAUSTED naming the quota or the tier.
  absl::StatusOr<tiering::Extent> Allocate(absl::Mutex& mu, uint64_t bytes,
                                           const std::string& label)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Frees DRAM: drops DRAM copies of blobs also on SSD, and the bytes of leaves nothing
  // continues (to TEXT), in DRAM policy order; only blobs of label `*only` when given
  // (counted as its quota evictions). Returns extent bytes freed.
  uint64_t FreeDram(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                    const std::string* only = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Frees SSD space by dropping SSD copies, leaf-first (blobs without a DRAM copy become
  // TEXT); only blobs of label `*only` when given. Returns extent bytes freed; 0 without an
  // SSD tier.
  uint64_t FreeSsd(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                   const std::string* only = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Deletes TEXT records from the index (leaf-first, LRU) until `bytes` token bytes are
  // freed or nothing more may go.
  void EvictText(absl::Mutex& mu, uint64_t bytes, EvictReply* reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Evicts TEXT down to its budget (text_bytes) if it is over it, counting in `reply` if
  // given. A drop that found the blob's pages pinned (by a pending put's prefix, or by a
  // Pin of a blob below it) left it as TEXT over the budget (with text_bytes = 0: in the
  // index at all); whatever releases such a pin or removes what continued the blob calls
  // this (the end of a put, Unpin, Delete, every drop), so that it goes then rather than
  // at some later drop. Any TEXT record without holds may be erased.
  void TrimText(absl::Mutex& mu, EvictReply* reply = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Drops every byte copy of a linked record: it becomes TEXT (or leaves the index when
  // there is no TEXT tier). Enforces the TEXT budget. REQUIRES: no child has bytes.
  void DropToText(absl::Mutex& mu, BlobRecord* record, EvictReply* reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Evict(tier, bytes) as NodeEngine's contract says: kDram MoveOutOfDram, kSsd FreeSsd,
  // kText EvictText, each taking `mu` itself. INVALID_ARGUMENT for a tier this node
  // does not have (HBM; SSD when none).
  absl::StatusOr<EvictReply> Evict(absl::Mutex& mu, Tier tier, uint64_t bytes)
      ABSL_LOCKS_EXCLUDED(mu);

  // ---- moves (I/O without the lock)
  // Moves `bytes` out of DRAM: demotes blobs to SSD where there is one (a WriteBatch, a
  // Flush, one synced metadata batch) and admission and the blob's label's SSD quota
  // agree, else drops them as FreeDram; only blobs of label `*only` when given. Returns
  // extent bytes freed. Takes `mu`, and flushes the journal after releasing it.
  uint64_t MoveOutOfDram(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                         const std::string* only = nullptr) ABSL_LOCKS_EXCLUDED(mu);
  // The same with `mu` held on entry and exit (dropped during the I/O).
  uint64_t MoveOutOfDramLocked(absl::Mutex& mu, uint64_t bytes, EvictReply* reply,
                               const std::string* only = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Copies the SSD bytes of `records` (SSD-only ones not moving; others are skipped) into
  // fresh DRAM extents without the lock, verifies every chunk checksum and attaches them.
  // A record whose bytes are lost (checksum mismatch, DATA_LOSS) loses its SSD copy
  // (becomes TEXT if nothing continues it); after a transient error it keeps it. Returns
  // the first failure.
  absl::Status Promote(absl::Mutex& mu, const std::vector<BlobRecord*>& records)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Gets a read's records into DRAM: `resolve` (called under `mu`, once per round) fills
  // `records` with the read's records or fails; SSD-only ones are promoted (admission
  // decides, with this read counted as an SSD hit, whether each copy stays once the read
  // is done: else it is marked transient_dram), records being moved are waited for, and
  // the read is resolved again after every round, since `mu` was dropped. On success
  // every record in `records` is in DRAM. Errors: resolve's, RESOURCE_EXHAUSTED after 8
  // rounds (DRAM too small for the read's blobs at once), Promote's.
  absl::Status PromoteForRead(absl::Mutex& mu,
                              absl::FunctionRef<absl::Status(std::vector<BlobRecord*>*)> resolve,
                              std::vector<BlobRecord*>* records) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Prefetch's work on the segments of a match (NodeEngine::Prefetch): counts the pages
  // whose bytes a byte tier holds, queues TEXT blobs on `rebuild` (until it is full: the
  // rest stay TEXT for now) and promotes SSD-only blobs into DRAM (Promote: `mu` dropped
  // for the I/O). A failed promotion is only logged: Prefetch promises no bytes, the next
  // Match shows where they are. Segments whose blob left the index meanwhile are skipped.
  void Prefetch(absl::Mutex& mu, absl::Span<const Segment> segments, RebuildQueue& rebuild,
                PrefetchReply* reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Waits (dropping `mu`) until a move ends somewhere (a record's `moving` cleared).
  void WaitMoved(absl::Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

 private:
  void Loop();
  // One round of the thread: demotes labels above their DRAM quota's high watermark to the
  // low one, then the tier. Returns whether every demotion tried failed and nothing went.
  bool DemoteRound();
  // Makes room for `bytes` more of label `label` in `tier` under its quota (no quota: OK),
  // evicting the label's own blobs (FreeDram / FreeSsd restricted to it). RESOURCE_EXHAUSTED
  // (counted as a refusal) when `bytes` exceeds the quota or the label's blobs that may go
  // do not free enough.
  absl::Status MakeRoomUnderQuota(absl::Mutex& mu, Tier tier, const std::string& label,
                                  uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // An SSD extent for demoting `record`, under its label's SSD quota (MakeRoomUnderQuota)
  // and freeing SSD (FreeSsd) as the tier needs; charged to its label.
  absl::StatusOr<tiering::Extent> AllocateSsd(absl::Mutex& mu, const BlobRecord& record,
                                              EvictReply* reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void CheckLock(const absl::Mutex& mu) const;

  const TierMoverOptions options_;
  const Deps deps_;
  absl::CondVar pressure_;  // signalled when DRAM use passes the high watermark
  absl::CondVar moved_;     // signalled whenever a record's `moving` clears
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace strata::store::core
