// NodeEngine: the two-phase put (BeginPut, PutTarget, PutReceived, CommitPut, AbortPut).
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

absl::Status Draining() {
  return absl::UnavailableError("draining: this node accepts no new puts");
}

absl::Status ParentMissing(const BlobParent& parent) {
  return absl::FailedPreconditionError(
      absl::StrCat("parent blob ", parent.key.ToHex(), " is not in this node's index"));
}

absl::Status Committing(uint64_t put_id) {
  return absl::FailedPreconditionError(absl::StrCat("put ", put_id, ": its commit is in progress"));
}

}  // namespace

absl::StatusOr<BeginPutReply> NodeEngine::BeginPut(const radix::Namespace& ns,
                                                   const PutRequest& request,
                                                   const AccessScope& scope) {
  return StartPut(ns, request, scope, /*text_only=*/false);
}

absl::StatusOr<BeginPutReply> NodeEngine::PutText(const radix::Namespace& ns,
                                                  const PutRequest& request,
                                                  const AccessScope& scope) {
  return StartPut(ns, request, scope, /*text_only=*/true);
}

absl::StatusOr<BeginPutReply> NodeEngine::StartPut(const radix::Namespace& ns,
                                                   const PutRequest& request,
                                                   const AccessScope& scope, bool text_only) {
  if (!scope.Allows(ns.tenant())) {
    return absl::PermissionDeniedError(
        absl::StrCat("this tenant may not write namespaces of tenant label \"", ns.tenant(), "\""));
  }
  STRATA_RETURN_IF_ERROR(PutTable::Validate(ns, request, options_.max_blob_bytes));
  const uint32_t page_tokens = ns.layout().page_tokens;
  const auto pages = static_cast<uint32_t>(request.tokens.size() / page_tokens);
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  const absl::Time now = clock_->Now();

  const MetaJournal::FlushOnExit flush(&journal_);  // after the locks below
  // With a parent, its checks and its chain under the lock; the prefix tokens are copied
  // and hashed after dropping it, the parent held meanwhile (RecordKeeper: tokens never
  // change and a held record's ancestors stay).
  BlobRecord* parent = nullptr;
  uint32_t first_page = 0;
  radix::PrefixHash start_hash = h0;
  std::vector<radix::TokenId> sequence;  // from the index root (root_page) on
  if (request.segment_start.has_value()) {
    first_page = request.segment_start->pages;
    start_hash = request.segment_start->hash;
  } else if (request.parent.has_value()) {
    TokenChain chain;
    {
      TimedMutexLock lock(&mu_, lock_hold_);
      if (draining_) return Draining();
      parent = table_.FindLinked(request.parent->key);
      // A parent of another namespace answers like a missing one (no cross-tenant probing).
      if (parent == nullptr || parent->namespace_hash != h0) return ParentMissing(*request.parent);
      first_page = request.parent->pages;
      STRATA_RETURN_IF_ERROR(PutTable::CheckParent(*parent, first_page, pages));
      chain = keeper_.ChainOf(mu_, *parent, first_page);
      keeper_.Hold(mu_, parent);
    }
    sequence = RecordKeeper::Assemble(chain);
    const uint32_t taken = first_page - parent->first_page;
    start_hash = radix::PrefixHashAt(
        parent->start_hash, absl::MakeConstSpan(parent->tokens).first(size_t{taken} * page_tokens),
        page_tokens);
  }
  const radix::BlobKey key{radix::PrefixHashAt(start_hash, request.tokens, page_tokens)};

  TimedMutexLock lock(&mu_, lock_hold_);
  if (parent != nullptr && !UnholdWalked(parent)) return ParentMissing(*request.parent);
  if (draining_) return Draining();
  if (request.key.has_value() && *request.key != key) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key mismatch: the client computed ", request.key->ToHex(), ", the node ", key.ToHex()));
  }
  // A TEXT blob (bytes dropped, tokens kept) is refilled by a put: a rebuild. A TEXT put
  // of a linked key has nothing to add.
  const BlobRecord* linked = table_.FindLinked(key);
  if ((linked != nullptr && (linked->has_bytes() || text_only)) || puts_.Filling(key)) {
    BeginPutReply reply;
    reply.exists = true;
    reply.key = key;
    return reply;
  }
  if (linked != nullptr && linked->first_page < first_page) {
    return PutKeeper::NarrowerThanText(first_page, *linked);  // before any byte is sent
  }
  // Pin the prefix the blob continues, so that neither the eviction below nor a Delete
  // can take it before the commit inserts the blob under it.
  radix::MatchHandle prefix_pin;
  if (parent != nullptr) {
    radix::MatchResult match = parent->tree->Match(parent->root_hash, sequence, /*pin=*/true);
    if (match.matched_pages < first_page - parent->root_page) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pages [", parent->root_page + match.matched_pages, ", ", first_page,
          ") of the prefix of parent blob ", parent->key.ToHex(), " are no longer cached"));
    }
    prefix_pin = std::move(match.handle);
    ++parent->children;  // keeps the parent's record through the eviction below
  }
  sequence.insert(sequence.end(), request.tokens.begin(), request.tokens.end());
  NewPut put{.ns = &ns,
             .namespace_hash = h0,
             .request = &request,
             .key = key,
             .start_hash = start_hash,
             .first_page = first_page,
             .pages = pages,
             .parent = parent,
             .sequence = std::move(sequence),
             .prefix_pin = std::move(prefix_pin),
             .now = now};
  if (text_only) return put_keeper_.AddText(mu_, std::move(put), [this] { return ids_.Next(); });
  // Before the allocation evicts anything: does it fit, within the pending puts' limits?
  if (absl::Status admitted =
          puts_.Admit(ns.tenant(), request.bytes,
                      PutTable::MetadataBytes(request.tokens.size(), put.sequence.size(),
                                              request.checksums.size()),
                      arena_->capacity());
      !admitted.ok()) {
    if (parent != nullptr) {
      --parent->children;
      put.prefix_pin.Release();
      keeper_.Release(mu_, parent);
    }
    return admitted;
  }
  return put_keeper_.Begin(mu_, std::move(put), [this] { return ids_.Next(); });
}

