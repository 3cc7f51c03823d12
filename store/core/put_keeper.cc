// PutKeeper (put_keeper.h).
#include "strata/store/core/put_keeper.h"

#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::core {

PutKeeper::PutKeeper(const Deps& deps) : deps_(deps) {
  CHECK(deps_.registry != nullptr && deps_.table != nullptr && deps_.puts != nullptr &&
        deps_.ledger != nullptr && deps_.journal != nullptr && deps_.keeper != nullptr &&
        deps_.rebuild != nullptr && deps_.mover != nullptr && deps_.dram != nullptr &&
        deps_.index_mu != nullptr);
}

void PutKeeper::CheckLock(const absl::Mutex& mu) const {
  DCHECK_EQ(&mu, deps_.index_mu) << "PutKeeper called with another lock than its index lock";
}

absl::StatusOr<BeginPutReply> PutKeeper::Begin(absl::Mutex& mu, NewPut put,
                                               absl::FunctionRef<tiering::BlobId()> new_id) {
  CheckLock(mu);
  const PutRequest& request = *put.request;
  absl::StatusOr<tiering::Extent> extent =
      deps_.mover->Allocate(mu, request.bytes, put.ns->tenant());
  if (!extent.ok()) {
    if (put.parent != nullptr) {
      --put.parent->children;
      put.prefix_pin.Release();
      deps_.keeper->Release(mu, put.parent);
    }
    return extent.status();
  }
  std::unique_ptr<BlobRecord> record = NewRecord(EntryOf(put), put, new_id());
  record->extent = *extent;
  BlobRecord* added = deps_.table->Add(std::move(record));

  PendingPut pending(added);
  pending.sequence = std::move(put.sequence);
  pending.prefix_pin = std::move(put.prefix_pin);
  const PendingPut& queued = deps_.puts->Add(std::move(pending), put.now);
  BeginPutReply reply;
  reply.key = put.key;
  reply.put_id = added->id;
  reply.extent = *extent;
  reply.deadline = queued.deadline;
  return reply;
}

const NamespaceEntry& PutKeeper::EntryOf(const NewPut& put) {
  const NamespaceEntry* entry = deps_.registry->Find(put.namespace_hash);
  return entry != nullptr ? *entry : deps_.registry->Register(*put.ns, put.namespace_hash);
}

std::unique_ptr<BlobRecord> PutKeeper::NewRecord(const NamespaceEntry& entry, const NewPut& put,
                                                 tiering::BlobId id) {
  const PutRequest& request = *put.request;
  auto record = std::make_unique<BlobRecord>();
  record->id = id;
  record->key = put.key;
  record->namespace_hash = put.namespace_hash;
  record->ns = &entry.ns;
  record->tree = entry.tree;
  record->root_id = record->id;
  record->root_hash = put.start_hash;  // h_0 at page 0, else the segment start
  record->root_page = put.first_page;
  if (put.parent != nullptr) {
    record->parent = request.parent;
    record->parent_id = put.parent->id;
    record->root_id = put.parent->root_id;
    record->root_hash = put.parent->root_hash;
    record->root_page = put.parent->root_page;
  }
  record->start_hash = put.start_hash;
  record->first_page = put.first_page;
  record->pages = put.pages;
  record->bytes = request.bytes;
  record->tokens.assign(request.tokens.begin(), request.tokens.end());
  record->checksums.assign(request.checksums.begin(), request.checksums.end());
  record->created = put.now;
  record->last_access = put.now;
  return record;
}

absl::StatusOr<BeginPutReply> PutKeeper::AddText(absl::Mutex& mu, NewPut put,
                                                 absl::FunctionRef<tiering::BlobId()> new_id) {
  CheckLock(mu);
  BlobRecord* record = deps_.table->Add(NewRecord(EntryOf(put), put, new_id()));
  absl::StatusOr<uint32_t> inserted = record->tree->Insert(
      record->root_hash, put.sequence, record->first_page - record->root_page, record->key);
  put.prefix_pin.Release();  // the blob's own nodes hold the path now (or it is dropped)
  BeginPutReply reply;
  reply.key = record->key;
  if (!inserted.ok() || *inserted == 0) {
    deps_.table->Unlink(record);
    deps_.keeper->Release(mu, record);
    deps_.mover->TrimText(mu);  // as after an abort: the pin is gone
    if (!inserted.ok()) {
      // Cannot happen: the prefix was pinned.
      LOG(ERROR) << "PutText: index insert of " << reply.key.ToHex()
                 << " failed: " << inserted.status();
      return absl::InternalError(
          absl::StrCat("index insert failed: ", inserted.status().message()));
    }
    return reply;
  }
  record->insert_tick = deps_.ledger->NextTick();
  record->read_tick = record->insert_tick;
  record->pages_in_index = *inserted;
  deps_.table->Link(record);
  deps_.ledger->SyncText(record);
  deps_.journal->Persist(*record);
  reply.indexed_pages = *inserted;
  deps_.mover->TrimText(mu);  // may take this very blob, leaf first, when TEXT is full
  return reply;
}

