#include "strata/tiering/branch_lru_policy.h"

#include <algorithm>

namespace strata::tiering {

void BranchLruPolicy::BeforeInsert(BlobId id, BlobTraits* traits) {
  // A hint that names a blob (the blob itself, or a tracked one such as the sequence's root)
  // is shared by every session under that root: not a session.
  const uint64_t hint = traits->session_hint;
  const uint64_t session = hint == id || index().Contains(hint) ? 0 : hint;
  traits->session_hint = session;
  if (session != 0) ObserveSession(session, traits->parent);
  if (const BlobView* parent = traits->parent == 0 ? nullptr : index().Find(traits->parent);
      parent != nullptr && parent->children_ever == 1 && parent->newest_child != 0) {
    AbandonBypassedChild(traits->parent);
  }
  // The index counts the new child in its parent (children_ever, newest_child).
}

void BranchLruPolicy::AfterInsert(BlobId id) {
  // A shared prefix evicted and brought back is still shared.
  if (erased_shared_.erase(id) > 0) mutable_index().SetChildrenEver(id, 2);
  const BlobView* blob = index().Find(id);
  if (const uint64_t session = blob->traits.session_hint; session != 0) {
    SessionTail& tail = tails_[session];
    tail.blob = id;
    tail.tick = blob->insert_tick;
  }
}

void BranchLruPolicy::BeforeErase(const BlobView& blob) {
  // (The index clears the parent's newest_child.)
  if (blob.children_ever >= 2 && erased_shared_.insert(blob.id).second) {
    erased_shared_order_.push_back(blob.id);
    const uint64_t limit = std::max<uint64_t>(kMinErasedShared, index().size() / 4);
    while (erased_shared_order_.size() > limit) {
      erased_shared_.erase(erased_shared_order_.front());
      erased_shared_order_.pop_front();
    }
  }
  if (const uint64_t session = blob.traits.session_hint; session != 0) {
    if (const auto it = tails_.find(session); it != tails_.end() && it->second.blob == blob.id) {
      tails_.erase(it);
    }
  }
}

bool BranchLruPolicy::abandoned(BlobId id) const {
  const BlobView* blob = index().Find(id);
  return blob != nullptr && blob->mark != 0;
}

bool BranchLruPolicy::Abandon(BlobId id) {
  const BlobView* blob = index().Find(id);
  if (blob == nullptr || blob->mark != 0) return false;
  mutable_index().SetMark(id, 1);  // keeps its tick
  ++abandoned_marks_;
  return true;
}

void BranchLruPolicy::ObserveSession(uint64_t session, BlobId new_parent) {
  const auto it = tails_.find(session);
  if (it == tails_.end()) return;
  SessionTail& tail = it->second;
  const BlobView* blob = index().Find(tail.blob);
  // Untouched since its insert: the tail's own request goes on (or the blob is gone).
  const bool tail_untouched = blob != nullptr && blob->last_touch == tail.tick;
  if (new_parent == tail.blob) {
    if (!tail_untouched) ++tail.continuations;  // a new request read the tail, goes on
    return;
  }
  // A hint shared by concurrent sessions "forks" on most requests; a session forks on a
  // few. Walk only for a hint that mostly continues its own tail.
  const bool walk = tail_untouched && tail.forks * kContinuationsPerFork < tail.continuations;
  ++tail.forks;
  if (!walk) return;
  BlobId id = tail.blob;
  while (blob != nullptr && blob->last_touch <= tail.tick && blob->traits.session_hint == session &&
         Abandon(id)) {
    id = blob->traits.parent;
    blob = index().Find(id);  // Abandon re-ranked only `id`; views stay in place
  }
}

void BranchLruPolicy::AbandonBypassedChild(BlobId parent) {
  const BlobView* parent_blob = index().Find(parent);
  const uint64_t parent_touch = parent_blob->last_touch;
  BlobId id = parent_blob->newest_child;
  const BlobView* blob = index().Find(id);
  while (blob != nullptr && blob->last_touch < parent_touch && Abandon(id)) {
    id = blob->newest_child;
    blob = index().Find(id);
  }
}

}  // namespace strata::tiering
