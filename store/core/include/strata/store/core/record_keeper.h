// RecordKeeper: the blob records' life cycle after they are made. It counts holds (a
// HeldSpan's, a move's, a walk's), frees what nothing needs any more of an unlinked record
// (its bytes once unleased and unheld, the record once no child chains through it,
// cascading up the parent chain), unlinks blobs that lose their last index page, removes a
// blob's subtree from the index, pins and unpins prefix paths, ends leases, and assembles
// a blob's sequence tokens up the parent chain. It is the TierMover's view of the records
// (TierMover::Records).
//
// Token walks without the index lock. A record's tokens, first_page, pages, parent_id and
// ns never change after it is made, and a record is erased only when it is unlinked,
// unleased, unheld, not moving and no child record names it as parent (children == 0).
// So the records on a chain stay alive, with their tokens, as long as the first one is
// held: ChainOf collects the chain under the lock (pointer lookups, cost ∝ the number of
// blobs on it), and Assemble copies the tokens after the lock is dropped (cost ∝ the
// tokens). REQUIRES for Assemble: every record of the chain stays alive, e.g. its first
// record held (Hold) from ChainOf until Assemble returns.
//
// Ownership: a NodeEngine owns one. Everything in Deps is borrowed and outlives it.
//
// Thread safety: no lock of its own, as the TierMover: what it reads and changes (records,
// the table, the ledger, its hold count) is guarded by the owner's index lock, passed to
// each call as `mu` and annotated, so clang's analysis checks every caller. REQUIRES: `mu`
// is Deps::index_mu (DCHECKed); the TierMover::Records overrides assert it held. Assemble
// and BlobInfoOf-style readers of immutable fields need no lock (see above). Lock order:
// the index lock, then a RadixTree's (RemoveSubtree, Match with a pin).
//
// Errors: RemoveFromIndex FAILED_PRECONDITION (a pin, or a pending put's match, holds
// pages of the subtree) or INTERNAL (the tree refused a removal it should not). Misuse
// (unholding an unheld record, a broken parent chain) CHECK-fails.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/radix/radix_tree.h"
#include "strata/radix/token_span.h"
#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/lease_table.h"
#include "strata/store/core/meta_journal.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/rebuild_queue.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/store/core/tier_mover.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

// The records whose own tokens make up pages [root_page, root_page + pages) of a sequence,
// i.e. pages [0, pages) under its index root (BlobRecord::root_hash): (record, own pages
// taken), from the last blob up to the root record (at page 0, or a segment start).
struct TokenChain {
  std::vector<std::pair<const BlobRecord*, uint32_t>> links;
  uint32_t pages = 0;
  uint32_t page_tokens = 0;
};

class RecordKeeper : public TierMover::Records {
 public:
  struct Deps {
    BlobTable* table = nullptr;
    TierLedger* ledger = nullptr;
    MetaJournal* journal = nullptr;
    RebuildQueue* rebuild = nullptr;
    tiering::DramArena* dram = nullptr;
    tiering::Tier* ssd = nullptr;  // null: no SSD tier
    const absl::Mutex* index_mu = nullptr;
  };
  // REQUIRES: every dependency but ssd set.
  explicit RecordKeeper(const Deps& deps);
  RecordKeeper(const RecordKeeper&) = delete;
  RecordKeeper& operator=(const RecordKeeper&) = delete;

  // ---- holds
  // Keeps the record (its bytes and the record itself) until Unhold; counted in holds().
  void Hold(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Ends a Hold without releasing (call Release after it where the record may be free).
  void Unhold(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Holds alive now (what Drain waits for).
  uint64_t holds(const absl::Mutex& mu) const ABSL_SHARED_LOCKS_REQUIRED(mu);

  // ---- release and unlinking
  // Drops a transient DRAM copy once unleased; frees the bytes of an unlinked record that
  // nothing holds, erases a record without bytes that no child needs, and cascades to its
  // parent. Returns the DRAM extent bytes freed. `record` may be erased.
  uint64_t Release(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Takes a linked record out of the index's bookkeeping (pin, ledger, table, journal):
  // new readers miss it. Release frees it later. REQUIRES: linked, not pinned.
  void Unlink(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Applies the index's removal report: each blob that loses its last page is unlinked
  // (an eviction counted in DRAM's counters when count_evictions) and released. Returns the
  // blobs unlinked; adds freed bytes to *bytes_freed.
  uint64_t ApplyRemovedSpans(const absl::Mutex& mu, absl::Span<const radix::EvictedSpan> spans,
                             bool count_evictions, uint64_t* bytes_freed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Removes the subtree of the sequence's pages [0, from_page + 1) from the record's tree
  // and applies the report (adds to `reply`). `prefix` are those tokens (Assemble'd
  // beforehand); the overload without assembles them under the lock.
  absl::Status RemoveFromIndex(const absl::Mutex& mu, BlobRecord* record,
                               absl::Span<const radix::TokenId> prefix, bool count_evictions,
                               DeleteReply* reply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  absl::Status RemoveFromIndex(const absl::Mutex& mu, BlobRecord* record, uint32_t from_page,
                               bool count_evictions, DeleteReply* reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A lease over `records` (each counted once: its leases and hits raised, its access
  // time and the ledger's read tick updated), for the caller to grant.
  Lease StartLease(const absl::Mutex& mu, absl::Span<BlobRecord* const> records, uint64_t id,
                   absl::Time now, absl::Time expiry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Ends a lease: each record it names loses one lease and is released.
  void EndLease(const absl::Mutex& mu, const Lease& lease) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // ---- pins
  // Pins the record's whole path in the index (`sequence` = its sequence tokens up to its
  // end page); the blobs whose pages make up the path count it in path_pins.
  // REQUIRES: linked, not pinned.
  void Pin(const absl::Mutex& mu, BlobRecord* record, absl::Span<const radix::TokenId> sequence)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // REQUIRES: pinned.
  void Unpin(const absl::Mutex& mu, BlobRecord* record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // ---- sequence tokens up the parent chain
  // The chain of sequence pages [record.root_page, pages) (absolute page numbers in, tokens
  // from the index root out).
  // REQUIRES: pages == record.root_page or record.first_page < pages <= record.end_page().
  TokenChain ChainOf(const absl::Mutex& mu, const BlobRecord& record, uint32_t pages) const
      ABSL_SHARED_LOCKS_REQUIRED(mu);
  // The chain's tokens; needs no lock (see the top of this header).
  static std::vector<radix::TokenId> Assemble(const TokenChain& chain);
  // Both, under the lock.
  std::vector<radix::TokenId> SequenceTokens(const absl::Mutex& mu, const BlobRecord& record,
                                             uint32_t pages) const ABSL_SHARED_LOCKS_REQUIRED(mu);

  // ---- TierMover::Records (the index lock held: asserted)
  void HoldRecord(BlobRecord* record) override;
  void UnholdRecord(BlobRecord* record) override;
  uint64_t ReleaseRecord(BlobRecord* record) override;
  absl::Status RemoveFromIndex(BlobRecord* record, uint32_t from_page, DeleteReply* reply) override;

 private:
  void CheckLock(const absl::Mutex& mu) const;

  const Deps deps_;
  uint64_t holds_ = 0;  // guarded by the index lock (every caller is given it)
};

}  // namespace strata::store::core
