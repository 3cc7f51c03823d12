// Restorer (restorer.h).
#include "strata/store/core/restorer.h"

#include <memory>
#include <utility>
#include <vector>

#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::core {

Restorer::Restorer(const Deps& deps) : deps_(deps) {
  CHECK(deps_.registry != nullptr && deps_.table != nullptr && deps_.ledger != nullptr &&
        deps_.journal != nullptr && deps_.keeper != nullptr && deps_.mover != nullptr);
}

absl::StatusOr<RestoreReport> Restorer::Restore(absl::Mutex& mu, MetaJournal::Loaded loaded,
                                                absl::FunctionRef<tiering::BlobId()> new_id) {
  RestoreReport report;
  report.corrupt = loaded.corrupt;
  report.load_time = loaded.load_time;
  const auto& namespaces = loaded.namespaces;
  BlobTable& table = *deps_.table;
  meta::MetaBatch fixups(/*sync=*/false);
  std::vector<BlobRecord*> pinned;
  for (meta::BlobMeta& m : loaded.blobs) {
    auto ns_it = namespaces.find(m.namespace_hash);
    BlobRecord* parent = nullptr;
    absl::Status check = ns_it == namespaces.end()
                             ? absl::DataLossError("its namespace is not stored")
                             : MetaJournal::CheckRestored(m, ns_it->second, table, &parent);
    if (!check.ok()) {
      VLOG(1) << "restart: dropping " << m.key.ToHex() << ": " << check;
      ++report.dropped;
      fixups.DeleteBlob(m.key);
      continue;
    }
    const NamespaceEntry* entry = deps_.registry->Find(m.namespace_hash);
    if (entry == nullptr) entry = &deps_.registry->Register(ns_it->second, m.namespace_hash);
    // The index root: the parent's, or the record's own start (h_0 at page 0, else the
    // segment it starts).
    const radix::PrefixHash root_hash = parent != nullptr ? parent->root_hash : m.start_hash;
    const uint32_t root_page = parent != nullptr ? parent->root_page : m.first_page;
    std::vector<radix::TokenId> sequence;
    if (parent != nullptr) sequence = deps_.keeper->SequenceTokens(mu, *parent, m.first_page);
    sequence.insert(sequence.end(), m.tokens.begin(), m.tokens.end());
    absl::StatusOr<uint32_t> inserted =
        entry->tree->Insert(root_hash, sequence, m.first_page - root_page, m.key);
    if (!inserted.ok() || *inserted == 0) {
      ++report.dropped;  // redundant (its pages are another blob's) or not insertable
      fixups.DeleteBlob(m.key);
      continue;
    }
    auto record = std::make_unique<BlobRecord>();
    record->id = new_id();
    record->key = m.key;
    record->namespace_hash = m.namespace_hash;
    record->ns = &entry->ns;
    record->tree = entry->tree;
    record->root_id = record->id;
    record->root_hash = root_hash;
    record->root_page = root_page;
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
    BlobRecord* added = table.Add(std::move(record));
    table.Link(added);
    bool on_ssd = false;
    if (m.ssd.has_value() && deps_.ssd != nullptr) {
      const tiering::Extent extent{m.ssd->offset, m.ssd->length};
      const absl::Status reserved = deps_.ssd->Reserve(extent);
      if (reserved.ok()) {
        deps_.ledger->AttachSsd(added, extent);
        deps_.ledger->Charge(TierLedger::LabelOf(*added), Tier::kSsd, extent.length);
        on_ssd = true;
      } else {
        LOG(WARNING) << "restart: SSD extent of " << added->key.ToHex() << " refused: " << reserved;
      }
    }
    if (on_ssd) {
      ++report.on_ssd;
    } else {
      deps_.ledger->SyncText(added);  // DRAM did not survive: TEXT
      ++report.text;
      if (m.ssd.has_value()) fixups.PutBlob(MetaJournal::MetaOf(*added));  // its extent is gone
    }
    if (m.pinned) pinned.push_back(added);
    ++report.restored;
  }
  for (BlobRecord* record : pinned) {
    deps_.keeper->Pin(mu, record, deps_.keeper->SequenceTokens(mu, *record, record->end_page()));
  }
  STRATA_RETURN_IF_ERROR(deps_.journal->Apply(fixups));
  const uint64_t text_used = deps_.ledger->text().used_bytes;
  if (deps_.text_bytes > 0 && text_used > deps_.text_bytes) {
    EvictReply evicted;
    deps_.mover->EvictText(mu, text_used - deps_.text_bytes, &evicted);
  }
  return report;
}

}  // namespace strata::store::core