absl::StatusOr<PendingPut*> NodeEngine::FindPutLocked(uint64_t put_id, absl::Time now,
                                                      const AccessScope& scope) {
  STRATA_ASSIGN_OR_RETURN(PendingPut * put, put_keeper_.Find(mu_, put_id, now));
  if (!scope.Allows(put->record->ns->tenant())) return PutTable::NotFound(put_id, false);
  return put;
}

absl::StatusOr<HeldSpan> NodeEngine::PutTarget(uint64_t put_id, const AccessScope& scope) {
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  STRATA_ASSIGN_OR_RETURN(PendingPut * put, FindPutLocked(put_id, now, scope));
  if (put->committing) return Committing(put_id);
  puts_.Touch(*put, now);
  BlobRecord* record = put->record;
  keeper_.Hold(mu_, record);
  return HeldSpan(this, record->id, arena_->Data(*record->extent).first(record->bytes));
}

absl::Status NodeEngine::PutReceived(uint64_t put_id, uint64_t offset, uint64_t length,
                                     const AccessScope& scope) {
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  STRATA_ASSIGN_OR_RETURN(PendingPut * put, FindPutLocked(put_id, now, scope));
  if (put->committing) return Committing(put_id);
  STRATA_RETURN_IF_ERROR(put->received.Add(offset, length));
  puts_.Touch(*put, now);
  return absl::OkStatus();
}

absl::StatusOr<CommitPutReply> NodeEngine::CommitPut(uint64_t put_id, const AccessScope& scope) {
  absl::Span<const std::byte> bytes;
  absl::Span<const uint64_t> checksums;
  uint64_t chunk_bytes = 0;
  uint32_t pages = 0;
  {
    const absl::Time now = clock_->Now();
    const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
    TimedMutexLock lock(&mu_, lock_hold_);
    STRATA_ASSIGN_OR_RETURN(PendingPut * put, FindPutLocked(put_id, now, scope));
    if (put->committing) return Committing(put_id);
    if (!put->received.complete()) {
      return absl::FailedPreconditionError(absl::StrCat("put ", put_id, ": ",
                                                        put->received.covered(), " of ",
                                                        put->received.size(), " bytes received"));
    }
    const BlobRecord& record = *put->record;
    if (record.holds > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "put ", put_id, ": ", record.holds, " receive(s) still hold its bytes (HeldSpan)"));
    }
    put->committing = true;
    bytes = arena_->Data(*record.extent).first(record.bytes);
    checksums = record.checksums;  // not changed while committing
    chunk_bytes = record.ns->layout().BytesPerLayerPage();
    pages = record.pages;
  }

  // Verify without the lock: a committing put is neither aborted nor reaped, so its
  // extent and checksums stay put, and no receive holds its bytes.
  const uint64_t bad = FirstBadChunk(bytes, checksums, chunk_bytes);
  const uint64_t got =
      bad == checksums.size() ? 0 : ChunkChecksum(bytes.subspan(bad * chunk_bytes, chunk_bytes));

  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  PendingPut& put = puts_.Get(put_id);  // a committing put is never aborted or reaped
  put.committing = false;
  BlobRecord* record = put.record;
  const radix::BlobKey key = record->key;
  if (bad != checksums.size()) {
    // The message first: the abort frees the checksums.
    absl::Status loss = absl::DataLossError(absl::StrCat(
        "put ", put_id, " of blob ", key.ToHex(), ": chunk (layer ", bad / pages, ", page ",
        bad % pages, ") has checksum ", got, ", expected ", checksums[bad], "; put aborted"));
    put_keeper_.Abort(mu_, put_id);
    return loss;
  }
  return put_keeper_.Commit(mu_, put_id, now);
}

absl::Status NodeEngine::AbortPut(uint64_t put_id, const AccessScope& scope) {
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  STRATA_ASSIGN_OR_RETURN(PendingPut * put, FindPutLocked(put_id, now, scope));
  if (put->committing) return Committing(put_id);
  put_keeper_.Abort(mu_, put_id);
  return absl::OkStatus();
}

}  // namespace strata::store::core
