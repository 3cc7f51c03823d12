#include "strata/tiering/branch_lru_policy.h"

#include <algorithm>

namespace strata::tiering {

void BranchLruPolicy::OnInsert(BlobId id, const BlobTraits& traits) {
  if (index_.Contains(id)) {
    index_.SetBytes(id, traits.bytes);
    index_.SetParent(id, traits.parent);
    index_.MutableExtra(id)->session_hint = traits.session_hint;
    Touch(id);
    return;
  }
  // A hint that names a blob (the blob itself, or a tracked one such as the sequence's root)
  // is shared by every session under that root: not a session.
  const uint64_t session =
      traits.session_hint == id || index_.Contains(traits.session_hint) ? 0 : traits.session_hint;
  if (session != 0) ObserveSession(session, traits.parent);
  if (Extra* parent = traits.parent == 0 ? nullptr : index_.MutableExtra(traits.parent);
      parent != nullptr) {
    if (parent->children_ever == 1 && parent->newest_child != 0) {
      AbandonBypassedChild(traits.parent);
    }
    parent = index_.MutableExtra(traits.parent);
    ++parent->children_ever;
    parent->newest_child = id;
  }
  const uint64_t tick = ++clock_;
  // A shared prefix evicted and brought back is still shared.
  const uint32_t children_ever = erased_shared_.erase(id) > 0 ? 2 : 0;
  index_.Insert(id, traits.parent, traits.bytes, Key(1, tick),
                Extra{.session_hint = session, .last_touch = tick, .children_ever = children_ever});
  if (session != 0) {
    SessionTail& tail = tails_[session];
    tail.blob = id;
    tail.tick = tick;
  }
}

void BranchLruPolicy::OnAccess(BlobId id) {
  if (index_.Contains(id)) Touch(id);
}

void BranchLruPolicy::OnErase(BlobId id) {
  const Index::Entry* entry = index_.Find(id);
  if (entry == nullptr) return;
  if (Extra* parent = entry->parent == 0 ? nullptr : index_.MutableExtra(entry->parent);
      parent != nullptr && parent->newest_child == id) {
    parent->newest_child = 0;
  }
  if (entry->extra.children_ever >= 2 && erased_shared_.insert(id).second) {
    erased_shared_order_.push_back(id);
    const uint64_t limit = std::max<uint64_t>(kMinErasedShared, index_.size() / 4);
    while (erased_shared_order_.size() > limit) {
      erased_shared_.erase(erased_shared_order_.front());
      erased_shared_order_.pop_front();
    }
  }
  if (const uint64_t session = entry->extra.session_hint; session != 0) {
    if (const auto it = tails_.find(session); it != tails_.end() && it->second.blob == id) {
      tails_.erase(it);
    }
  }
  index_.Erase(id);
}

std::optional<double> BranchLruPolicy::Score(BlobId id) const {
  const Index::Entry* entry = index_.Find(id);
  if (entry == nullptr) return std::nullopt;
  const double tick = static_cast<double>(entry->key.second);
  return entry->key.first == 0 ? tick - 9007199254740992.0 : tick;  // 2^53
}

bool BranchLruPolicy::abandoned(BlobId id) const {
  const Index::Entry* entry = index_.Find(id);
  return entry != nullptr && entry->extra.abandoned;
}

void BranchLruPolicy::Touch(BlobId id) {
  Extra* extra = index_.MutableExtra(id);
  extra->last_touch = ++clock_;
  extra->abandoned = false;
  index_.SetKey(id, Key(1, clock_));
}

bool BranchLruPolicy::Abandon(BlobId id) {
  Extra* extra = index_.MutableExtra(id);
  if (extra == nullptr || extra->abandoned) return false;
  extra->abandoned = true;
  const uint64_t touch = extra->last_touch;
  index_.SetKey(id, Key(0, touch));
  ++abandoned_marks_;
  return true;
}

void BranchLruPolicy::ObserveSession(uint64_t session, BlobId new_parent) {
  const auto it = tails_.find(session);
  if (it == tails_.end()) return;
  SessionTail& tail = it->second;
  const Index::Entry* entry = index_.Find(tail.blob);
  // Untouched since its insert: the tail's own request goes on (or the blob is gone).
  const bool tail_untouched = entry != nullptr && entry->extra.last_touch == tail.tick;
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
  while (entry != nullptr && entry->extra.last_touch <= tail.tick &&
         entry->extra.session_hint == session && Abandon(id)) {
    id = entry->parent;
    entry = index_.Find(id);  // Abandon re-keyed only `id`; entries stay in place
  }
}

void BranchLruPolicy::AbandonBypassedChild(BlobId parent) {
  const Index::Entry* parent_entry = index_.Find(parent);
  const uint64_t parent_touch = parent_entry->extra.last_touch;
  BlobId id = parent_entry->extra.newest_child;
  const Index::Entry* entry = index_.Find(id);
  while (entry != nullptr && entry->extra.last_touch < parent_touch && Abandon(id)) {
    id = entry->extra.newest_child;
    entry = index_.Find(id);
  }
}

}  // namespace strata::tiering
