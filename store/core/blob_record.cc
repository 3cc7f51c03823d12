// BlobRecord (blob_record.h).
#include "strata/store/core/blob_record.h"

#include "strata/store/core/chunk_checksum.h"

namespace strata::store::core {

BlobInfo BlobInfoOf(const BlobRecord& record, bool with_tokens) {
  BlobInfo info;
  info.key = record.key;
  info.namespace_hash = record.namespace_hash;
  info.tenant = record.ns->tenant();
  info.model = record.ns->model();
  info.layout = record.ns->layout();
  info.parent = record.parent;
  info.start_hash = record.start_hash;
  info.first_page = record.first_page;
  info.pages = record.pages;
  info.bytes = record.bytes;
  info.blob_checksum = BlobChecksum(record.checksums);
  if (record.extent.has_value()) {
    info.tiers.push_back(TierState::kDram);
    info.extent = *record.extent;
  }
  if (record.ssd_extent.has_value()) {
    info.tiers.push_back(TierState::kSsd);
    info.ssd_extent = *record.ssd_extent;
  }
  if (info.tiers.empty()) info.tiers.push_back(TierState::kText);
  info.pages_in_index = record.pages_in_index;
  info.leases = record.leases;
  info.pinned = record.pinned;
  info.created = record.created;
  info.last_access = record.last_access;
  info.hits = record.hits;
  if (with_tokens) info.tokens = record.tokens;
  return info;
}

}  // namespace strata::store::core
