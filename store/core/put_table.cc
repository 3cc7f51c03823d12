// PutTable (put_table.h).
#include "strata/store/core/put_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::core {

PendingPut& PutTable::Add(PendingPut put, absl::Time now) {
  const uint64_t id = put.record->id;
  put.deadline = now + put_ttl_;
  CHECK(by_key_.emplace(put.record->key, id).second) << "a put of this key is pending";
  auto [it, added] = puts_.emplace(id, std::move(put));
  CHECK(added) << "put " << id << " is pending already";
  return it->second;
}

PendingPut* PutTable::Find(uint64_t put_id) {
  auto it = puts_.find(put_id);
  return it == puts_.end() ? nullptr : &it->second;
}

PendingPut& PutTable::Get(uint64_t put_id) {
  PendingPut* put = Find(put_id);
  CHECK(put != nullptr) << "put " << put_id << " is not pending";
  return *put;
}

PendingPut PutTable::Take(uint64_t put_id) {
  auto it = puts_.find(put_id);
  CHECK(it != puts_.end()) << "put " << put_id << " is not pending";
  PendingPut put = std::move(it->second);
  puts_.erase(it);
  by_key_.erase(put.record->key);
  return put;
}

std::vector<uint64_t> PutTable::ExpiredIds(absl::Time now) const {
  std::vector<uint64_t> expired;
  for (const auto& [id, put] : puts_) {
    if (Expired(put, now)) expired.push_back(id);
  }
  return expired;
}

absl::Status PutTable::NotFound(uint64_t put_id, bool expired) {
  return absl::NotFoundError(absl::StrCat(
      "put ", put_id,
      expired ? " has expired and was aborted"
              : " is not pending on this node (never begun, committed, aborted or expired)"));
}

}  // namespace strata::store::core
