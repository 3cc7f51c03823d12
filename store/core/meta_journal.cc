// MetaJournal (meta_journal.h).
#include "strata/store/core/meta_journal.h"

#include <algorithm>
#include <utility>

#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::core {

meta::BlobMeta MetaJournal::MetaOf(const BlobRecord& record) {
  meta::BlobMeta m;
  m.key = record.key;
  m.namespace_hash = record.namespace_hash;
  if (record.parent.has_value()) {
    m.parent = meta::BlobMetaParent{record.parent->key, record.parent->pages};
  }
  m.start_hash = record.start_hash;
  m.segment_start = !record.parent.has_value() && record.first_page > 0;
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

void MetaJournal::Add(const BlobRecord& record, meta::MetaBatch* batch) {
  AddMeta(record, MetaOf(record), batch);
}

void MetaJournal::AddDemoted(const BlobRecord& record, const tiering::Extent& ssd,
                             meta::MetaBatch* batch) {
  meta::BlobMeta m = MetaOf(record);
  m.ssd = meta::SsdLocation{ssd.offset, ssd.length};
  AddMeta(record, std::move(m), batch);
}

void MetaJournal::AddMeta(const BlobRecord& record, meta::BlobMeta m, meta::MetaBatch* batch) {
  // A namespace counts as stored only once a write that carried it succeeded: until then
  // every batch with one of its records carries it too (writing it again is harmless), so
  // no batch can reach the store before the namespace it needs, whatever order concurrent
  // callers queue and flush in.
  bool stored = false;
  {
    absl::MutexLock lock(&mu_);
    stored = stored_namespaces_.contains(record.namespace_hash);
  }
  if (!stored) batch->PutNamespace(*record.ns);
  batch->PutBlob(m);
}

absl::Status MetaJournal::Apply(const meta::MetaBatch& batch) {
  if (store_ == nullptr || batch.empty()) return absl::OkStatus();
  absl::MutexLock flush(&flush_mu_);
  FlushLocked();  // what was queued before goes first
  return ApplyNow(batch);
}

void MetaJournal::Enqueue(meta::MetaBatch batch, Ticket outcome) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(Queued{std::move(batch), std::move(outcome)});
  queued_.store(queue_.size(), std::memory_order_relaxed);
}

void MetaJournal::Flush() {
  absl::MutexLock flush(&flush_mu_);
  FlushLocked();
}

MetaJournal::Ticket MetaJournal::Queue(meta::MetaBatch batch) {
  auto outcome = std::make_shared<absl::Status>();
  if (store_ == nullptr || batch.empty()) return outcome;
  Enqueue(std::move(batch), outcome);
  return outcome;
}

absl::Status MetaJournal::Await(const Ticket& ticket) {
  absl::MutexLock flush(&flush_mu_);
  FlushLocked();  // whoever took the ticket's batch applied it holding flush_mu_
  return *ticket;
}

void MetaJournal::FlushLocked() {
  while (true) {
    std::deque<Queued> batches;
    {
      absl::MutexLock lock(&mu_);
      batches.swap(queue_);
      queued_.store(0, std::memory_order_relaxed);
    }
    if (batches.empty()) return;
    for (const Queued& queued : batches) {
      // Logged and counted; the record is cache (or its waiter decides).
      absl::Status status = ApplyNow(queued.batch);
      if (queued.outcome != nullptr) *queued.outcome = std::move(status);
    }
  }
}

absl::Status MetaJournal::ApplyNow(const meta::MetaBatch& batch) {
  absl::Status status = store_->Apply(batch);
  if (!status.ok()) {
    // Its namespaces stay unstored: the next record that needs them carries them again.
    LOG(WARNING) << "metadata write of " << batch.size() << " ops failed: " << status;
    absl::MutexLock lock(&mu_);
    ++errors_;
    return status;
  }
  if (batch.changes_namespaces()) {
    absl::MutexLock lock(&mu_);
    for (const meta::MetaBatch::Op& op : batch.ops()) {
      if (op.kind == meta::MetaBatch::OpKind::kPutNamespace) stored_namespaces_.insert(op.key);
    }
  }
  return status;
}

