// NodeEngine: the storage node's engine. It knows nothing of gRPC, UCX or HTTP; the
// control-plane adapter (store/rpc) and the data plane (store/dataplane) are thin layers
// over the calls below. Design: docs/design/node-and-client.md.
//
// What it owns (store/core/README.md, "Components")
//   The engine composes parts, each a class with its own header and contract:
//     NamespaceRegistry  h_0 -> Namespace; one radix::RadixTree per page size
//     BlobTable          one record per blob (key, namespace, parent, tokens, checksums,
//                        extents, pages in the index, leases...)
//     LeaseTable, PutTable  read leases; pending puts by id and key, their deadlines
//     TierLedger         where each blob's bytes are: extents, the parent's child counts,
//                        the eviction and admission policies, the tick, the TEXT tier
//     MetaJournal        what is written to the metadata store, and restart's checks
//     RebuildQueue       TEXT blobs to rebuild, tasks in flight, their stats
//     LookupStats        Match's page counts by phase and tier, the live miss-ratio curve
//     TierMover          eviction under pressure, allocation, demotion and promotion (I/O
//                        outside mu_), the background mover thread and its watermarks
//     RecordKeeper       the record life cycle: holds, release, unlinking, index removal,
//                        pins, leases started and ended, the parent-chain token walks
//                        (the mover reaches it as its TierMover::Records)
//     PutKeeper          what a put does to the records: begin, find, abort, commit into
//                        the index or as a TEXT blob's refill
//     Restorer           the restart: stored records back into the index, parents first
//     IdGenerator        put, lease and record ids (lock-free)
//   and itself keeps the call logic (checks, locking, the lock-free stretches) and a
//   reaper thread. It owns the DRAM
//   tier (tiering::DramArena). Shared with the node: the SSD tier (options.ssd) and the
//   metadata store (options.meta). The Clock is borrowed.
//
// Blob life cycle
//   BeginPut -> pending (bytes arriving; invisible to every reader) -> CommitPut ->
//   linked (in the index: Match finds it, Read/Stat/List/Delete/Pin name it) ->
//   unlinked (evicted or deleted: new readers miss it; existing leases and HeldSpans still
//   read its bytes) -> bytes freed when the last lease and HeldSpan go. The record itself
//   (its tokens) stays while a blob that continues it (its child) still has a record: a
//   new blob's prefix tokens are found by walking up the parent chain.
//   A blob's key is h_b = chain(h_a, own tokens), h_a = the parent's start hash chained
//   over the parent's tokens up to the parent pages (h_0 without a parent).
//
// Leases and held bytes
//   Read grants one lease over the blobs it names. While a lease (or a HeldSpan) holds a
//   blob its bytes are never freed; eviction or Delete may unlink it meanwhile. Leases
//   expire (ttl per Read, default options.default_lease_ttl, at most max_lease_ttl);
//   puts are abandoned put_ttl after their last activity. ReapExpired() reclaims both; a
//   background thread calls it every options.reap_interval, so a dead client leaks
//   nothing. A call naming an expired lease or put answers NOT_FOUND even before reaping.
//
// Tiers and eviction (store/core/README.md, "Tier states", "Eviction"; the HBM tier, an
// inclusive cache of hot DRAM blobs on the node's GPU: hbm_cache.h)
//   A linked blob's bytes are in DRAM, on SSD (options.ssd), both, or nowhere (TEXT:
//   tokens and checksums kept, Match returns the tokens, Read is a miss). Eviction is per
//   blob through one tiering::EvictionPolicy per tier, leaf-first, and never touches
//   pinned paths, leased or held blobs, or blobs being moved. Allocation pressure frees
//   DRAM without I/O (drops DRAM copies of SSD blobs, or leaves to TEXT); a background
//   mover (and Evict(kDram)) demotes to SSD between the watermarks, I/O outside the lock;
//   Read promotes SSD-only blobs, verifying every chunk. TEXT over options.text_bytes is
//   deleted from the index, leaf-first. Hits, misses, evictions, promotions and
//   demotions are counted in each tier's TierCounters.
//
// Thread safety
//   Every method is thread-safe. One absl::Mutex, the index lock mu_, guards the index
//   and what is one with it: the registry, the BlobTable, the LeaseTable, the PutTable and
//   the TierLedger (Match, Stat, List and Tiers take it shared). Independent state has its
//   own lock: LookupStats (atomics and the curve estimator's lock; updated and read after
//   mu_ is dropped), RebuildQueue (its queue; a PullRebuildTasks long-poll waits on it
//   without mu_), MetaJournal (its queue, namespace set and error count). The TierMover,
//   RecordKeeper, PutKeeper and Restorer have no lock: each call is given mu_ (the
//   mover's thread takes mu_ itself). Lock order: mu_, then a
//   RadixTree's lock or a component's; no component lock is held while taking mu_. Bulk
//   bytes are never touched under mu_: the data plane copies through HeldSpans without
//   it, CommitPut verifies checksums after dropping it (the put is marked as committing
//   meanwhile), and demotion and promotion drop it for their I/O. Metadata writes are
//   queued under mu_ (so they reach the store in the order of the record changes) and
//   applied after each call releases it (MetaJournal::FlushOnExit); a demotion's synced
//   record is queued under it too and awaited after dropping it, its SSD extent attached
//   only once that write is durable. BeginPut with a parent, Delete and Pin collect the
//   prefix's chain of records under mu_ (cost ∝ blobs on it) and copy and hash its tokens
//   after dropping it, the record held (tokens never change; a held record's ancestors
//   stay). Still under mu_: PullRebuildTasks assembles each task's sequence tokens, a
//   restart its records'. With options.measure_lock_hold, lock_hold() reports mu_'s hold
//   times.
//
// Tenants (access_scope.h)
//   Every call that names a namespace, blob, lease or put takes the caller's AccessScope
//   (default: all). Outside it a call answers exactly as for one that does not exist —
//   Match and Prefetch as for an unknown namespace, Read as for a blob not in the index,
//   Stat, Delete, Pin, Unpin and RequestRebuild as for a key not in the index, lease and
//   put calls as for an unknown lease or put — so no other tenant's existence shows;
//   BeginPut outside it is PERMISSION_DENIED; List and PullRebuildTasks see only the
//   scope's namespaces.
//
// Errors (codes as in strata/base/status_macros.h)
//   Create       INVALID_ARGUMENT bad options; errors of tiering::DramArena::Create
//   Match        NOT_FOUND namespace not known to this node (no BeginPut named it yet)
//   BeginPut     UNAVAILABLE draining; INVALID_ARGUMENT tokens empty or not whole pages,
//                bytes != pages * BytesPerPage, bytes > max_blob_bytes, wrong checksum
//                count, key mismatch; FAILED_PRECONDITION parent unknown (not in the index,
//                or of another namespace), parent pages outside (a_p, b_p], or the
//                parent's prefix no longer fully cached; RESOURCE_EXHAUSTED tier full
//                after eviction
//   PutTarget    NOT_FOUND unknown/expired put; FAILED_PRECONDITION commit in progress
//   PutReceived  NOT_FOUND unknown/expired put; OUT_OF_RANGE past the blob's bytes;
//                FAILED_PRECONDITION commit in progress
//   CommitPut    NOT_FOUND unknown/expired put; FAILED_PRECONDITION bytes missing, a
//                HeldSpan of the put still alive, or a commit already in progress (the put
//                stays pending in these cases); DATA_LOSS a chunk checksum mismatch (the put
//                is aborted)
//   AbortPut     NOT_FOUND unknown/expired put; FAILED_PRECONDITION commit in progress
//   Read         INVALID_ARGUMENT no ranges, an empty page or layer range, negative ttl;
//                NOT_FOUND a blob not in the index (evicted or deleted: a miss) or not in
//                this namespace; FAILED_PRECONDITION the blob's namespace has the same
//                tenant and model but another layout; OUT_OF_RANGE pages or layers past the
//                blob. On error no lease is granted.
//   ReadSource   NOT_FOUND lease unknown or expired; PERMISSION_DENIED blob not under the
//                lease; OUT_OF_RANGE [offset, offset + length) not inside the blob
//   RenewLease   NOT_FOUND lease unknown or expired; INVALID_ARGUMENT negative ttl
//   Release      NOT_FOUND lease unknown or expired
//   Delete       NOT_FOUND not in the index; FAILED_PRECONDITION the blob, a blob below
//                it, or a pending put continuing it is pinned
//   Pin, Unpin   NOT_FOUND not in the index (Pin and Unpin are idempotent)
//   Stat         NOT_FOUND not in the index
//   List         INVALID_ARGUMENT a page token this engine did not write
//   Evict        INVALID_ARGUMENT a tier this node does not have (HBM without options.hbm;
//                SSD when none)
//   RequestRebuild NOT_FOUND not in the index; RESOURCE_EXHAUSTED the queue is full
//                (options.max_rebuild_queue)
//   PullRebuildTasks INVALID_ARGUMENT max_tasks == 0
//   Prefetch     NOT_FOUND namespace not known to this node
//   Drain        DEADLINE_EXCEEDED puts, leases or transfers still in flight after `timeout`
//                (draining stays on)
//   Tiers, ReapExpired never fail.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/radix/namespace.h"
#include "strata/radix/radix_tree.h"
#include "strata/store/core/access_scope.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/clock.h"
#include "strata/store/core/hbm_cache.h"
#include "strata/store/core/held_span.h"
#include "strata/store/core/id_generator.h"
#include "strata/store/core/lease_table.h"
#include "strata/store/core/lock_hold.h"
#include "strata/store/core/lookup_stats.h"
#include "strata/store/core/meta_journal.h"
#include "strata/store/core/namespace_registry.h"
#include "strata/store/core/node_engine_options.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/pending_put.h"
#include "strata/store/core/put_keeper.h"
#include "strata/store/core/put_table.h"
#include "strata/store/core/rebuild_queue.h"
#include "strata/store/core/record_keeper.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/store/core/tier_mover.h"
#include "strata/store/meta/blob_meta.h"
#include "strata/store/meta/meta_batch.h"
#include "strata/store/meta/meta_store.h"
#include "strata/tiering/admission_policy.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

