// NodeEngine: eviction under pressure (DRAM without I/O, SSD, TEXT) and allocation. Where
// a blob's bytes live and what counts them is the TierLedger's (tier_ledger.h); demotion
// to SSD and promotion back into DRAM are in node_engine_moves.cc.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
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
    ledger_.DetachDram(record);
    arena_->counters().RecordEviction();
  }
  const bool had_ssd = record->on_ssd();
  if (had_ssd) {
    ledger_.DetachSsd(record);
    ssd_->counters().RecordEviction();
  }
  ledger_.CountTextDrop();
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
  if (ledger_.text().used_bytes > options_.text_bytes) {
    EvictTextLocked(ledger_.text().used_bytes - options_.text_bytes, reply);
  }
}

void NodeEngine::EvictTextLocked(uint64_t bytes, EvictReply* reply) {
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    ledger_.text_policy().CollectVictims(
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
      const uint64_t text = TierLedger::TextBytes(*record);
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
      ledger_.CountTextDeletion();
      reply->bytes_freed += text;
      reply->pages_evicted += removed.pages_removed;
      reply->blobs_unlinked += removed.blobs_unlinked;
    }
    if (freed == freed_before) return;  // every candidate is held by the index
  }
}

// ------------------------------------------------------------------------- DRAM, SSD

uint64_t NodeEngine::FreeDramLocked(uint64_t bytes, EvictReply* reply) {
  uint64_t freed = 0;
  std::vector<tiering::BlobId> victims;
  while (freed < bytes) {
    victims.clear();
    ledger_.dram_policy().CollectVictims(
        bytes - freed,
        [this](tiering::BlobId id) {
          mu_.AssertHeld();
          const BlobRecord* r = table_.Find(id);
          return r != nullptr && TierLedger::DramEvictable(*r) &&
                 (r->on_ssd() || r->children_with_bytes == 0);
        },
        &victims);
    if (victims.empty()) break;
    const uint64_t freed_before = freed;
    for (const tiering::BlobId id : victims) {
      BlobRecord* record = table_.Find(id);
      if (record == nullptr || !TierLedger::DramEvictable(*record)) continue;
      const uint64_t length = record->extent->length;
      if (record->on_ssd()) {
        ledger_.DetachDram(record);  // the SSD copy stays
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
    ledger_.ssd_policy().CollectVictims(
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
        ledger_.DetachSsd(record);
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
