// PutTable (put_table.h).
#include "strata/store/core/put_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/token_span.h"

namespace strata::store::core {

absl::Status PutTable::CheckParent(const BlobRecord& parent, uint32_t first_page, uint32_t pages) {
  if (first_page <= parent.first_page || first_page > parent.end_page()) {
    return absl::FailedPreconditionError(
        absl::StrCat("parent pages ", first_page, " outside (", parent.first_page, ", ",
                     parent.end_page(), "], the pages of parent blob ", parent.key.ToHex()));
  }
  if (uint64_t{first_page} + pages > UINT32_MAX) {
    return absl::InvalidArgumentError("the sequence would pass 2^32-1 pages");
  }
  return absl::OkStatus();
}

absl::Status PutTable::Validate(const radix::Namespace& ns, const PutRequest& request,
                                uint64_t max_blob_bytes) {
  const radix::KvLayout& layout = ns.layout();
  if (request.tokens.empty()) {
    return absl::InvalidArgumentError("a put needs at least one page of tokens, got none");
  }
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(request.tokens.size(), layout.page_tokens));
  const uint64_t pages = request.tokens.size() / layout.page_tokens;
  if (pages > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("a blob of ", pages, " pages is too long"));
  }
  const uint64_t expected = pages * layout.BytesPerPage();
  if (expected > max_blob_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("a blob of ", pages, " pages is ", expected,
                                                   " bytes, more than this node's limit of ",
                                                   max_blob_bytes));
  }
  if (request.bytes != expected) {
    return absl::InvalidArgumentError(absl::StrCat("bytes is ", request.bytes, ", but ", pages,
                                                   " pages of ", layout.ToString(), " are ",
                                                   expected, " bytes"));
  }
  const uint64_t chunks = pages * layout.num_layers;
  if (request.checksums.size() != chunks) {
    return absl::InvalidArgumentError(
        absl::StrCat("got ", request.checksums.size(), " chunk checksums, need ", chunks, " (",
                     layout.num_layers, " layers x ", pages, " pages)"));
  }
  return absl::OkStatus();
}

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