class NodeEngine {
 public:
  static absl::StatusOr<std::unique_ptr<NodeEngine>> Create(const NodeEngineOptions& options);

  // Stops the reaper. REQUIRES: no HeldSpan of this engine is alive, no call in flight.
  ~NodeEngine();
  NodeEngine(const NodeEngine&) = delete;
  NodeEngine& operator=(const NodeEngine&) = delete;

  // The DRAM tier, for the data plane to register (base(), mapped_bytes()) and for
  // same-host clients (OpenReadOnlyFd()). Extents in replies are offsets into it.
  const tiering::DramArena& dram() const { return *arena_; }
  // What Create restored from the metadata store.
  RestoreReport restored() const ABSL_LOCKS_EXCLUDED(mu_);
  const NodeEngineOptions& options() const { return options_; }
  // Hold times of the engine's index lock since Create (empty unless
  // options.measure_lock_hold). Waits on the lock's condition variables and the I/O
  // stretches that drop it are not counted as held.
  LockHoldStats lock_hold() const;

  // ---- lookups
  // Longest cached prefix of the whole pages of `tokens` in `ns`. Counts the query's page
  // hits and misses under `phase` (inferred from the answer when kUnspecified) and feeds
  // its pages to the miss-ratio-curve estimator (after the lock is dropped).
  // With `start`, `tokens` are the pages from start->pages on and the lookup begins at the
  // segment rooted at start->hash (blobs put with that SegmentStart and their children);
  // the answer counts pages from the query's first page (start->pages) as without one.
  absl::StatusOr<MatchResult> Match(const radix::Namespace& ns,
                                    absl::Span<const radix::TokenId> tokens,
                                    LookupPhase phase = LookupPhase::kUnspecified,
                                    const AccessScope& scope = AccessScope::All(),
                                    const std::optional<SegmentStart>& start = std::nullopt) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- two-phase put
  absl::StatusOr<BeginPutReply> BeginPut(const radix::Namespace& ns, const PutRequest& request,
                                         const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // A TEXT put (cluster replicas of token text): the blob as BeginPut names it — tokens,
  // size, chunk checksums — indexed at once as TEXT, without its bytes: Match answers it as
  // TEXT, a rebuild or a put of the key refills it (its bytes must match the checksums).
  // exists when the key is linked (with bytes or as TEXT) or being put; else
  // indexed_pages (0: every page was cached already, nothing kept). Errors as BeginPut
  // (no RESOURCE_EXHAUSTED: TEXT over its budget is trimmed, leaf first).
  absl::StatusOr<BeginPutReply> PutText(const radix::Namespace& ns, const PutRequest& request,
                                        const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // The whole blob's destination bytes ([0, bytes) of the blob) for the data plane to
  // receive into at any offsets; refreshes the put's deadline.
  absl::StatusOr<HeldSpan> PutTarget(uint64_t put_id, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Records that [offset, offset + length) of the blob has been written (ranges may
  // overlap and arrive in any order); refreshes the deadline.
  absl::Status PutReceived(uint64_t put_id, uint64_t offset, uint64_t length,
                           const AccessScope& scope = AccessScope::All()) ABSL_LOCKS_EXCLUDED(mu_);
  // Verifies every chunk checksum, inserts the blob into the index and makes it visible.
  absl::StatusOr<CommitPutReply> CommitPut(uint64_t put_id,
                                           const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the put; its bytes are freed (once no HeldSpan holds them).
  absl::Status AbortPut(uint64_t put_id, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- reads
  // One lease over the blobs of `ranges` (ttl 0: the default TTL).
  absl::StatusOr<ReadReply> Read(const radix::Namespace& ns, absl::Span<const ReadRange> ranges,
                                 absl::Duration ttl = absl::ZeroDuration(),
                                 const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Bytes [offset, offset + length) of `blob` for the data plane to send, checked against
  // the lease. length 0 yields an empty span.
  absl::StatusOr<HeldSpan> ReadSource(uint64_t lease_id, const radix::BlobKey& blob,
                                      uint64_t offset, uint64_t length,
                                      const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // OK while the lease is live (not expired, released or reaped); NOT_FOUND else. A live
  // lease was live since it was granted, so none of the bytes it names was freed meanwhile.
  absl::Status CheckLease(uint64_t lease_id, const AccessScope& scope = AccessScope::All()) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Moves the lease's expiry to now + ttl (0: the default TTL); returns the new expiry.
  absl::StatusOr<absl::Time> RenewLease(uint64_t lease_id, absl::Duration ttl,
                                        const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Release(uint64_t lease_id, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);

  // ---- admin
  // Removes the blob's first page and everything cached below it from the index
  // (RadixTree::RemoveSubtree of the sequence's pages [0, first_page + 1)); each blob
  // whose last page goes is unlinked and its bytes freed once unleased. Pages are
  // content: if the blob's first pages were cached by another blob first (same tokens,
  // first writer wins), those pages, and what hangs below them, go too.
  absl::StatusOr<DeleteReply> Delete(const radix::BlobKey& key,
                                     const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Pins the blob's whole prefix path in the index against eviction and removal.
  absl::Status Pin(const radix::BlobKey& key, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Unpin(const radix::BlobKey& key, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<BlobInfo> Stat(const radix::BlobKey& key, bool with_tokens = false,
                                const AccessScope& scope = AccessScope::All()) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Only blobs of namespaces in `scope`.
  absl::StatusOr<ListReply> List(const ListRequest& request,
                                 const AccessScope& scope = AccessScope::All()) const
      ABSL_LOCKS_EXCLUDED(mu_);
  NodeTiers Tiers() const ABSL_LOCKS_EXCLUDED(mu_);
  // Evicts from `tier` until at least `bytes` bytes are freed or nothing more can go:
  // kDram demotes blobs to SSD (when the node has one and admission agrees) or drops their
  // bytes to TEXT; kSsd drops SSD copies (blobs without a DRAM copy become TEXT); kText
  // deletes TEXT records (leaf-first) from the index.
  absl::StatusOr<EvictReply> Evict(Tier tier, uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- cluster
  // The blobs whose Reads reached options.hot_reads since the last call (each once), oldest
  // first; at most kMaxHotBlobs wait (more are not reported: not replicated).
  std::vector<radix::BlobKey> TakeHotBlobs() ABSL_LOCKS_EXCLUDED(mu_);
  // ---- the HBM tier (options.hbm; hbm_cache.h)
  // The HBM tier, if the node has one (a same-host GPU reader maps its pool).
  tiering::HbmTier* hbm() const { return hbm_.get(); }
  // Runs one HBM admission round now: copies the blobs that became due (read
  // options.hbm_admit_reads times) into HBM. Returns the copies made. The admission thread
  // does this on its own (it runs with options.background_demotion); tests and benchmarks
  // call it to have the copies at a known point.
  uint64_t AdmitToHbm() ABSL_LOCKS_EXCLUDED(mu_);
  // Records that `copies` nodes (this one included) hold the blob's bytes: Match reports it
  // (Segment.replicas). Unknown keys are ignored.
  void MarkReplicated(const radix::BlobKey& key, uint32_t copies) ABSL_LOCKS_EXCLUDED(mu_);
  static constexpr size_t kMaxHotBlobs = 4096;

  // ---- rebuild from text
  // Queues a rebuild of blob `key` if it is TEXT; with_prefix: also of every TEXT blob on
  // its prefix path (parents first, so a worker can fill them in order).
  absl::StatusOr<RebuildRequestReply> RequestRebuild(const radix::BlobKey& key, bool with_prefix,
                                                     const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Hands out up to `max_tasks` queued tasks (oldest first), waiting up to `wait` (at most
  // 60 s) for the first. Each is leased to the caller until its deadline
  // (options.rebuild_task_ttl); a put that fills the blob completes it, else it is queued
  // again. An empty vector when nothing came within `wait`.
  // Only tasks of namespaces in `scope` (others stay queued, in order, for workers whose
  // scope has them).
  absl::StatusOr<std::vector<RebuildTask>> PullRebuildTasks(
      uint32_t max_tasks, absl::Duration wait, const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Matches `tokens` and gets the matched prefix ready ahead of need: promotes its
  // SSD-only blobs into DRAM (waiting for that I/O; a failure shows in the next Match)
  // and queues rebuilds of its TEXT blobs (without waiting for them).
  absl::StatusOr<PrefetchReply> Prefetch(const radix::Namespace& ns,
                                         absl::Span<const radix::TokenId> tokens,
                                         const AccessScope& scope = AccessScope::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops accepting puts (BeginPut answers UNAVAILABLE from now on) and waits, up to
  // `timeout` of real time, until no put is pending, no lease is held and no HeldSpan is
  // alive (no transfer in flight). Draining cannot be undone: a drained node is stopped.
  absl::Status Drain(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  bool draining() const ABSL_LOCKS_EXCLUDED(mu_);

  // Releases expired leases and aborts abandoned puts (a put whose commit is in progress
  // is left alone).
  ReapReply ReapExpired() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class HeldSpan;

  using Policies = TierPolicies;
  NodeEngine(const NodeEngineOptions& options, Clock* clock,
             std::unique_ptr<tiering::DramArena> arena, Policies policies, uint64_t id_secret);

  // ---- restart (node_engine.cc; the Restorer does the work)
  // Rebuilds the index from options.meta (Create calls it once).
  absl::StatusOr<RestoreReport> RestoreFromMeta() ABSL_LOCKS_EXCLUDED(mu_);
  void DropHold(uint64_t record_id) ABSL_LOCKS_EXCLUDED(mu_);
  bool QuiescentLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReaperLoop();

  // ---- token walks without the lock (node_engine_admin.cc)
  // For Delete and Pin: the linked record of `key`, held, and its sequence tokens up to
  // its end page (whole_blob) or its first page + 1, assembled after dropping the lock;
  // nullptr (no hold) when it is pinned. NOT_FOUND when not in the index. The caller
  // ends the hold with UnholdWalked.
  absl::StatusOr<BlobRecord*> WalkUnpinned(const radix::BlobKey& key, bool whole_blob,
                                           const AccessScope& scope,
                                           std::vector<radix::TokenId>* tokens)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the hold a walk took on `record` (releasing it: it may be erased); whether it is
  // still linked.
  bool UnholdWalked(BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // BeginPut (text_only false) and PutText (true): the checks, the key and the prefix pin
  // are one; then a pending put with its extent, or a TEXT record in the index.
  absl::StatusOr<BeginPutReply> StartPut(const radix::Namespace& ns, const PutRequest& request,
                                         const AccessScope& scope, bool text_only)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The pending put `put_id` if `scope` allows its namespace; else NOT_FOUND exactly as
  // for a put that does not exist.
  absl::StatusOr<PendingPut*> FindPutLocked(uint64_t put_id, absl::Time now,
                                            const AccessScope& scope)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- leases (node_engine_read.cc)
  // The linked records the ranges name, checked (the errors of Read).
  absl::Status ResolveReadLocked(const radix::Namespace& ns, radix::PrefixHash h0,
                                 absl::Span<const ReadRange> ranges, const AccessScope& scope,
                                 std::vector<BlobRecord*>* records)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NodeEngineOptions options_;
  Clock* const clock_;
  // Declared before everything that points into it: destroyed last.
  const std::unique_ptr<tiering::DramArena> arena_;
  IdGenerator ids_;  // thread-safe, lock-free

  mutable absl::Mutex mu_;
  // The trees outlive the records and puts below, whose MatchHandles pin their nodes.
  NamespaceRegistry registry_ ABSL_GUARDED_BY(mu_);
  BlobTable table_ ABSL_GUARDED_BY(mu_);
  PutTable puts_ ABSL_GUARDED_BY(mu_);  // one with the records: under the same lock
  LeaseTable leases_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<radix::BlobKey> hot_ ABSL_GUARDED_BY(mu_);  // TakeHotBlobs
  // Match's page counts and the live miss-ratio curve: atomics and the estimator's own
  // lock, never under mu_.
  mutable LookupStats lookup_stats_;

  // ---- tiers
  const std::shared_ptr<tiering::Tier> ssd_;     // null: no SSD tier
  const std::shared_ptr<tiering::HbmTier> hbm_;  // null: no HBM tier
  // Each record's tier placement, the tier policies, the tick and the TEXT tier: one
  // with the records, so under mu_.
  TierLedger ledger_ ABSL_GUARDED_BY(mu_);
  // Durable metadata: writes made under mu_ (so they follow the record changes); its
  // own lock guards only its namespace set and error count.
  MetaJournal journal_;
  RestoreReport restore_ ABSL_GUARDED_BY(mu_);

  // ---- rebuild queue (node_engine_rebuild.cc): its own lock, taken after mu_; the
  // calls that touch records are made with mu_ held, a puller waits without it.
  RebuildQueue rebuild_;

  // The record life cycle (holds, release, unlinking, index removal, pins, token walks):
  // no lock of its own, every call is given mu_. The mover reaches it as its Records.
  RecordKeeper keeper_;

  // Hold times of mu_; lock_hold_ points at it when options.measure_lock_hold (every
  // scope that takes mu_ passes lock_hold_), else is null.
  mutable LockHoldHistogram lock_hold_histogram_;
  LockHoldHistogram* const lock_hold_;

  // Eviction, allocation, demotion and promotion, and the background mover thread: no
  // lock of its own, every call is given mu_. Declared after everything it borrows.
  TierMover mover_;
  // What a put does to the records (begin, find, abort, commit or refill): no lock of its
  // own, every call is given mu_.
  PutKeeper put_keeper_;
  // The HBM tier's copies of hot DRAM blobs: admission (its own thread and queue lock),
  // demotion; the records' side is given mu_.
  HbmCache hbm_cache_;

  absl::Notification stop_reaper_;
  std::thread reaper_;
};

}  // namespace strata::store::core
