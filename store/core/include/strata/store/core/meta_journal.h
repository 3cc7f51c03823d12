// MetaJournal: the node's durable metadata (store/meta) as the engine writes and restores
// it. It turns blob records into meta::BlobMeta, writes them (with their namespace, the
// first time one is needed), deletes them, counts failed writes, and on restart loads the
// store and checks each stored record against what is restored before it.
//
// What is written when (node_engine_meta.cc has the engine's side):
//   commit           PutBlob (+ PutNamespace the first time), not synced: a crash of the
//                    process keeps it (the WAL is in the page cache), a crash of the
//                    machine may lose it, which loses cache, never correctness
//   demotion         PutBlob with the SSD extent, synced, after the extent's bytes were
//                    flushed: a blob becomes visible on SSD only once durable there
//   SSD copy dropped PutBlob without the extent, not synced; the extent may be reused at
//                    once because any later synced write persists this one first (one log)
//   unlink           DeleteBlob, not synced
//   pin, unpin       PutBlob with the flag, not synced
// A failed write is logged and counted (errors()); the record stays cache. A namespace
// whose write failed is written again with the next record that needs it (a record of
// that namespace queued meanwhile is refused by the store, counted, and stays cache only).
//
// Queued writes: Persist, Forget and Queue only queue their batch (in memory, under mu_);
// Flush applies the queue in order. The engine queues under its index lock and flushes
// after releasing it (FlushOnExit), so no store write runs under the index lock. The
// synced demotion record is queued too (Queue, under the index lock, so it keeps its
// place among the record changes) and written with Await after the lock is dropped; the
// mover attaches the SSD extent only once Await says it is durable. Apply (the restart's
// fix-ups) first flushes the queue, so the store sees every batch in the order it was
// queued or applied.
//
// Ownership: a NodeEngine owns one; the store is shared with the node (null: nothing is
// written, Load finds nothing). Records are read, never kept.
//
// Thread safety: every method may be called from any thread. The queue, the set of
// namespaces already stored and the error count have their own lock (mu_), held only to
// read or change them, never across a store write; flush_mu_ serializes the writes
// (Flush, Apply), taken before mu_. The ORDER of writes is the order of Persist, Forget
// and Apply calls: a caller that needs them to follow its record changes (the engine
// does) makes those calls under its own lock. Calls that read a
// BlobRecord or a BlobTable REQUIRE the lock that guards them (the engine's index lock).
//
// Errors: Apply returns the store's error; Load the store's LoadAll error; CheckRestored
// DATA_LOSS (a record inconsistent in itself or with its parent) or FAILED_PRECONDITION
// (its parent was not restored).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/report/node_tiers.h"
#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/meta/blob_meta.h"
#include "strata/store/meta/meta_batch.h"
#include "strata/store/meta/meta_store.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

class MetaJournal {
 public:
  explicit MetaJournal(std::shared_ptr<meta::MetaStore> store) : store_(std::move(store)) {}
  MetaJournal(const MetaJournal&) = delete;
  MetaJournal& operator=(const MetaJournal&) = delete;

  // Whether there is a store to write to.
  bool enabled() const { return store_ != nullptr; }

  // What is stored of `record`.
  static meta::BlobMeta MetaOf(const BlobRecord& record);

  // Adds the record to `batch`, and its namespace until a write that carried it succeeded
  // (so no batch reaches the store before the namespace it needs, in whatever order
  // concurrent callers queue and flush).
  void Add(const BlobRecord& record, meta::MetaBatch* batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Applies the queued writes, then `batch` (a no-op without a store, or when empty); a
  // failure is logged and counted, and the batch's namespaces count as not stored.
  absl::Status Apply(const meta::MetaBatch& batch) ABSL_LOCKS_EXCLUDED(mu_, flush_mu_);
  // Queues a write of a linked record's current state, not synced (nothing for other
  // states).
  void Persist(const BlobRecord& record) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues the deletion of the record of `key`, not synced.
  void Forget(const radix::BlobKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // Applies the queued writes in order (failures logged and counted, as Apply's).
  void Flush() ABSL_LOCKS_EXCLUDED(mu_, flush_mu_);

  // A queued batch whose outcome its caller waits for (Await). The status is written by
  // whichever flush applies the batch, under flush_mu_, and read by Await after taking it.
  using Ticket = std::shared_ptr<absl::Status>;
  // Queues `batch` like Persist does (in order with them; it may be synced), for the caller
  // to Await its outcome. A ticket that is already OK without a store or for an empty batch.
  Ticket Queue(meta::MetaBatch batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Applies the queue up to and including the ticket's batch (if no other flush did) and
  // returns the batch's outcome. REQUIRES: not under the lock the batch was queued under
  // (it writes to the store).
  absl::Status Await(const Ticket& ticket) ABSL_LOCKS_EXCLUDED(mu_, flush_mu_);
  // Adds `record` to `batch` as Add does, but with `ssd` as its SSD extent (a demotion's
  // record, written before the extent is attached).
  void AddDemoted(const BlobRecord& record, const tiering::Extent& ssd, meta::MetaBatch* batch)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether writes are queued (a relaxed read: cheap enough for every engine call).
  bool pending() const { return queued_.load(std::memory_order_relaxed) > 0; }

  // Flushes the journal when it goes out of scope: declare it before the lock under
  // which writes are queued, so the flush runs after that lock is released.
  class FlushOnExit {
   public:
    explicit FlushOnExit(MetaJournal* journal) : journal_(journal) {}
    ~FlushOnExit() {
      if (journal_->pending()) journal_->Flush();
    }
    FlushOnExit(const FlushOnExit&) = delete;
    FlushOnExit& operator=(const FlushOnExit&) = delete;

   private:
    MetaJournal* const journal_;
  };
  // Failed writes so far.
  uint64_t errors() const ABSL_LOCKS_EXCLUDED(mu_);
  // The store's size and memory (report::MetaStats); all 0 without a store.
  report::MetaStats StoreStats() const;

  // ---- restart
  struct Loaded {
    absl::flat_hash_map<radix::PrefixHash, radix::Namespace> namespaces;
    std::vector<meta::BlobMeta> blobs;  // parents before their children (by first page)
    uint64_t corrupt = 0;               // records that did not decode
    absl::Duration load_time;
  };
  // Reads the whole store (nothing without one); its namespaces count as stored.
  absl::StatusOr<Loaded> Load() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether stored record `m` of namespace `ns` may be restored into `table` as it is now
  // (its sizes fit the layout, its key follows from its start hash and tokens, its parent
  // is linked there and consistent); its parent record on success, else nullptr.
  // REQUIRES: the lock that guards `table`, shared at least.
  static absl::Status CheckRestored(const meta::BlobMeta& m, const radix::Namespace& ns,
                                    const BlobTable& table, BlobRecord** parent);

 private:
  struct Queued {
    meta::MetaBatch batch;
    Ticket outcome;  // null: nobody waits for it
  };
  void Enqueue(meta::MetaBatch batch, Ticket outcome = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  void AddMeta(const BlobRecord& record, meta::BlobMeta m, meta::MetaBatch* batch)
      ABSL_LOCKS_EXCLUDED(mu_);
  void FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status ApplyNow(const meta::MetaBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<meta::MetaStore> store_;
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> queued_{0};  // queue_.size(), readable without mu_
  absl::flat_hash_set<radix::PrefixHash> stored_namespaces_ ABSL_GUARDED_BY(mu_);
  uint64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace strata::store::core
