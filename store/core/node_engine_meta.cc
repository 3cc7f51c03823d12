// NodeEngine: durable metadata (store/meta) — what is written when, and the restart that
// rebuilds the index from it.
//
// Writes (all under the engine lock, so they reach the store in the order the engine
// changed its records):
//   commit           PutBlob (+ PutNamespace the first time), not synced: a crash of the
//                    process keeps it (the WAL is in the page cache), a crash of the
//                    machine may lose it, which loses cache, never correctness
//   demotion         PutBlob with the SSD extent, synced, after the extent's bytes were
//                    flushed: a blob becomes visible on SSD only once durable there
//   SSD copy dropped PutBlob without the extent, not synced; the extent may be reused at
//                    once because any later synced write persists this one first (one log)
//   unlink           DeleteBlob, not synced
//   pin, unpin       PutBlob with the flag, not synced
// Restart: LoadAll, then records parents first (by first page); each is checked (its key
// recomputed from its start hash and tokens, its parent present and consistent, sizes),
// re-inserted into its tree, and given back its SSD extent (Reserve) or made TEXT.
// Records that fail a check are deleted from the store and counted.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {

meta::BlobMeta NodeEngine::MetaOf(const BlobRecord& record) const {
  meta::BlobMeta m;
  m.key = record.key;
  m.namespace_hash = record.namespace_hash;
  if (record.parent.has_value()) {
    m.parent = meta::BlobMetaParent{record.parent->key, record.parent->pages};
  }
  m.start_hash = record.start_hash;
  m.first_page = record.first_page;
  m.pages = record.pages;
  m.bytes = record.bytes;
  m.tokens = record.tokens;
  m.checksums = record.checksums;
  m.in_dram = record.in_dram();
  if (record.ssd_extent.has_value()) {
    m.ssd = meta::SsdLocation{record.ssd_extent->offset, record.ssd_extent->length};
  }
  m.created = record.created;
  m.last_access = record.last_access;
  m.hits = record.hits;
  m.pinned = record.pinned;
  return m;
}

void NodeEngine::AddToBatchLocked(const BlobRecord& record, meta::MetaBatch* batch) {
  if (!stored_namespaces_.contains(record.namespace_hash)) {
    batch->PutNamespace(*record.ns);
    stored_namespaces_.insert(record.namespace_hash);
  }
  batch->PutBlob(MetaOf(record));
}

absl::Status NodeEngine::ApplyMetaLocked(const meta::MetaBatch& batch) {
  if (options_.meta == nullptr || batch.empty()) return absl::OkStatus();
  absl::Status status = options_.meta->Apply(batch);
  if (!status.ok()) {
    ++meta_errors_;
    LOG(WARNING) << "metadata write of " << batch.size() << " ops failed: " << status;
    if (batch.changes_namespaces()) {
      // Not stored after all: put them again with the next record that needs them.
      for (const meta::MetaBatch::Op& op : batch.ops()) {
        if (op.kind == meta::MetaBatch::OpKind::kPutNamespace) stored_namespaces_.erase(op.key);
      }
    }
  }
  return status;
}

void NodeEngine::PersistLocked(const BlobRecord& record) {
  if (options_.meta == nullptr || record.state != BlobState::kLinked) return;
  meta::MetaBatch batch(/*sync=*/false);
  AddToBatchLocked(record, &batch);
  ApplyMetaLocked(batch).IgnoreError();  // logged and counted; the record is cache
}

void NodeEngine::ForgetLocked(const radix::BlobKey& key) {
  if (options_.meta == nullptr) return;
  meta::MetaBatch batch(/*sync=*/false);
  batch.DeleteBlob(key);
  ApplyMetaLocked(batch).IgnoreError();
}

// ------------------------------------------------------------------------- restart

absl::Status NodeEngine::CheckRestoredLocked(const meta::BlobMeta& m, const radix::Namespace& ns,
                                             BlobRecord** parent) const {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t page_tokens = layout.page_tokens;
  if (m.pages == 0 || m.tokens.size() != m.pages * page_tokens ||
      m.checksums.size() != uint64_t{m.pages} * layout.num_layers ||
      m.bytes != m.pages * layout.BytesPerPage()) {
    return absl::DataLossError("sizes do not agree with the namespace's layout");
  }
  radix::PrefixHash start = radix::NamespaceHash(ns);
  *parent = nullptr;
  if (m.parent.has_value()) {
    BlobRecord* p = table_.FindLinked(m.parent->key);
    if (p == nullptr || p->namespace_hash != m.namespace_hash) {
      return absl::FailedPreconditionError("its parent was not restored");
    }
    if (m.first_page != m.parent->pages || m.first_page <= p->first_page ||
        m.first_page > p->end_page()) {
      return absl::DataLossError("its parent pages do not fit the parent");
    }
    start = radix::PrefixHashAt(
        p->start_hash,
        absl::MakeConstSpan(p->tokens).first((m.first_page - p->first_page) * page_tokens),
        layout.page_tokens);
    *parent = p;
  } else if (m.first_page != 0) {
    return absl::DataLossError("a blob without a parent must start at page 0");
  }
  if (start != m.start_hash) return absl::DataLossError("its start hash does not match");
  if (radix::BlobKey{radix::PrefixHashAt(start, m.tokens, layout.page_tokens)} != m.key) {
    return absl::DataLossError("its key does not match its tokens");
  }
  return absl::OkStatus();
}

