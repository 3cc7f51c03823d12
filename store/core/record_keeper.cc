// RecordKeeper (record_keeper.h).
#include "strata/store/core/record_keeper.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::core {

RecordKeeper::RecordKeeper(const Deps& deps) : deps_(deps) {
  CHECK(deps_.table != nullptr && deps_.ledger != nullptr && deps_.journal != nullptr &&
        deps_.rebuild != nullptr && deps_.dram != nullptr && deps_.index_mu != nullptr);
}

void RecordKeeper::CheckLock(const absl::Mutex& mu) const {
  DCHECK_EQ(&mu, deps_.index_mu) << "RecordKeeper called with another lock than its index lock";
}

// ------------------------------------------------------------------------- holds

void RecordKeeper::Hold(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  ++record->holds;
  ++holds_;
}

void RecordKeeper::Unhold(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  CHECK_GT(record->holds, 0u) << "unholding record " << record->id << ", which is not held";
  --record->holds;
  --holds_;
}

uint64_t RecordKeeper::holds(const absl::Mutex& mu) const {
  CheckLock(mu);
  return holds_;
}

// ------------------------------------------------------------------------- release

uint64_t RecordKeeper::Release(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  uint64_t freed = 0;
  while (record != nullptr) {
    if (record->transient_dram && record->leases == 0 && record->holds == 0 && !record->moving) {
      // A copy made only to serve reads from SSD: gone once they are done.
      record->transient_dram = false;
      if (record->state == BlobState::kLinked && record->in_dram() && record->on_ssd() &&
          record->children_in_dram == 0 && record->path_pins == 0 && !record->pinned) {
        freed += record->extent->length;
        deps_.ledger->DetachDram(record);
      }
    }
    if (record->state != BlobState::kUnlinked) break;
    if (record->leases > 0 || record->holds > 0 || record->moving) break;
    if (record->hbm_extent.has_value()) {
      deps_.ledger->FreeHbmExtent(*record->hbm_extent);
      record->hbm_extent.reset();
    }
    if (record->extent.has_value()) {
      deps_.ledger->FreeDramExtent(*record, *record->extent);
      freed += record->extent->length;
      record->extent.reset();
    }
    if (record->ssd_extent.has_value()) {
      deps_.ledger->FreeSsdExtent(*record, *record->ssd_extent);
      record->ssd_extent.reset();
    }
    // Only the tokens (and what chains them) are needed from now on.
    std::vector<uint64_t>().swap(record->checksums);
    deps_.rebuild->End(record, /*filled=*/false);
    if (record->children > 0) break;
    const tiering::BlobId parent_id = record->parent_id;
    deps_.table->Erase(record->id);
    record = nullptr;
    if (parent_id != 0) {
      BlobRecord* parent = deps_.table->Find(parent_id);
      CHECK(parent != nullptr) << "record " << parent_id << " erased while a child needs it";
      CHECK_GT(parent->children, 0u);
      --parent->children;
      record = parent;
    }
  }
  return freed;
}

void RecordKeeper::Unlink(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  DCHECK(!record->pinned) << "unlinking a pinned blob";
  record->pinned = false;
  record->pin.Release();
  record->pages_in_index = 0;
  deps_.ledger->Unlinking(*record);
  deps_.table->Unlink(record);
  deps_.ledger->SyncText(record);
  deps_.journal->Forget(record->key);
}

uint64_t RecordKeeper::ApplyRemovedSpans(const absl::Mutex& mu,
                                         absl::Span<const radix::EvictedSpan> spans,
                                         bool count_evictions, uint64_t* bytes_freed) {
  uint64_t unlinked = 0;
  for (const radix::EvictedSpan& span : spans) {
    BlobRecord* record = deps_.table->FindLinked(span.blob);
    CHECK(record != nullptr) << "the index named blob " << span.blob.ToHex()
                             << ", which is not linked";
    CHECK_GE(record->pages_in_index, span.page_count);
    record->pages_in_index -= span.page_count;
    if (record->pages_in_index > 0) continue;
    Unlink(mu, record);
    ++unlinked;
    if (count_evictions) deps_.dram->counters().RecordEviction();
    *bytes_freed += Release(mu, record);
  }
  return unlinked;
}