absl::StatusOr<PendingPut*> PutKeeper::Find(absl::Mutex& mu, uint64_t put_id, absl::Time now) {
  PendingPut* put = deps_.puts->Find(put_id);
  if (put == nullptr) return PutTable::NotFound(put_id, /*expired=*/false);
  if (PutTable::Expired(*put, now)) {
    Abort(mu, put_id);
    return PutTable::NotFound(put_id, /*expired=*/true);
  }
  return put;
}

void PutKeeper::Abort(absl::Mutex& mu, uint64_t put_id) {
  Discard(mu, put_id);
  // The prefix pin is gone: a TEXT blob it kept past the TEXT budget may go now.
  deps_.mover->TrimText(mu);
}

void PutKeeper::Discard(absl::Mutex& mu, uint64_t put_id) {
  CheckLock(mu);
  BlobRecord* record = nullptr;
  {
    const PendingPut put = deps_.puts->Take(put_id);
    record = put.record;
  }  // releases the prefix pin
  deps_.table->Unlink(record);
  deps_.keeper->Release(mu, record);
}

absl::StatusOr<CommitPutReply> PutKeeper::Commit(absl::Mutex& mu, uint64_t put_id, absl::Time now) {
  CheckLock(mu);
  PendingPut& put = deps_.puts->Get(put_id);
  BlobRecord* record = put.record;
  const radix::BlobKey key = record->key;
  if (BlobRecord* text = deps_.table->FindLinked(key); text != nullptr) {
    return Refill(mu, put_id, text, now);
  }
  absl::StatusOr<uint32_t> inserted = record->tree->Insert(
      record->root_hash, put.sequence, record->first_page - record->root_page, key);
  if (!inserted.ok()) {
    // Cannot happen: the prefix is pinned. Do not leave the put half-done.
    LOG(ERROR) << "CommitPut: index insert of " << key.ToHex() << " failed: " << inserted.status();
    Abort(mu, put_id);
    return absl::InternalError(absl::StrCat("index insert failed: ", inserted.status().message()));
  }
  deps_.puts->Take(put_id);  // releases the prefix pin: the blob's own nodes now hold the path
  record->created = now;
  record->last_access = now;
  record->insert_tick = deps_.ledger->NextTick();
  record->read_tick = record->insert_tick;
  CommitPutReply reply;
  reply.key = key;
  reply.indexed_pages = *inserted;
  if (*inserted == 0) {
    deps_.table->Unlink(record);
    deps_.keeper->Release(mu, record);
    deps_.mover->TrimText(mu);  // as after an abort
    return reply;
  }
  record->pages_in_index = *inserted;
  const tiering::Extent extent = *record->extent;
  record->extent.reset();
  deps_.table->Link(record);
  deps_.ledger->AttachDram(record, extent);
  deps_.journal->Persist(*record);
  deps_.mover->SignalIfAbovePressure(mu);
  return reply;
}

absl::StatusOr<CommitPutReply> PutKeeper::Refill(absl::Mutex& mu, uint64_t put_id, BlobRecord* text,
                                                 absl::Time now) {
  BlobRecord* record = deps_.puts->Get(put_id).record;
  const radix::BlobKey key = record->key;
  if (text->has_bytes() || text->moving) {
    // Refilled by another put, or promoted, meanwhile: this one is redundant.
    Discard(mu, put_id);
    return CommitPutReply{key, 0};
  }
  if (record->first_page != text->first_page) return RefillWithin(mu, put_id, text, now);
  if (record->checksums != text->checksums) {
    uint64_t i = 0;
    while (i < record->checksums.size() && record->checksums[i] == text->checksums[i]) ++i;
    absl::Status differ = absl::FailedPreconditionError(absl::StrCat(
        "put ", put_id, " would rebuild blob ", key.ToHex(), " with other bytes than the original ",
        "(chunk ", i,
        " differs: another model, seed or layout?); put aborted, the blob stays TEXT"));
    Discard(mu, put_id);
    return differ;
  }
  const tiering::Extent extent = *record->extent;
  record->extent.reset();  // the bytes move to the TEXT record
  Discard(mu, put_id);
  deps_.ledger->AttachDram(text, extent);
  text->last_access = now;
  deps_.ledger->CountRebuild();
  deps_.rebuild->End(text, /*filled=*/true);
  deps_.mover->SignalIfAbovePressure(mu);
  return CommitPutReply{key, text->pages_in_index};
}

