#include "strata/store/core/blob_table.h"

#include <utility>

#include "glog/logging.h"

namespace strata::store::core {

BlobRecord* BlobTable::Add(std::unique_ptr<BlobRecord> record) {
  CHECK(record != nullptr);
  CHECK(record->state != BlobState::kLinked) << "BlobTable::Add of a linked record";
  BlobRecord* raw = record.get();
  const bool inserted = records_.emplace(raw->id, std::move(record)).second;
  CHECK(inserted) << "BlobTable::Add: duplicate record id " << raw->id;
  return raw;
}

BlobRecord* BlobTable::Find(tiering::BlobId id) const {
  auto it = records_.find(id);
  return it == records_.end() ? nullptr : it->second.get();
}

BlobRecord* BlobTable::FindLinked(const radix::BlobKey& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

void BlobTable::Link(BlobRecord* record) {
  CHECK(record->state == BlobState::kPending) << "BlobTable::Link of a non-pending record";
  const bool inserted = by_key_.emplace(record->key, record).second;
  CHECK(inserted) << "BlobTable::Link: key " << record->key.ToHex() << " is linked already";
  record->state = BlobState::kLinked;
}

void BlobTable::Unlink(BlobRecord* record) {
  if (record->state == BlobState::kLinked) {
    auto it = by_key_.find(record->key);
    CHECK(it != by_key_.end() && it->second == record);
    by_key_.erase(it);
  }
  record->state = BlobState::kUnlinked;
}

void BlobTable::Erase(tiering::BlobId id) {
  auto it = records_.find(id);
  CHECK(it != records_.end()) << "BlobTable::Erase of unknown record " << id;
  CHECK(it->second->state != BlobState::kLinked) << "BlobTable::Erase of a linked record";
  records_.erase(it);
}

void BlobTable::ForEachLinkedAfter(const radix::BlobKey* after,
                                   absl::FunctionRef<bool(const BlobRecord&)> fn) const {
  auto it = after == nullptr ? by_key_.begin() : by_key_.upper_bound(*after);
  for (; it != by_key_.end(); ++it) {
    if (!fn(*it->second)) return;
  }
}

void BlobTable::ForEach(absl::FunctionRef<void(const BlobRecord&)> fn) const {
  for (const auto& [id, record] : records_) fn(*record);
}

}  // namespace strata::store::core
