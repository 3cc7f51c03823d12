// NodeEngine: where a blob's bytes live (DRAM, SSD, TEXT), the tier policies, eviction
// under pressure, demotion to SSD and promotion back into DRAM.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

// What a TEXT record costs beyond its tokens and checksums (the record, its table and
// policy entries).
constexpr uint64_t kTextRecordOverhead = 256;
uint64_t TextBytes(const BlobRecord& record) {
  return record.tokens.size() * sizeof(radix::TokenId) +
         record.checksums.size() * sizeof(uint64_t) + kTextRecordOverhead;
}

}  // namespace

// ------------------------------------------------------------------------- bookkeeping

tiering::BlobTraits NodeEngine::TraitsOf(const BlobRecord& record, uint64_t bytes) {
  tiering::BlobTraits traits;
  traits.bytes = bytes;
  traits.first_page = record.first_page;
  traits.pages = record.pages;
  traits.page_tokens = record.ns->layout().page_tokens;
  traits.parent = record.parent_id;
  traits.session_hint = record.root_id;
  return traits;
}

tiering::BlobAccessStats NodeEngine::AccessStatsLocked(const BlobRecord& record) const {
  tiering::BlobAccessStats stats;
  stats.reads = record.hits;
  stats.insert_tick = record.insert_tick;
  stats.previous_read_tick = std::max(record.read_tick, record.insert_tick);
  stats.now_tick = std::max(tick_, stats.previous_read_tick);
  return stats;
}

void NodeEngine::CountInParentLocked(const BlobRecord& record, int sign) {
  if (record.parent_id == 0 || record.state != BlobState::kLinked) return;
  BlobRecord* parent = table_.Find(record.parent_id);
  CHECK(parent != nullptr) << "parent record " << record.parent_id << " is gone";
  if (record.in_dram()) parent->children_in_dram += sign;
  if (record.has_bytes()) parent->children_with_bytes += sign;
}

void NodeEngine::SyncTextLocked(BlobRecord* record) {
  const bool text = record->state == BlobState::kLinked && !record->has_bytes();
  if (text == record->text_tracked) return;
  record->text_tracked = text;
  if (text) {
    text_.used_bytes += TextBytes(*record);
    ++text_.blobs;
    text_policy_->OnInsert(record->id, TraitsOf(*record, TextBytes(*record)));
  } else {
    text_.used_bytes -= TextBytes(*record);
    --text_.blobs;
    text_policy_->OnErase(record->id);
  }
}

void NodeEngine::AttachDramLocked(BlobRecord* record, const tiering::Extent& extent) {
  CHECK(!record->in_dram());
  CountInParentLocked(*record, -1);
  record->extent = extent;
  CountInParentLocked(*record, +1);
  if (record->state == BlobState::kLinked)
    dram_policy_->OnInsert(record->id, TraitsOf(*record, extent.length));
  SyncTextLocked(record);
}

void NodeEngine::DetachDramLocked(BlobRecord* record) {
  CHECK(record->in_dram());
  CHECK(record->leases == 0 && record->holds == 0) << "dropping held bytes";
  CountInParentLocked(*record, -1);
  arena_->Free(*record->extent);
  record->extent.reset();
  CountInParentLocked(*record, +1);
  dram_policy_->OnErase(record->id);
  SyncTextLocked(record);
}

void NodeEngine::AttachSsdLocked(BlobRecord* record, const tiering::Extent& extent) {
  CHECK(!record->on_ssd());
  CountInParentLocked(*record, -1);
  record->ssd_extent = extent;
  CountInParentLocked(*record, +1);
  if (record->state == BlobState::kLinked)
    ssd_policy_->OnInsert(record->id, TraitsOf(*record, extent.length));
  SyncTextLocked(record);
}

void NodeEngine::DetachSsdLocked(BlobRecord* record) {
  CHECK(record->on_ssd());
  CountInParentLocked(*record, -1);
  ssd_->Free(*record->ssd_extent);
  record->ssd_extent.reset();
  CountInParentLocked(*record, +1);
  ssd_policy_->OnErase(record->id);
  SyncTextLocked(record);
}

// ------------------------------------------------------------------------- TEXT

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

void NodeEngine::DropToTextLocked(BlobRecord* record, EvictReply* reply) {
  CHECK_EQ(record->children_with_bytes, 0u) << "dropping the bytes of a blob others continue";
  if (record->in_dram()) {
    DetachDramLocked(record);
    arena_->counters().RecordEviction();
  }
  const bool had_ssd = record->on_ssd();
  if (had_ssd) {
    DetachSsdLocked(record);
    ssd_->counters().RecordEviction();
  }
  ++text_.drops;
  ++reply->blobs_dropped;
  if (options_.text_bytes == 0) {
    // No TEXT tier: the blob leaves the index (with whatever hangs below it, all TEXT).
    // A pinned path or a pending put continuing it keeps it for now (as TEXT, removed by
    // a later TEXT eviction).
    DeleteReply removed;
    const absl::Status status = RemoveFromIndexLocked(
        record, record->end_page() - record->pages_in_index, /*count_evictions=*/false, &removed);
    reply->pages_evicted += removed.pages_removed;
    reply->blobs_unlinked += removed.blobs_unlinked;
    if (status.ok()) return;
    VLOG(1) << "dropping " << record->key.ToHex() << ": " << status;
  }
  // Durable state changed only if an SSD copy went (a DRAM-only blob is TEXT after a
  // restart anyway).
  if (had_ssd) journal_.Persist(*record);
  if (text_.used_bytes > options_.text_bytes) {
    EvictTextLocked(text_.used_bytes - options_.text_bytes, reply);
  }
}

