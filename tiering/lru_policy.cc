#include "strata/tiering/lru_policy.h"

namespace strata::tiering {

void LruPolicy::OnInsert(BlobId id, const BlobTraits& traits) {
  const uint64_t bytes = traits.bytes;
  if (const auto it = slot_of_.find(id); it != slot_of_.end()) {
    Slot& slot = slots_[it->second];
    tracked_bytes_ = tracked_bytes_ - slot.bytes + bytes;
    slot.bytes = bytes;
    slot.last_tick = ++clock_;
    Unlink(it->second);
    PushMostRecent(it->second);
    return;
  }
  uint32_t index;
  if (!spare_slots_.empty()) {
    index = spare_slots_.back();
    spare_slots_.pop_back();
  } else {
    index = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[index].id = id;
  slots_[index].bytes = bytes;
  slots_[index].last_tick = ++clock_;
  slot_of_.emplace(id, index);
  tracked_bytes_ += bytes;
  PushMostRecent(index);
}

void LruPolicy::OnAccess(BlobId id) {
  const auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return;
  slots_[it->second].last_tick = ++clock_;
  Unlink(it->second);
  PushMostRecent(it->second);
}

void LruPolicy::OnErase(BlobId id) {
  const auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return;
  const uint32_t index = it->second;
  slot_of_.erase(it);
  Unlink(index);
  tracked_bytes_ -= slots_[index].bytes;
  spare_slots_.push_back(index);
}

void LruPolicy::CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                               std::vector<BlobId>* victims) const {
  uint64_t collected = 0;
  for (uint32_t i = least_recent_; i != kNone && collected < bytes_needed; i = slots_[i].next) {
    if (!evictable(slots_[i].id)) continue;
    victims->push_back(slots_[i].id);
    collected += slots_[i].bytes;
  }
}

std::optional<double> LruPolicy::Score(BlobId id) const {
  const auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return std::nullopt;
  return static_cast<double>(slots_[it->second].last_tick);
}

void LruPolicy::Unlink(uint32_t index) {
  Slot& slot = slots_[index];
  if (slot.prev != kNone) {
    slots_[slot.prev].next = slot.next;
  } else {
    least_recent_ = slot.next;
  }
  if (slot.next != kNone) {
    slots_[slot.next].prev = slot.prev;
  } else {
    most_recent_ = slot.prev;
  }
  slot.prev = slot.next = kNone;
}

void LruPolicy::PushMostRecent(uint32_t index) {
  Slot& slot = slots_[index];
  slot.prev = most_recent_;
  slot.next = kNone;
  if (most_recent_ != kNone) {
    slots_[most_recent_].next = index;
  } else {
    least_recent_ = index;
  }
  most_recent_ = index;
}

}  // namespace strata::tiering
