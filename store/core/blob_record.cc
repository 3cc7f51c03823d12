// BlobRecord (blob_record.h).
#include "strata/store/core/blob_record.h"

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

#include "strata/base/status_macros.h"
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
    if (record.in_hbm()) info.tiers.push_back(Tier::kHbm);
    info.tiers.push_back(Tier::kDram);
    info.extent = *record.extent;
  }
  if (record.ssd_extent.has_value()) {
    info.tiers.push_back(Tier::kSsd);
    info.ssd_extent = *record.ssd_extent;
  }
  if (info.tiers.empty()) info.tiers.push_back(Tier::kText);
  info.pages_in_index = record.pages_in_index;
  info.leases = record.leases;
  info.pinned = record.pinned;
  info.created = record.created;
  info.last_access = record.last_access;
  info.hits = record.hits;
  if (with_tokens) {
    info.tokens = record.tokens;
    info.chunk_checksums = record.checksums;
  }
  return info;
}

Segment MatchedSegmentOf(const radix::MatchSegment& s, const BlobRecord& record,
                         uint32_t page_tokens) {
  Segment segment{s.blob,       s.blob_page_offset, s.page_count, s.seq_page_begin,
                  record.pages, Tier::kDram,        {},           record.replicas};
  if (record.in_hbm()) segment.tier = Tier::kHbm;
  if (!record.in_dram()) {
    if (record.on_ssd()) {
      segment.tier = Tier::kSsd;
    } else {
      segment.tier = Tier::kText;
      const auto own = absl::MakeConstSpan(record.tokens)
                           .subspan(size_t{s.blob_page_offset} * page_tokens,
                                    size_t{s.page_count} * page_tokens);
      segment.tokens.assign(own.begin(), own.end());
    }
  }
  return segment;
}

absl::Status CheckReadRange(const BlobRecord& record, const ReadRange& range,
                            const radix::KvLayout& layout) {
  if (range.num_pages == 0 || range.layer_begin >= range.layer_end) {
    return absl::InvalidArgumentError(
        absl::StrCat("read of blob ", range.blob.ToHex(), ": empty range (", range.num_pages,
                     " pages, layers [", range.layer_begin, ", ", range.layer_end, "))"));
  }
  if (uint64_t{range.first_page} + range.num_pages > record.pages ||
      range.layer_end > layout.num_layers) {
    return absl::OutOfRangeError(
        absl::StrCat("read of blob ", range.blob.ToHex(), ": pages [", range.first_page, ", +",
                     range.num_pages, ") layers [", range.layer_begin, ", ", range.layer_end,
                     ") outside its ", record.pages, " pages and ", layout.num_layers, " layers"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ReadRangeReply> ReadRangeReplyOf(const BlobRecord& record, const ReadRange& range,
                                                const radix::KvLayout& layout) {
  STRATA_ASSIGN_OR_RETURN(const radix::BlobLayout blob_layout,
                          radix::BlobLayout::Create(layout, record.pages));
  ReadRangeReply out;
  out.blob_bytes = record.bytes;
  out.arena_offset = record.extent->offset;
  if (record.in_hbm()) out.hbm_offset = record.hbm_extent->offset;
  out.layer_ranges.reserve(range.layer_end - range.layer_begin);
  out.checksums.reserve(size_t{range.layer_end - range.layer_begin} * range.num_pages);
  for (uint32_t l = range.layer_begin; l < range.layer_end; ++l) {
    STRATA_ASSIGN_OR_RETURN(const radix::ByteRange bytes,
                            blob_layout.LayerPageRange(l, range.first_page, range.num_pages));
    out.layer_ranges.push_back(bytes);
    for (uint32_t p = range.first_page; p < range.first_page + range.num_pages; ++p) {
      out.checksums.push_back(record.checksums[ChunkIndex(l, p, record.pages)]);
    }
  }
  return out;
}

}  // namespace strata::store::core
