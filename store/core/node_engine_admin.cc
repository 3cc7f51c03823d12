// NodeEngine: admin calls (Delete, Pin, Unpin, Stat, List, Evict; Evict is the
// TierMover's, index removal and pins the RecordKeeper's).
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

absl::Status NotInIndex(const radix::BlobKey& key) {
  return absl::NotFoundError(absl::StrCat("blob ", key.ToHex(), " is not in this node's index"));
}

absl::Status Pinned(const radix::BlobKey& key) {
  return absl::FailedPreconditionError(absl::StrCat("blob ", key.ToHex(), " is pinned"));
}

}  // namespace

// ------------------------------------------------------------------------- Evict

absl::StatusOr<EvictReply> NodeEngine::Evict(Tier tier, uint64_t bytes) {
  if (tier == Tier::kHbm && hbm_cache_.enabled()) return hbm_cache_.Evict(mu_, bytes);
  return mover_.Evict(mu_, tier, bytes);
}

// ------------------------------------------------------------------------- Delete, Pin

// Delete and Pin assemble the blob's prefix tokens without the lock, the record held
// meanwhile (RecordKeeper: tokens never change and a held record's ancestors stay), and
// check the record again after taking the lock back.
absl::StatusOr<BlobRecord*> NodeEngine::WalkUnpinned(const radix::BlobKey& key, bool whole_blob,
                                                     const AccessScope& scope,
                                                     std::vector<radix::TokenId>* tokens) {
  BlobRecord* record = nullptr;
  TokenChain chain;
  {
    TimedMutexLock lock(&mu_, lock_hold_);
    record = table_.FindLinked(key);
    if (record == nullptr || !scope.Allows(record->ns->tenant())) return NotInIndex(key);
    if (record->pinned) return nullptr;
    chain = keeper_.ChainOf(mu_, *record, whole_blob ? record->end_page() : record->first_page + 1);
    keeper_.Hold(mu_, record);
  }
  *tokens = RecordKeeper::Assemble(chain);
  return record;
}

absl::StatusOr<DeleteReply> NodeEngine::Delete(const radix::BlobKey& key,
                                               const AccessScope& scope) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the locks below
  std::vector<radix::TokenId> prefix;
  STRATA_ASSIGN_OR_RETURN(BlobRecord * record,
                          WalkUnpinned(key, /*whole_blob=*/false, scope, &prefix));
  if (record == nullptr) return Pinned(key);
  TimedMutexLock lock(&mu_, lock_hold_);
  if (!UnholdWalked(record)) return NotInIndex(key);  // deleted or evicted meanwhile
  if (record->pinned) return Pinned(key);
  DeleteReply reply;
  STRATA_RETURN_IF_ERROR(
      keeper_.RemoveFromIndex(mu_, record, prefix, /*count_evictions=*/false, &reply));
  // A TEXT parent kept over the TEXT budget only for this blob may go now.
  mover_.TrimText(mu_);
  return reply;
}

absl::Status NodeEngine::Pin(const radix::BlobKey& key, const AccessScope& scope) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the locks below
  std::vector<radix::TokenId> sequence;
  STRATA_ASSIGN_OR_RETURN(BlobRecord * record,
                          WalkUnpinned(key, /*whole_blob=*/true, scope, &sequence));
  if (record == nullptr) return absl::OkStatus();  // pinned already
  TimedMutexLock lock(&mu_, lock_hold_);
  if (!UnholdWalked(record)) return NotInIndex(key);
  if (record->pinned) return absl::OkStatus();  // pinned by another call meanwhile
  keeper_.Pin(mu_, record, sequence);
  journal_.Persist(*record);
  return absl::OkStatus();
}

absl::Status NodeEngine::Unpin(const radix::BlobKey& key, const AccessScope& scope) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr || !scope.Allows(record->ns->tenant())) return NotInIndex(key);
  if (!record->pinned) return absl::OkStatus();
  keeper_.Unpin(mu_, record);
  journal_.Persist(*record);
  // A TEXT blob the pin kept past the TEXT budget may go now (it may be this one).
  mover_.TrimText(mu_);
  return absl::OkStatus();
}

bool NodeEngine::UnholdWalked(BlobRecord* record) {
  keeper_.Unhold(mu_, record);
  const bool linked = record->state == BlobState::kLinked;
  keeper_.Release(mu_, record);  // an unlinked record may be erased here
  return linked;
}

// ------------------------------------------------------------------------- Stat, List

absl::StatusOr<BlobInfo> NodeEngine::Stat(const radix::BlobKey& key, bool with_tokens,
                                          const AccessScope& scope) const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  const BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr || !scope.Allows(record->ns->tenant())) return NotInIndex(key);
  return BlobInfoOf(*record, with_tokens);
}

absl::StatusOr<ListReply> NodeEngine::List(const ListRequest& request,
                                           const AccessScope& scope) const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  return table_.List(request, scope);
}

}  // namespace strata::store::core
