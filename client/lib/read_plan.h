// ReadPlan: how a Read turns into Read RPC ranges and where every byte lands.
//
// A PlannedRange is one strata.v1 ReadRange (pages [first_page, +num_pages) of layers
// [layer_begin, layer_end) of one blob) plus, per layer, the caller's address where that
// layer's num_pages * L bytes go (L = BytesPerLayerPage). Two shapes of destination:
//
//   PlanRanges  range i into destinations[i], laid out as radix::BlobLayout of
//               ranges[i].num_pages pages: layer l at l * num_pages * L.
//   PlanPrefix  sequence pages [0, pages) of a match into one destination laid out as
//               radix::BlobLayout of `pages` pages: the segment starting at sequence page
//               s puts layer l at (l * pages + s) * L.
//   PlanPart    the same for pages [first, pages) of a destination of total_pages pages:
//               layer l at (l * total_pages + s) * L; the destination's other pages are
//               not touched. `contiguous`: the segments must cover [first, pages) without
//               gaps; else they may leave gaps (in page order, no overlap). PlanPrefix is
//               PlanPart(0, pages, pages, contiguous).
//   PlanInto    the segments' own pages, gaps allowed (Client::ReadInto).
//
// A range covering more than kMaxChunksPerRead chunks is cut into page pieces so each fits
// one Read RPC; SplitIntoReads then groups consecutive ranges into RPCs within
// kMaxReadRanges and kMaxChunksPerRead.
//
// Errors (INVALID_ARGUMENT naming the argument, e.g. "ranges[2].num_pages"):
//   PlanRanges  sizes of ranges and destinations differ; no ranges; num_pages 0; a
//               destination CheckMemoryDescriptor refuses
//   PlanPrefix  segments not covering [0, pages) from page 0 in order, a segment with
//               page_count 0 or past its blob's end; a bad destination. NOT_FOUND (a miss,
//               as the node answers for a blob without bytes) for a kText segment inside
//               [0, pages): nothing of a TEXT blob is ever asked of the node.
//
// Pure functions on plain values; thread-safe. PlannedRange borrows the destinations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/kv_layout.h"
#include "strata/types.h"

namespace strata::client_internal {

struct PlannedRange {
  radix::BlobKey blob;
  uint32_t first_page = 0;
  uint32_t num_pages = 0;
  uint32_t layer_begin = 0;
  uint32_t layer_end = 0;
  // layer_dest[l - layer_begin]: where layer l's num_pages * L bytes land.
  std::vector<std::byte*> layer_dest;
  // >= 0: layer_dest is device memory of this device ordinal (MemoryKind::kDevice).
  int device = -1;

  uint64_t chunks() const { return uint64_t{layer_end - layer_begin} * num_pages; }
};

absl::StatusOr<std::vector<PlannedRange>> PlanRanges(
    const radix::KvLayout& layout, absl::Span<const ReadRange> ranges,
    absl::Span<const MemoryDescriptor> destinations);

absl::StatusOr<std::vector<PlannedRange>> PlanPrefix(const radix::KvLayout& layout,
                                                     absl::Span<const Segment> segments,
                                                     uint32_t pages,
                                                     const MemoryDescriptor& destination);

absl::StatusOr<std::vector<PlannedRange>> PlanPart(
    const radix::KvLayout& layout, absl::Span<const Segment> segments, uint32_t first,
    uint32_t pages, uint32_t total_pages, const MemoryDescriptor& destination, bool contiguous);

absl::StatusOr<std::vector<PlannedRange>> PlanInto(const radix::KvLayout& layout,
                                                   absl::Span<const Segment> segments,
                                                   uint32_t total_pages,
                                                   const MemoryDescriptor& destination);

// Cuts every range of more than `max_chunks` chunks into page pieces of at most that many
// chunks (destinations follow). REQUIRES: max_chunks >= the layers of every range.
std::vector<PlannedRange> CutLargeRanges(std::vector<PlannedRange> ranges, uint64_t max_chunks,
                                         uint64_t chunk_bytes);

// [begin, end) index runs of `ranges`, each within `max_ranges` ranges and `max_chunks`
// chunks. REQUIRES: every range has at most max_chunks chunks.
std::vector<std::pair<size_t, size_t>> SplitIntoReads(absl::Span<const PlannedRange> ranges,
                                                      size_t max_ranges, uint64_t max_chunks);

}  // namespace strata::client_internal
