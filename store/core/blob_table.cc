#include "strata/store/core/blob_table.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"

namespace strata::store::core {
namespace {

constexpr absl::string_view kPageTokenPrefix = "v1:";
constexpr uint32_t kDefaultListLimit = 100;
constexpr uint32_t kMaxListLimit = 1000;

}  // namespace

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

absl::StatusOr<ListReply> BlobTable::List(const ListRequest& request,
                                          const AccessScope& scope) const {
  radix::BlobKey after;
  const bool has_after = !request.page_token.empty();
  if (has_after) {
    const absl::string_view token = request.page_token;
    if (!absl::StartsWith(token, kPageTokenPrefix) ||
        !radix::PrefixHash::FromHex(std::string_view(token.data() + kPageTokenPrefix.size(),
                                                     token.size() - kPageTokenPrefix.size()),
                                    &after.hash)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad page token \"", request.page_token, "\""));
    }
  }
  const uint32_t limit =
      request.limit == 0 ? kDefaultListLimit : std::min(request.limit, kMaxListLimit);
  ListReply reply;
  bool more = false;
  ForEachLinkedAfter(has_after ? &after : nullptr, [&](const BlobRecord& record) {
    if (request.namespace_hash.has_value() && record.namespace_hash != *request.namespace_hash) {
      return true;
    }
    if (!scope.Allows(record.ns->tenant())) return true;
    if (reply.blobs.size() == limit) {
      more = true;
      return false;
    }
    reply.blobs.push_back(BlobInfoOf(record, /*with_tokens=*/false));
    return true;
  });
  if (more) {
    reply.next_page_token = absl::StrCat(kPageTokenPrefix, reply.blobs.back().key.ToHex());
  }
  return reply;
}

}  // namespace strata::store::core