void MetaJournal::Persist(const BlobRecord& record) {
  if (store_ == nullptr || record.state != BlobState::kLinked) return;
  meta::MetaBatch batch(/*sync=*/false);
  Add(record, &batch);
  Enqueue(std::move(batch));
}

void MetaJournal::Forget(const radix::BlobKey& key) {
  if (store_ == nullptr) return;
  meta::MetaBatch batch(/*sync=*/false);
  batch.DeleteBlob(key);
  Enqueue(std::move(batch));
}

uint64_t MetaJournal::errors() const {
  absl::MutexLock lock(&mu_);
  return errors_;
}

report::MetaStats MetaJournal::StoreStats() const {
  if (store_ == nullptr) return {};
  const meta::MetaStoreStats stats = store_->Stats();
  return report::MetaStats{.records = stats.blobs,
                           .disk_bytes = stats.bytes_on_disk,
                           .memtable_bytes = stats.memtable_bytes,
                           .table_reader_bytes = stats.table_reader_bytes,
                           .block_cache_bytes = stats.block_cache_bytes};
}

absl::StatusOr<MetaJournal::Loaded> MetaJournal::Load() {
  Loaded loaded;
  if (store_ == nullptr) return loaded;
  const absl::Time started = absl::Now();
  meta::MetaLoadCallbacks callbacks;
  callbacks.on_namespace = [&](const radix::PrefixHash& hash, radix::Namespace ns) {
    loaded.namespaces.emplace(hash, std::move(ns));
    return absl::OkStatus();
  };
  callbacks.on_blob = [&](meta::BlobMeta m) {
    loaded.blobs.push_back(std::move(m));
    return absl::OkStatus();
  };
  STRATA_ASSIGN_OR_RETURN(const meta::MetaLoadSummary summary, store_->LoadAll(callbacks));
  loaded.corrupt = summary.corrupt_blobs + summary.corrupt_namespaces;
  loaded.load_time = absl::Now() - started;
  // A parent starts on an earlier page than each of its children.
  std::stable_sort(
      loaded.blobs.begin(), loaded.blobs.end(),
      [](const meta::BlobMeta& a, const meta::BlobMeta& b) { return a.first_page < b.first_page; });
  absl::MutexLock lock(&mu_);
  for (const auto& [hash, ns] : loaded.namespaces) stored_namespaces_.insert(hash);
  return loaded;
}

absl::Status MetaJournal::CheckRestored(const meta::BlobMeta& m, const radix::Namespace& ns,
                                        const BlobTable& table, BlobRecord** parent) {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t page_tokens = layout.page_tokens;
  *parent = nullptr;
  if (m.pages == 0 || m.tokens.size() != m.pages * page_tokens ||
      m.checksums.size() != uint64_t{m.pages} * layout.num_layers ||
      m.bytes != m.pages * layout.BytesPerPage()) {
    return absl::DataLossError("sizes do not agree with the namespace's layout");
  }
  radix::PrefixHash start = radix::NamespaceHash(ns);
  BlobRecord* p = nullptr;
  if (m.segment_start && (m.parent.has_value() || m.first_page == 0)) {
    return absl::DataLossError("a segment start with a parent or at page 0");
  }
  if (m.parent.has_value()) {
    p = table.FindLinked(m.parent->key);
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
  } else if (m.segment_start) {
    // A segment's first blob (SegmentStart): its start hash names pages this node never
    // had, so only the key's agreement with it is checked.
    start = m.start_hash;
  } else if (m.first_page != 0) {
    return absl::DataLossError("a blob without a parent must start at page 0 or a segment");
  }
  if (start != m.start_hash) return absl::DataLossError("its start hash does not match");
  if (radix::BlobKey{radix::PrefixHashAt(start, m.tokens, layout.page_tokens)} != m.key) {
    return absl::DataLossError("its key does not match its tokens");
  }
  *parent = p;
  return absl::OkStatus();
}

}  // namespace strata::store::core
