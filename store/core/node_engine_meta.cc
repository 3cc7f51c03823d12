// NodeEngine: the restart that rebuilds the index from the metadata store (MetaJournal,
// meta_journal.h, says what is written when and checks each stored record).
//
// Restart: MetaJournal::Load, then records parents first (by first page); each is checked
// (MetaJournal::CheckRestored), re-inserted into its tree, and given back its SSD extent
// (Reserve) or made TEXT. Records that fail a check are deleted from the store and counted.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {

absl::StatusOr<RestoreReport> NodeEngine::RestoreFromMeta() {
  RestoreReport report;
  if (!journal_.enabled()) return report;
  const absl::Time started = absl::Now();
  STRATA_ASSIGN_OR_RETURN(MetaJournal::Loaded loaded, journal_.Load());
  report.corrupt = loaded.corrupt;
  report.load_time = loaded.load_time;
  const auto& namespaces = loaded.namespaces;

  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  meta::MetaBatch fixups(/*sync=*/false);
  std::vector<BlobRecord*> pinned;
  for (meta::BlobMeta& m : loaded.blobs) {
    auto ns_it = namespaces.find(m.namespace_hash);
    BlobRecord* parent = nullptr;
    absl::Status check = ns_it == namespaces.end()
                             ? absl::DataLossError("its namespace is not stored")
                             : MetaJournal::CheckRestored(m, ns_it->second, table_, &parent);
    if (!check.ok()) {
      VLOG(1) << "restart: dropping " << m.key.ToHex() << ": " << check;
      ++report.dropped;
      fixups.DeleteBlob(m.key);
      continue;
    }
    const NamespaceEntry* entry = registry_.Find(m.namespace_hash);
    if (entry == nullptr) entry = &registry_.Register(ns_it->second, m.namespace_hash);
    std::vector<radix::TokenId> sequence;
    if (parent != nullptr) sequence = keeper_.SequenceTokens(mu_, *parent, m.first_page);
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
        ledger_.AttachSsd(added, extent);
        on_ssd = true;
      } else {
        LOG(WARNING) << "restart: SSD extent of " << added->key.ToHex() << " refused: " << reserved;
      }
    }
    if (on_ssd) {
      ++report.on_ssd;
    } else {
      ledger_.SyncText(added);  // DRAM did not survive: TEXT
      ++report.text;
      if (m.ssd.has_value()) fixups.PutBlob(MetaJournal::MetaOf(*added));  // its extent is gone
    }
    if (m.pinned) pinned.push_back(added);
    ++report.restored;
  }
  for (BlobRecord* record : pinned) {
    keeper_.Pin(mu_, record, keeper_.SequenceTokens(mu_, *record, record->end_page()));
  }
  STRATA_RETURN_IF_ERROR(journal_.Apply(fixups));
  if (options_.text_bytes > 0 && ledger_.text().used_bytes > options_.text_bytes) {
    EvictReply evicted;
    mover_.EvictText(mu_, ledger_.text().used_bytes - options_.text_bytes, &evicted);
  }
  report.ready_time = absl::Now() - started;
  restore_ = report;
  return report;
}

}  // namespace strata::store::core