absl::Status RecordKeeper::RemoveFromIndex(const absl::Mutex& mu, BlobRecord* record,
                                           absl::Span<const radix::TokenId> prefix,
                                           bool count_evictions, DeleteReply* reply) {
  CheckLock(mu);
  const radix::BlobKey key = record->key;
  std::vector<radix::EvictedSpan> spans;
  absl::StatusOr<uint64_t> removed = record->tree->RemoveSubtree(
      record->root_hash, prefix,
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
  reply->blobs_unlinked += ApplyRemovedSpans(mu, spans, count_evictions, &freed);
  return absl::OkStatus();
}

absl::Status RecordKeeper::RemoveFromIndex(const absl::Mutex& mu, BlobRecord* record,
                                           uint32_t from_page, bool count_evictions,
                                           DeleteReply* reply) {
  const std::vector<radix::TokenId> prefix = SequenceTokens(mu, *record, from_page + 1);
  return RemoveFromIndex(mu, record, prefix, count_evictions, reply);
}

Lease RecordKeeper::StartLease(const absl::Mutex& mu, absl::Span<BlobRecord* const> records,
                               uint64_t id, absl::Time now, absl::Time expiry) {
  CheckLock(mu);
  Lease lease;
  lease.id = id;
  lease.expiry = expiry;
  absl::flat_hash_set<tiering::BlobId> seen;
  for (BlobRecord* record : records) {
    if (!seen.insert(record->id).second) continue;
    lease.blobs.emplace_back(record->key, record->id);
    ++record->leases;
    ++record->hits;
    record->last_access = now;
    deps_.ledger->Accessed(record);
  }
  return lease;
}

void RecordKeeper::EndLease(const absl::Mutex& mu, const Lease& lease) {
  for (const auto& [key, record_id] : lease.blobs) {
    BlobRecord* record = deps_.table->Find(record_id);
    CHECK(record != nullptr) << "lease " << lease.id << " holds unknown record " << record_id;
    CHECK_GT(record->leases, 0u);
    --record->leases;
    Release(mu, record);
  }
}

// ------------------------------------------------------------------------- pins

void RecordKeeper::Pin(const absl::Mutex& mu, BlobRecord* record,
                       absl::Span<const radix::TokenId> sequence) {
  CheckLock(mu);
  DCHECK(!record->pinned);
  radix::MatchResult match = record->tree->Match(record->root_hash, sequence, /*pin=*/true);
  // The blobs whose index pages make up the path keep their bytes while pinned.
  for (const radix::MatchSegment& segment : match.segments) {
    BlobRecord* on_path = deps_.table->FindLinked(segment.blob);
    CHECK(on_path != nullptr) << "the index names an unlinked blob";
    if (!record->pinned_path.empty() && record->pinned_path.back() == on_path->id) continue;
    ++on_path->path_pins;
    record->pinned_path.push_back(on_path->id);
  }
  record->pin = std::move(match.handle);
  record->pinned = true;
}

void RecordKeeper::Unpin(const absl::Mutex& mu, BlobRecord* record) {
  CheckLock(mu);
  for (const tiering::BlobId id : record->pinned_path) {
    BlobRecord* on_path = deps_.table->Find(id);
    CHECK(on_path != nullptr && on_path->path_pins > 0) << "pinned path record " << id;
    --on_path->path_pins;
  }
  record->pinned_path.clear();
  record->pin.Release();
  record->pinned = false;
}

// ------------------------------------------------------------------------- tokens

TokenChain RecordKeeper::ChainOf(const absl::Mutex& mu, const BlobRecord& record,
                                 uint32_t pages) const {
  CheckLock(mu);
  TokenChain chain;
  CHECK_GE(pages, record.root_page) << "page " << pages << " before the record's index root";
  chain.pages = pages - record.root_page;
  chain.page_tokens = record.ns->layout().page_tokens;
  const BlobRecord* r = &record;
  uint32_t upto = pages;
  while (upto > record.root_page) {
    CHECK(r != nullptr) << "broken parent chain";
    CHECK(upto > r->first_page && upto <= r->end_page())
        << "page " << upto << " outside (" << r->first_page << ", " << r->end_page() << "]";
    chain.links.emplace_back(r, upto - r->first_page);
    upto = r->first_page;
    r = r->parent_id != 0 ? deps_.table->Find(r->parent_id) : nullptr;
  }
  return chain;
}

std::vector<radix::TokenId> RecordKeeper::Assemble(const TokenChain& chain) {
  std::vector<radix::TokenId> tokens;
  tokens.reserve(size_t{chain.pages} * chain.page_tokens);
  for (auto it = chain.links.rbegin(); it != chain.links.rend(); ++it) {
    const auto& own = it->first->tokens;  // immutable once the record exists
    tokens.insert(tokens.end(), own.begin(), own.begin() + size_t{it->second} * chain.page_tokens);
  }
  return tokens;
}

std::vector<radix::TokenId> RecordKeeper::SequenceTokens(const absl::Mutex& mu,
                                                         const BlobRecord& record,
                                                         uint32_t pages) const {
  return Assemble(ChainOf(mu, record, pages));
}

// ------------------------------------------------------------------------- TierMover::Records

void RecordKeeper::HoldRecord(BlobRecord* record) {
  deps_.index_mu->AssertHeld();
  Hold(*deps_.index_mu, record);
}

void RecordKeeper::UnholdRecord(BlobRecord* record) {
  deps_.index_mu->AssertHeld();
  Unhold(*deps_.index_mu, record);
}

uint64_t RecordKeeper::ReleaseRecord(BlobRecord* record) {
  deps_.index_mu->AssertHeld();
  return Release(*deps_.index_mu, record);
}

absl::Status RecordKeeper::RemoveFromIndex(BlobRecord* record, uint32_t from_page,
                                           DeleteReply* reply) {
  deps_.index_mu->AssertHeld();
  return RemoveFromIndex(*deps_.index_mu, record, from_page, /*count_evictions=*/false, reply);
}

}  // namespace strata::store::core
