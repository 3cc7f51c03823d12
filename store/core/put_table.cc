// PutTable (put_table.h).
#include "strata/store/core/put_table.h"

#include <algorithm>
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
  if (request.segment_start.has_value()) {
    if (request.parent.has_value()) {
      return absl::InvalidArgumentError(
          "a put names a parent or a segment start, not both (a segment's first blob has no "
          "parent on this node)");
    }
    if (request.segment_start->pages == 0) {
      return absl::InvalidArgumentError(
          "segment_start.pages is 0: a blob at page 0 starts its sequence and names no segment "
          "start");
    }
    if (uint64_t{request.segment_start->pages} + pages > UINT32_MAX) {
      return absl::InvalidArgumentError("the sequence would pass 2^32-1 pages");
    }
  }
  const uint64_t chunks = pages * layout.num_layers;
  if (request.checksums.size() != chunks) {
    return absl::InvalidArgumentError(
        absl::StrCat("got ", request.checksums.size(), " chunk checksums, need ", chunks, " (",
                     layout.num_layers, " layers x ", pages, " pages)"));
  }
  return absl::OkStatus();
}

namespace {

// The tenant a put is accounted to ("" for a record without a namespace: unit tests).
std::string TenantOf(const BlobRecord& record) {
  return record.ns == nullptr ? std::string() : record.ns->tenant();
}

}  // namespace

uint64_t PutTable::MetadataBytes(size_t tokens, size_t sequence_tokens, size_t checksums) {
  return sizeof(BlobRecord) + sizeof(PendingPut) + 64 +
         sizeof(radix::TokenId) * (uint64_t{tokens} + sequence_tokens) +
         sizeof(uint64_t) * uint64_t{checksums};
}

uint64_t PutTable::MetadataOf(const PendingPut& put) {
  return MetadataBytes(put.record->tokens.size(), put.sequence.size(),
                       put.record->checksums.size());
}

uint64_t PutTable::tenant_bytes(const std::string& tenant) const {
  auto it = tenant_bytes_.find(tenant);
  return it == tenant_bytes_.end() ? 0 : it->second;
}

absl::Status PutTable::Admit(const std::string& tenant, uint64_t bytes, uint64_t metadata_bytes,
                             uint64_t capacity) const {
  if (bytes > capacity || bytes > capacity - std::min(capacity, usage_.bytes)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a blob of ", bytes, " bytes cannot fit the DRAM tier of ", capacity,
                     " bytes beside the ", usage_.bytes, " bytes pending puts reserve"));
  }
  if (usage_.puts >= limits_.max_puts) {
    return absl::ResourceExhaustedError(
        absl::StrCat(usage_.puts, " puts are pending, the limit (max_pending_puts)"));
  }
  if (usage_.metadata_bytes + metadata_bytes > limits_.max_metadata_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "pending puts' tokens and checksums would take ", usage_.metadata_bytes + metadata_bytes,
        " bytes of memory, more than max_pending_metadata_bytes (", limits_.max_metadata_bytes,
        ")"));
  }
  if (usage_.puts > 0 && usage_.bytes + bytes > limits_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("pending puts would reserve ", usage_.bytes + bytes,
                     " bytes of DRAM, more than their share (", limits_.max_bytes, " bytes)"));
  }
  const uint64_t mine = tenant_bytes(tenant);
  if (mine > 0 && mine + bytes > limits_.max_tenant_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant ", tenant, "'s pending puts would reserve ", mine + bytes,
        " bytes of DRAM, more than a tenant's share (", limits_.max_tenant_bytes, " bytes)"));
  }
  return absl::OkStatus();
}

PendingPut& PutTable::Add(PendingPut put, absl::Time now) {
  const uint64_t id = put.record->id;
  put.deadline = now + put_ttl_;
  ++usage_.puts;
  usage_.bytes += put.record->bytes;
  put.metadata_bytes = MetadataOf(put);
  usage_.metadata_bytes += put.metadata_bytes;
  if (put.record->bytes > 0) tenant_bytes_[TenantOf(*put.record)] += put.record->bytes;
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
  --usage_.puts;
  usage_.bytes -= put.record->bytes;
  usage_.metadata_bytes -= put.metadata_bytes;
  auto tenant = tenant_bytes_.find(TenantOf(*put.record));
  if (tenant != tenant_bytes_.end() && (tenant->second -= put.record->bytes) == 0) {
    tenant_bytes_.erase(tenant);
  }
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