void NodeEngine::EvictTextLocked(uint64_t bytes, EvictReply* reply) {
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    text_policy_->CollectVictims(
        bytes - freed,
        [this](tiering::BlobId id) {
          mu_.AssertHeld();
          const BlobRecord* r = table_.Find(id);
          return r != nullptr && r->text_tracked && r->children == 0 && !r->pinned &&
                 r->path_pins == 0 && !r->moving && r->holds == 0;
        },
        &victims);
    if (victims.empty()) return;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table_.Find(id);
      if (record == nullptr || !record->text_tracked) continue;  // removed with a parent
      const uint64_t text = TextBytes(*record);
      DeleteReply removed;
      const absl::Status status =
          RemoveFromIndexLocked(record, record->end_page() - record->pages_in_index,
                                /*count_evictions=*/false, &removed);
      if (!status.ok()) {
        // Its pages are pinned by a match (a pending put's prefix): it stays for now.
        VLOG(1) << "TEXT eviction of " << record->key.ToHex() << ": " << status;
        continue;
      }
      freed += text;
      ++text_.deletions;
      reply->bytes_freed += text;
      reply->pages_evicted += removed.pages_removed;
      reply->blobs_unlinked += removed.blobs_unlinked;
    }
    if (freed == freed_before) return;  // every candidate is held by the index
  }
}

// ------------------------------------------------------------------------- DRAM, SSD

bool NodeEngine::DramEvictable(const BlobRecord& r) const {
  return r.state == BlobState::kLinked && r.in_dram() && r.leases == 0 && r.holds == 0 &&
         !r.moving && !r.pinned && r.path_pins == 0 && r.children_in_dram == 0;
}

uint64_t NodeEngine::FreeDramLocked(uint64_t bytes, EvictReply* reply) {
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    dram_policy_->CollectVictims(
        bytes - freed,
        [this](tiering::BlobId id) {
          mu_.AssertHeld();
          const BlobRecord* r = table_.Find(id);
          return r != nullptr && DramEvictable(*r) && (r->on_ssd() || r->children_with_bytes == 0);
        },
        &victims);
    if (victims.empty()) break;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table_.Find(id);
      if (record == nullptr || !DramEvictable(*record)) continue;
      const uint64_t length = record->extent->length;
      if (record->on_ssd()) {
        DetachDramLocked(record);  // the SSD copy stays
        arena_->counters().RecordEviction();
      } else if (record->children_with_bytes == 0) {
        DropToTextLocked(record, reply);
      } else {
        continue;
      }
      freed += length;
    }
    if (freed == freed_before) break;
  }
  reply->bytes_freed += freed;
  return freed;
}

uint64_t NodeEngine::FreeSsdLocked(uint64_t bytes, EvictReply* reply) {
  if (ssd_ == nullptr) return 0;
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  const auto evictable = [](const BlobRecord& r) {
    // A DRAM copy keeps the blob whole; without one, the bytes go only if no child
    // needs them.
    return r.state == BlobState::kLinked && r.on_ssd() && !r.moving && !r.pinned &&
           r.path_pins == 0 && (r.in_dram() || r.children_with_bytes == 0);
  };
  while (freed < bytes) {
    victims.clear();
    ssd_policy_->CollectVictims(
        bytes - freed,
        [&](tiering::BlobId id) {
          mu_.AssertHeld();
          const BlobRecord* r = table_.Find(id);
          return r != nullptr && evictable(*r);
        },
        &victims);
    if (victims.empty()) break;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table_.Find(id);
      if (record == nullptr || !evictable(*record)) continue;
      const uint64_t length = record->ssd_extent->length;
      if (record->in_dram()) {
        DetachSsdLocked(record);
        ssd_->counters().RecordEviction();
        journal_.Persist(*record);
      } else {
        DropToTextLocked(record, reply);
      }
      freed += length;
    }
    if (freed == freed_before) break;
  }
  reply->bytes_freed += freed;
  return freed;
}

absl::StatusOr<tiering::Extent> NodeEngine::AllocateLocked(uint64_t bytes) {
  absl::StatusOr<tiering::Extent> extent = arena_->Allocate(bytes);
  if (extent.ok() || !absl::IsResourceExhausted(extent.status())) {
    if (extent.ok() && AbovePressureLocked()) pressure_.Signal();
    return extent;
  }
  EvictReply evicted;
  // Free at least the request; fragmentation may need more, so retry with what remains.
  for (int round = 0; round < 64; ++round) {
    if (FreeDramLocked(bytes, &evicted) == 0) break;
    extent = arena_->Allocate(bytes);
    if (extent.ok() || !absl::IsResourceExhausted(extent.status())) return extent;
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "DRAM tier full: no room for ", bytes, " bytes after dropping ", evicted.blobs_dropped,
      " blobs (", evicted.bytes_freed,
      " bytes freed); the rest is pinned, leased, pending or continued by other blobs"));
}

bool NodeEngine::AbovePressureLocked() const {
  const tiering::TierStats stats = arena_->Stats();
  return static_cast<double>(stats.used_bytes) >
         options_.dram_high_watermark * static_cast<double>(stats.capacity_bytes);
}

}  // namespace strata::store::core
