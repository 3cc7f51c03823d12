#include "strata/tiering/mrc/internal/byte_lru_stack.h"

#include <algorithm>

namespace strata::tiering::mrc::internal {
namespace {

constexpr uint64_t kMinTimes = 1024;

}  // namespace

std::optional<uint64_t> ByteLruStack::Access(uint64_t key, uint64_t bytes) {
  if (next_time_ == time_key_.size()) Compact();
  std::optional<uint64_t> between;
  auto [it, inserted] = last_access_.try_emplace(key);
  LastAccess& last = it->second;
  if (!inserted) {
    // Everything after the previous access is the other keys accessed since.
    between = live_bytes_ - Prefix(last.time);
    Subtract(last.time, last.bytes);
    time_key_[last.time] = kVacant;
    live_bytes_ -= last.bytes;
  }
  last.time = next_time_++;
  last.bytes = bytes;
  Add(last.time, bytes);
  time_key_[last.time] = key;
  live_bytes_ += bytes;
  return between;
}

bool ByteLruStack::Remove(uint64_t key) {
  auto it = last_access_.find(key);
  if (it == last_access_.end()) return false;
  Subtract(it->second.time, it->second.bytes);
  time_key_[it->second.time] = kVacant;
  live_bytes_ -= it->second.bytes;
  last_access_.erase(it);
  return true;
}

void ByteLruStack::Clear() {
  last_access_.clear();
  tree_.clear();
  time_key_.clear();
  next_time_ = 0;
  live_bytes_ = 0;
}

void ByteLruStack::Compact() {
  // Renumber the live keys' times 0..n-1 in access order and rebuild the tree in O(size).
  const uint64_t live = last_access_.size();
  const uint64_t times = std::max<uint64_t>(kMinTimes, 2 * live);
  std::vector<uint64_t> keys(times, kVacant);
  std::vector<uint64_t> tree(times + 1, 0);
  uint64_t next = 0;
  for (uint64_t t = 0; t < next_time_; ++t) {
    const uint64_t key = time_key_[t];
    if (key == kVacant) continue;
    LastAccess& last = last_access_.find(key)->second;
    last.time = next;
    keys[next] = key;
    tree[next + 1] = last.bytes;
    ++next;
  }
  for (uint64_t i = 1; i <= times; ++i) {
    const uint64_t parent = i + (i & (~i + 1));
    if (parent <= times) tree[parent] += tree[i];
  }
  time_key_ = std::move(keys);
  tree_ = std::move(tree);
  next_time_ = next;
}

void ByteLruStack::Add(uint64_t time, uint64_t bytes) {
  for (uint64_t i = time + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += bytes;
}

void ByteLruStack::Subtract(uint64_t time, uint64_t bytes) {
  for (uint64_t i = time + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] -= bytes;
}

uint64_t ByteLruStack::Prefix(uint64_t time) const {
  uint64_t sum = 0;
  for (uint64_t i = time + 1; i > 0; i -= i & (~i + 1)) sum += tree_[i];
  return sum;
}

}  // namespace strata::tiering::mrc::internal