absl::StatusOr<RestoreReport> NodeEngine::RestoreFromMeta() {
  RestoreReport report;
  if (options_.meta == nullptr) return report;
  const absl::Time started = absl::Now();
  absl::flat_hash_map<radix::PrefixHash, radix::Namespace> namespaces;
  std::vector<meta::BlobMeta> blobs;
  meta::MetaLoadCallbacks callbacks;
  callbacks.on_namespace = [&](const radix::PrefixHash& hash, radix::Namespace ns) {
    namespaces.emplace(hash, std::move(ns));
    return absl::OkStatus();
  };
  callbacks.on_blob = [&](meta::BlobMeta m) {
    blobs.push_back(std::move(m));
    return absl::OkStatus();
  };
  STRATA_ASSIGN_OR_RETURN(const meta::MetaLoadSummary loaded, options_.meta->LoadAll(callbacks));
  report.corrupt = loaded.corrupt_blobs + loaded.corrupt_namespaces;
  report.load_time = absl::Now() - started;
  // A parent starts on an earlier page than each of its children.
  std::stable_sort(
      blobs.begin(), blobs.end(),
      [](const meta::BlobMeta& a, const meta::BlobMeta& b) { return a.first_page < b.first_page; });

  TimedMutexLock lock(&mu_, lock_hold_);
  for (const auto& [hash, ns] : namespaces) stored_namespaces_.insert(hash);
  meta::MetaBatch fixups(/*sync=*/false);
  std::vector<BlobRecord*> pinned;
  for (meta::BlobMeta& m : blobs) {
    auto ns_it = namespaces.find(m.namespace_hash);
    BlobRecord* parent = nullptr;
    absl::Status check = ns_it == namespaces.end()
                             ? absl::DataLossError("its namespace is not stored")
                             : CheckRestoredLocked(m, ns_it->second, &parent);
    if (!check.ok()) {
      VLOG(1) << "restart: dropping " << m.key.ToHex() << ": " << check;
      ++report.dropped;
      fixups.DeleteBlob(m.key);
      continue;
    }
    const NamespaceEntry* entry = registry_.Find(m.namespace_hash);
    if (entry == nullptr) entry = &registry_.Register(ns_it->second, m.namespace_hash);
    std::vector<radix::TokenId> sequence;
    if (parent != nullptr) sequence = SequenceTokens(*parent, m.first_page);
    sequence.insert(sequence.end(), m.tokens.begin(), m.tokens.end());
    absl::StatusOr<uint32_t> inserted =
        entry->tree->Insert(m.namespace_hash, sequence, m.first_page, m.key);
    if (!inserted.ok() || *inserted == 0) {
      ++report.dropped;  // redundant (its pages are another blob's) or not insertable
      fixups.DeleteBlob(m.key);
      continue;
    }
    auto record = std::make_unique<BlobRecord>();
    record->id = NewId();
    record->key = m.key;
    record->namespace_hash = m.namespace_hash;
    record->ns = &entry->ns;
    record->tree = entry->tree;
    record->root_id = record->id;
    if (parent != nullptr) {
      record->parent = BlobParent{m.parent->key, m.parent->pages};
      record->parent_id = parent->id;
      record->root_id = parent->root_id;
      ++parent->children;
    }
    record->start_hash = m.start_hash;
    record->first_page = m.first_page;
    record->pages = m.pages;
    record->bytes = m.bytes;
    record->tokens = std::move(m.tokens);
    record->checksums = std::move(m.checksums);
    record->created = m.created;
    record->last_access = m.last_access;
    record->hits = m.hits;
    record->pages_in_index = *inserted;
    BlobRecord* added = table_.Add(std::move(record));
    table_.Link(added);
    bool on_ssd = false;
    if (m.ssd.has_value() && ssd_ != nullptr) {
      const tiering::Extent extent{m.ssd->offset, m.ssd->length};
      const absl::Status reserved = ssd_->Reserve(extent);
      if (reserved.ok()) {
        AttachSsdLocked(added, extent);
        on_ssd = true;
      } else {
        LOG(WARNING) << "restart: SSD extent of " << added->key.ToHex() << " refused: " << reserved;
      }
    }
    if (on_ssd) {
      ++report.on_ssd;
    } else {
      SyncTextLocked(added);  // DRAM did not survive: TEXT
      ++report.text;
      if (m.ssd.has_value()) fixups.PutBlob(MetaOf(*added));  // its extent is gone
    }
    if (m.pinned) pinned.push_back(added);
    ++report.restored;
  }
  for (BlobRecord* record : pinned) PinLocked(record);
  STRATA_RETURN_IF_ERROR(ApplyMetaLocked(fixups));
  if (options_.text_bytes > 0 && text_.used_bytes > options_.text_bytes) {
    EvictReply evicted;
    EvictTextLocked(text_.used_bytes - options_.text_bytes, &evicted);
  }
  report.ready_time = absl::Now() - started;
  restore_ = report;
  return report;
}

}  // namespace strata::store::core
