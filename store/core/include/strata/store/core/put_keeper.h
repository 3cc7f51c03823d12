// PutKeeper: what a two-phase put does to the records. It begins a put (allocates its DRAM
// extent, evicting as needed, and adds its pending BlobRecord and its PendingPut), finds a
// pending put (aborting it when expired), aborts one (its record unlinked and released,
// its prefix pin dropped), and commits a verified put: into the index (insert, link,
// attach the DRAM extent, persist) or, when a TEXT blob of the key is linked, as that
// blob's refill (a rebuild: its chunk checksums must equal the original's). The checks of
// a request (PutTable::Validate, the parent, the key), the parent-chain walk and the
// checksum pass are the engine's.
//
// Ownership: a NodeEngine owns one; everything in Deps is borrowed and outlives it.
//
// Thread safety: no lock of its own, as the TierMover: every call is given the index lock
// as `mu` (annotated, so clang checks the callers). REQUIRES: `mu` is Deps::index_mu
// (DCHECKed). Begin may evict (TierMover::Allocate: no I/O).
//
// Errors: Begin RESOURCE_EXHAUSTED (DRAM full of what may not go) or the arena's; Find
// NOT_FOUND (unknown or expired put); Commit FAILED_PRECONDITION (a refill whose bytes
// differ from the original's: the put is aborted, the blob stays TEXT) or INTERNAL (the
// index refused the insert: cannot happen while the prefix is pinned; the put is
// aborted). Misuse CHECK-fails.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"
#include "strata/radix/radix_tree.h"
#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/meta_journal.h"
#include "strata/store/core/namespace_registry.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/put_table.h"
#include "strata/store/core/rebuild_queue.h"
#include "strata/store/core/record_keeper.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/store/core/tier_mover.h"
#include "strata/tiering/dram_arena.h"

namespace strata::store::core {

// A put the engine has checked, ready to begin.
struct NewPut {
  const radix::Namespace* ns = nullptr;
  radix::PrefixHash namespace_hash;
  const PutRequest* request = nullptr;
  radix::BlobKey key;
  radix::PrefixHash start_hash;
  uint32_t first_page = 0;
  uint32_t pages = 0;
  // The parent (linked, its children count already raised for this put), or nullptr.
  BlobRecord* parent = nullptr;
  // The whole sequence's tokens up to the blob's end, and the pin on the prefix.
  std::vector<radix::TokenId> sequence;
  radix::MatchHandle prefix_pin;
  absl::Time now;
};

class PutKeeper {
 public:
  struct Deps {
    NamespaceRegistry* registry = nullptr;
    BlobTable* table = nullptr;
    PutTable* puts = nullptr;
    TierLedger* ledger = nullptr;
    MetaJournal* journal = nullptr;
    RecordKeeper* keeper = nullptr;
    RebuildQueue* rebuild = nullptr;
    TierMover* mover = nullptr;
    const tiering::DramArena* dram = nullptr;  // the bytes a wider refill copies
    const absl::Mutex* index_mu = nullptr;
  };
  // REQUIRES: every dependency set.
  explicit PutKeeper(const Deps& deps);
  PutKeeper(const PutKeeper&) = delete;
  PutKeeper& operator=(const PutKeeper&) = delete;

  // Allocates the put's extent and adds its pending record (id from new_id) and PendingPut.
  // On failure the parent's children count and the prefix pin are given back.
  absl::StatusOr<BeginPutReply> Begin(absl::Mutex& mu, NewPut put,
                                      absl::FunctionRef<tiering::BlobId()> new_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A TEXT put (NodeEngine::PutText): the record (id from new_id) inserted into the index
  // and linked without bytes, persisted, TEXT trimmed to its budget; the prefix pin given
  // back. indexed_pages 0: every page was cached already, nothing kept.
  absl::StatusOr<BeginPutReply> AddText(absl::Mutex& mu, NewPut put,
                                        absl::FunctionRef<tiering::BlobId()> new_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The pending put `put_id` at `now`; an expired one is aborted (NOT_FOUND either way).
  absl::StatusOr<PendingPut*> Find(absl::Mutex& mu, uint64_t put_id, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Drops put `put_id`: its record is unlinked and released, its prefix pin given back,
  // and TEXT trimmed to its budget (TierMover::TrimText: a blob that pin kept may go now;
  // any TEXT record may be erased). REQUIRES: pending.
  void Abort(absl::Mutex& mu, uint64_t put_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Commits put `put_id`, whose checksums were verified: a refill of the linked TEXT record
  // of its key if there is one, else into the index (indexed_pages 0: redundant, dropped).
  // A TEXT record of the key may span fewer pages than the put ([a, q) of the put's
  // [b, q), b < a: written from another start, as a cluster's TEXT replicas and a rewrite
  // after a lost node are): its bytes, and those of its TEXT ancestors within [b, a), are
  // copied out of the put into extents of their own, the overlapping chunk checksums
  // compared first; when no extent can be had for the TEXT record (RESOURCE_EXHAUSTED, the
  // DRAM tier or the label's quota full) the put is dropped and the blob stays TEXT. A TEXT
  // record spanning more pages than the put cannot be refilled by it: FAILED_PRECONDITION,
  // naming the pages a rebuild must write.
  // REQUIRES: pending, not committing.
  absl::StatusOr<CommitPutReply> Commit(absl::Mutex& mu, uint64_t put_id, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The refusal of a put from `first_page` whose key is that of the TEXT record `text`,
  // which starts before it (Commit's header).
  static absl::Status NarrowerThanText(uint32_t first_page, const BlobRecord& text);

 private:
  // Abort without the TEXT trim: for Refill, which holds the TEXT record it fills.
  void Discard(absl::Mutex& mu, uint64_t put_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  absl::StatusOr<CommitPutReply> Refill(absl::Mutex& mu, uint64_t put_id, BlobRecord* text,
                                        absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Refill of a TEXT record spanning other pages than the put (Commit's header).
  absl::StatusOr<CommitPutReply> RefillWithin(absl::Mutex& mu, uint64_t put_id, BlobRecord* text,
                                              absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The first chunk (layer-major index into text's checksums) where the put record `put`
  // and the TEXT record `text` it spans differ, or nullopt where they agree.
  static std::optional<uint64_t> FirstDifferentChunk(const BlobRecord& put, const BlobRecord& text);
  void CheckLock(const absl::Mutex& mu) const;
  // The record a put adds (not linked; no extent), its parent fields from put.parent.
  static std::unique_ptr<BlobRecord> NewRecord(const NamespaceEntry& entry, const NewPut& put,
                                               tiering::BlobId id);
  // The put's namespace entry, registered on first use.
  const NamespaceEntry& EntryOf(const NewPut& put);

  const Deps deps_;
};

}  // namespace strata::store::core
