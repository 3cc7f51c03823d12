// NodeEngine: admin calls (Delete, Pin, Unpin, Stat, List, Evict; Evict is the
// TierMover's) and removal from the index (Delete, and TierMover::Records).
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

constexpr absl::string_view kPageTokenPrefix = "v1:";
constexpr uint32_t kDefaultListLimit = 100;
constexpr uint32_t kMaxListLimit = 1000;

absl::Status NotInIndex(const radix::BlobKey& key) {
  return absl::NotFoundError(absl::StrCat("blob ", key.ToHex(), " is not in this node's index"));
}

}  // namespace

// ------------------------------------------------------------------------- Evict

absl::StatusOr<EvictReply> NodeEngine::Evict(Tier tier, uint64_t bytes) {
  EvictReply reply;
  switch (tier) {
    case Tier::kDram:
      mover_.MoveOutOfDram(mu_, bytes, &reply);
      if (reply.demotions_failed > 0) {
        LOG(WARNING) << "Evict(DRAM): " << reply.demotions_failed
                     << " blobs stay in DRAM, their demotions failed: " << reply.first_failure;
      }
      return reply;
    case Tier::kSsd: {
      if (ssd_ == nullptr) break;
      const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
      TimedMutexLock lock(&mu_, lock_hold_);
      mover_.FreeSsd(mu_, bytes, &reply);
      return reply;
    }
    case Tier::kText: {
      const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
      TimedMutexLock lock(&mu_, lock_hold_);
      mover_.EvictText(mu_, bytes, &reply);
      return reply;
    }
    case Tier::kHbm:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("this node has no ", std::string(TierName(tier)), " tier"));
}

// ------------------------------------------------------------------------- Delete, Pin

absl::Status NodeEngine::RemoveFromIndexLocked(BlobRecord* record, uint32_t from_page,
                                               bool count_evictions, DeleteReply* reply) {
  const radix::BlobKey key = record->key;
  const std::vector<radix::TokenId> prefix = SequenceTokens(*record, from_page + 1);
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
  reply->pages_removed += *removed;
  uint64_t freed = 0;
  reply->blobs_unlinked += ApplyRemovedSpans(spans, count_evictions, &freed);
  return absl::OkStatus();
}

absl::StatusOr<DeleteReply> NodeEngine::Delete(const radix::BlobKey& key) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  if (record->pinned) {
    return absl::FailedPreconditionError(absl::StrCat("blob ", key.ToHex(), " is pinned"));
  }
  DeleteReply reply;
  STRATA_RETURN_IF_ERROR(
      RemoveFromIndexLocked(record, record->first_page, /*count_evictions=*/false, &reply));
  return reply;
}

absl::Status NodeEngine::Pin(const radix::BlobKey& key) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  if (record->pinned) return absl::OkStatus();
  PinLocked(record);
  journal_.Persist(*record);
  return absl::OkStatus();
}

void NodeEngine::PinLocked(BlobRecord* record) {
  const std::vector<radix::TokenId> tokens = SequenceTokens(*record, record->end_page());
  radix::MatchResult match = record->tree->Match(record->namespace_hash, tokens, /*pin=*/true);
  // The blobs whose index pages make up the path keep their bytes while pinned.
  for (const radix::MatchSegment& segment : match.segments) {
    BlobRecord* on_path = table_.FindLinked(segment.blob);
    CHECK(on_path != nullptr) << "the index names an unlinked blob";
    if (!record->pinned_path.empty() && record->pinned_path.back() == on_path->id) continue;
    ++on_path->path_pins;
    record->pinned_path.push_back(on_path->id);
  }
  record->pin = std::move(match.handle);
  record->pinned = true;
}

absl::Status NodeEngine::Unpin(const radix::BlobKey& key) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.FindLinked(key);
  if (record == nullptr) return NotInIndex(key);
  if (!record->pinned) return absl::OkStatus();
  UnpinLocked(record);
  journal_.Persist(*record);
  return absl::OkStatus();
}

void NodeEngine::UnpinLocked(BlobRecord* record) {
  for (const tiering::BlobId id : record->pinned_path) {
    BlobRecord* on_path = table_.Find(id);
    CHECK(on_path != nullptr && on_path->path_pins > 0) << "pinned path record " << id;
    --on_path->path_pins;
  }
  record->pinned_path.clear();
  record->pin.Release();
  record->pinned = false;
}

// ------------------------------------------------------------------------- Stat, List

absl::StatusOr<BlobInfo> NodeEngine::Stat(const radix::BlobKey& key, bool with_tokens) const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
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
  TimedReaderMutexLock lock(&mu_, lock_hold_);
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