absl::Status PutKeeper::NarrowerThanText(uint32_t first_page, const BlobRecord& text) {
  return absl::FailedPreconditionError(
      absl::StrCat("a put of pages [", first_page, ", ", text.end_page(), ") cannot rebuild blob ",
                   text.key.ToHex(), ", TEXT over pages [", text.first_page, ", ", text.end_page(),
                   ") on this node: write from page ", text.first_page));
}

std::optional<uint64_t> PutKeeper::FirstDifferentChunk(const BlobRecord& put,
                                                       const BlobRecord& text) {
  const uint64_t m = put.pages, n = text.pages;
  const uint64_t layers = text.checksums.size() / n;
  if (put.checksums.size() != layers * m || text.checksums.size() != layers * n) return 0;
  const uint64_t skip = text.first_page - put.first_page;
  for (uint64_t l = 0; l < layers; ++l) {
    for (uint64_t p = 0; p < n; ++p) {
      if (put.checksums[l * m + skip + p] != text.checksums[l * n + p]) return l * n + p;
    }
  }
  return std::nullopt;
}

absl::StatusOr<CommitPutReply> PutKeeper::RefillWithin(absl::Mutex& mu, uint64_t put_id,
                                                       BlobRecord* text, absl::Time now) {
  BlobRecord* record = deps_.puts->Get(put_id).record;
  const radix::BlobKey key = record->key;
  if (record->first_page > text->first_page) {
    absl::Status narrower = NarrowerThanText(record->first_page, *text);
    Discard(mu, put_id);
    deps_.mover->TrimText(mu);  // as after an abort
    return narrower;
  }
  // The TEXT record and its TEXT ancestors that lie whole within the put, nearest first.
  std::vector<BlobRecord*> fill;
  for (BlobRecord* r = text; r != nullptr;) {
    if (std::optional<uint64_t> chunk = FirstDifferentChunk(*record, *r); chunk.has_value()) {
      absl::Status differ = absl::FailedPreconditionError(absl::StrCat(
          "put ", put_id, " would rebuild blob ", r->key.ToHex(), " with other bytes than the ",
          "original (chunk ", *chunk, " differs: another model, seed or layout?); put aborted, ",
          "the blob stays TEXT"));
      Discard(mu, put_id);
      deps_.mover->TrimText(mu);  // as after an abort
      return differ;
    }
    fill.push_back(r);
    BlobRecord* parent = r->parent.has_value() ? deps_.table->Find(r->parent_id) : nullptr;
    if (parent == nullptr || parent->state != BlobState::kLinked || parent->has_bytes() ||
        parent->moving || parent->first_page < record->first_page ||
        parent->end_page() != r->first_page) {
      break;
    }
    r = parent;
  }
  // Each its own extent (the allocation may evict; held, the records stay), the bytes
  // copied layer by layer out of the put's.
  for (BlobRecord* r : fill) deps_.keeper->Hold(mu, r);
  const uint64_t chunk = record->ns->layout().BytesPerLayerPage();
  const std::byte* from = deps_.dram->Data(*record->extent).data();
  absl::Status allocated = absl::OkStatus();
  bool filled_text = false;
  for (BlobRecord* r : fill) {
    absl::StatusOr<tiering::Extent> extent =
        deps_.mover->Allocate(mu, r->bytes, TierLedger::LabelOf(*r));
    if (!extent.ok()) {
      allocated = extent.status();
      break;
    }
    if (r->state != BlobState::kLinked || r->has_bytes() || r->moving) {
      deps_.ledger->FreeDramExtent(*r, *extent);  // trimmed or filled meanwhile
      continue;
    }
    std::byte* to = deps_.dram->Data(*extent).data();
    const uint64_t run = uint64_t{r->pages} * chunk;
    for (uint64_t l = 0; l < r->bytes / run; ++l) {
      std::memcpy(to + l * run,
                  from + (l * record->pages + (r->first_page - record->first_page)) * chunk, run);
    }
    deps_.ledger->AttachDram(r, *extent);
    r->last_access = now;
    deps_.ledger->CountRebuild();
    deps_.rebuild->End(r, /*filled=*/true);
    filled_text = filled_text || r == text;
  }
  const uint32_t indexed = filled_text ? text->pages_in_index : 0;
  Discard(mu, put_id);
  for (BlobRecord* r : fill) {
    deps_.keeper->Unhold(mu, r);
    deps_.keeper->Release(mu, r);
  }
  deps_.mover->TrimText(mu);  // the put's prefix pin is gone (as after an abort)
  deps_.mover->SignalIfAbovePressure(mu);
  if (!filled_text && !allocated.ok()) return allocated;
  return CommitPutReply{key, indexed};
}

}  // namespace strata::store::core
