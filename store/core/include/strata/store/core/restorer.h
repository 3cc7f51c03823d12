// Restorer: a restart. Rebuilds the index from what MetaJournal::Load read out of the
// metadata store: records parents first (Load sorts them by first page), each checked
// (MetaJournal::CheckRestored: sizes, key from start hash and tokens, parent restored and
// consistent), inserted into its namespace's tree (registering the namespace), linked, and
// given back its SSD extent (Tier::Reserve) or made TEXT (DRAM does not survive). Records
// that fail a check, or whose pages are all another blob's (redundant), are deleted from
// the store and counted as dropped; a record whose SSD extent could not be taken back is
// rewritten without it. Pinned records are pinned again once all are in, and the TEXT
// tier is brought back under its budget (TierMover::EvictText).
//
// Ownership: the engine makes one for its Create; everything in Deps is borrowed.
//
// Thread safety: Restore runs under the index lock, given as `mu` (annotated, as the
// TierMover's); REQUIRES `mu` is the lock the borrowed parts are guarded by. It writes its
// fix-ups with MetaJournal::Apply under it (a restart serves nobody yet).
//
// Errors: Restore returns the store's error if the fix-up write fails; a failing record is
// never an error (it is dropped and counted in the report).
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "strata/store/core/blob_table.h"
#include "strata/store/core/meta_journal.h"
#include "strata/store/core/namespace_registry.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/record_keeper.h"
#include "strata/store/core/tier_ledger.h"
#include "strata/store/core/tier_mover.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

class Restorer {
 public:
  struct Deps {
    NamespaceRegistry* registry = nullptr;
    BlobTable* table = nullptr;
    TierLedger* ledger = nullptr;
    MetaJournal* journal = nullptr;
    RecordKeeper* keeper = nullptr;
    TierMover* mover = nullptr;
    tiering::Tier* ssd = nullptr;  // null: no SSD tier (every record comes back TEXT)
    uint64_t text_bytes = 0;       // the TEXT budget; 0: no TEXT tier
  };
  // REQUIRES: every dependency but ssd set.
  explicit Restorer(const Deps& deps);

  // Restores `loaded` (consumed) into the empty index; `new_id` names each record. Fills
  // every field of the report but ready_time.
  absl::StatusOr<RestoreReport> Restore(absl::Mutex& mu, MetaJournal::Loaded loaded,
                                        absl::FunctionRef<tiering::BlobId()> new_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

 private:
  const Deps deps_;
};

}  // namespace strata::store::core
