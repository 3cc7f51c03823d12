// NodeEngine: admin calls (Delete, Pin, Unpin, Stat, List, Evict) and eviction under
// allocation pressure.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/eviction_priority.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

constexpr absl::string_view kPageTokenPrefix = "v1:";
constexpr uint32_t kDefaultListLimit = 100;
constexpr uint32_t kMaxListLimit = 1000;
// Added to the LRU tick of a leased blob's node: such nodes go after every other one.
constexpr double kLeasedPenalty = 1e18;

absl::Status NotInIndex(const radix::BlobKey& key) {
  return absl::NotFoundError(absl::StrCat("blob ", key.ToHex(), " is not in this node's index"));
}

}  // namespace

// ------------------------------------------------------------------------- eviction

uint64_t NodeEngine::EvictBatchLocked(uint64_t batch_pages, EvictReply* reply) {
  // Runs inside RadixTree::Evict, on this thread, while this thread holds mu_.
  const radix::EvictionPriority priority = [this](const radix::NodeView& node) {
    mu_.AssertHeld();
    double p = static_cast<double>(node.last_access_tick);
    const BlobRecord* record = table_.FindLinked(node.blob);
    if (record != nullptr && record->leases > 0) p += kLeasedPenalty;
    return p;
  };
  uint64_t evicted = 0;
  std::vector<radix::EvictedSpan> spans;
  for (radix::RadixTree* tree : registry_.trees()) {
    spans.clear();
    const uint64_t pages = tree->Evict(
        batch_pages, priority, [&spans](const radix::EvictedSpan& span) { spans.push_back(span); });
    evicted += pages;
    reply->pages_evicted += pages;
    reply->blobs_unlinked +=
        ApplyRemovedSpans(spans, /*count_evictions=*/true, &reply->bytes_freed);
  }
  return evicted;
}

uint64_t NodeEngine::NextBatch(uint64_t batch) const {
  return std::min<uint64_t>(batch * 2, options_.evict_batch_pages);
}

absl::StatusOr<tiering::Extent> NodeEngine::AllocateLocked(uint64_t bytes) {
  EvictReply evicted;
  for (uint64_t batch = 1;; batch = NextBatch(batch)) {
    absl::StatusOr<tiering::Extent> extent = arena_->Allocate(bytes);
    if (extent.ok() || !absl::IsResourceExhausted(extent.status())) return extent;
    if (EvictBatchLocked(batch, &evicted) == 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "DRAM tier full: no room for ", bytes, " bytes after evicting ", evicted.pages_evicted,
          " pages (", evicted.bytes_freed, " bytes freed); the rest is pinned, leased or pending"));
    }
  }
}

absl::StatusOr<EvictReply> NodeEngine::Evict(TierState tier, uint64_t bytes) {
  if (tier != TierState::kDram) {
    return absl::InvalidArgumentError(
        absl::StrCat("this node has no ", std::string(TierStateName(tier)), " tier"));
  }
  absl::MutexLock lock(&mu_);
  EvictReply reply;
  for (uint64_t batch = 1; reply.bytes_freed < bytes; batch = NextBatch(batch)) {
    if (EvictBatchLocked(batch, &reply) == 0) break;
  }
  return reply;
}

// ------------------------------------------------------------------------- Delete, Pin

absl::StatusOr<DeleteReply> NodeEngine::Delete(const radix::BlobKey& key) {
  absl::MutexLock lock(&mu_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  if (record->pinned) {
    return absl::FailedPreconditionError(absl::StrCat("blob ", key.ToHex(), " is pinned"));
  }
  const std::vector<radix::TokenId> prefix = SequenceTokens(*record, record->first_page + 1);
  std::vector<radix::EvictedSpan> spans;
  absl::StatusOr<uint64_t> removed = record->tree->RemoveSubtree(
      record->namespace_hash, prefix,
      [&spans](const radix::EvictedSpan& span) { spans.push_back(span); });
  if (!removed.ok()) {
    if (absl::IsFailedPrecondition(removed.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "blob ", key.ToHex(), ": it, a blob below it, or a put continuing it is pinned (",
          removed.status().message(), ")"));
    }
    return absl::InternalError(absl::StrCat("index removal of linked blob ", key.ToHex(),
                                            " failed: ", removed.status().ToString()));
  }
  DeleteReply reply;
  reply.pages_removed = *removed;
  uint64_t freed = 0;
  reply.blobs_unlinked = ApplyRemovedSpans(spans, /*count_evictions=*/false, &freed);
  return reply;
}

absl::Status NodeEngine::Pin(const radix::BlobKey& key) {
  absl::MutexLock lock(&mu_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  if (record->pinned) return absl::OkStatus();
  const std::vector<radix::TokenId> tokens = SequenceTokens(*record, record->end_page());
  radix::MatchResult match = record->tree->Match(record->namespace_hash, tokens, /*pin=*/true);
  record->pin = std::move(match.handle);
  record->pinned = true;
  return absl::OkStatus();
}

absl::Status NodeEngine::Unpin(const radix::BlobKey& key) {
  absl::MutexLock lock(&mu_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  record->pin.Release();
  record->pinned = false;
  return absl::OkStatus();
}

// ------------------------------------------------------------------------- Stat, List

absl::StatusOr<BlobInfo> NodeEngine::Stat(const radix::BlobKey& key, bool with_tokens) const {
  absl::ReaderMutexLock lock(&mu_);
  const BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  return InfoOf(*record, with_tokens);
}

absl::StatusOr<ListReply> NodeEngine::List(const ListRequest& request) const {
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
  absl::ReaderMutexLock lock(&mu_);
  table_.ForEachLinkedAfter(has_after ? &after : nullptr, [&](const BlobRecord& record) {
    mu_.AssertReaderHeld();
    if (request.namespace_hash.has_value() && record.namespace_hash != *request.namespace_hash) {
      return true;
    }
    if (reply.blobs.size() == limit) {
      more = true;
      return false;
    }
    reply.blobs.push_back(InfoOf(record, /*with_tokens=*/false));
    return true;
  });
  if (more) {
    reply.next_page_token = absl::StrCat(kPageTokenPrefix, reply.blobs.back().key.ToHex());
  }
  return reply;
}

}  // namespace strata::store::core
