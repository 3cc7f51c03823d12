#include "client/lib/read_plan.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace strata::client_internal {
namespace {

std::string Field(std::string_view base, size_t index, std::string_view name) {
  return absl::StrCat(std::string(base), "[", index, "]", name.empty() ? "" : ".",
                      std::string(name));
}

}  // namespace

absl::StatusOr<std::vector<PlannedRange>> PlanRanges(
    const radix::KvLayout& layout, absl::Span<const ReadRange> ranges,
    absl::Span<const MemoryDescriptor> destinations) {
  if (ranges.empty()) return absl::InvalidArgumentError("ranges: empty");
  if (ranges.size() != destinations.size()) {
    return absl::InvalidArgumentError(absl::StrCat("ranges: ", ranges.size(), " ranges but ",
                                                   destinations.size(), " destinations"));
  }
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();
  std::vector<PlannedRange> plan;
  plan.reserve(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ReadRange& range = ranges[i];
    if (range.num_pages == 0) {
      return absl::InvalidArgumentError(absl::StrCat(Field("ranges", i, "num_pages"), ": 0"));
    }
    if (uint64_t{range.first_page} + range.num_pages > UINT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(Field("ranges", i, ""), ": pages past 2^32 - 1"));
    }
    if (absl::Status s = CheckMemoryDescriptor(destinations[i], PagesBytes(layout, range.num_pages),
                                               Field("destinations", i, ""));
        !s.ok()) {
      return s;
    }
    PlannedRange planned{range.blob, range.first_page, range.num_pages, 0, layout.num_layers, {}};
    if (destinations[i].kind == MemoryKind::kDevice) planned.device = destinations[i].device;
    auto* base = static_cast<std::byte*>(destinations[i].ptr);
    const uint64_t layer_bytes = uint64_t{range.num_pages} * chunk_bytes;
    planned.layer_dest.reserve(layout.num_layers);
    for (uint32_t l = 0; l < layout.num_layers; ++l)
      planned.layer_dest.push_back(base + l * layer_bytes);
    plan.push_back(std::move(planned));
  }
  return plan;
}

absl::StatusOr<std::vector<PlannedRange>> PlanPrefix(const radix::KvLayout& layout,
                                                     absl::Span<const Segment> segments,
                                                     uint32_t pages,
                                                     const MemoryDescriptor& destination) {
  return PlanPart(layout, segments, 0, pages, pages, destination, /*contiguous=*/true);
}

absl::StatusOr<std::vector<PlannedRange>> PlanInto(const radix::KvLayout& layout,
                                                   absl::Span<const Segment> segments,
                                                   uint32_t total_pages,
                                                   const MemoryDescriptor& destination) {
  if (segments.empty()) return absl::InvalidArgumentError("segments: none");
  const uint32_t first = segments.front().seq_page_begin;
  const uint64_t end = uint64_t{segments.back().seq_page_begin} + segments.back().page_count;
  if (end > total_pages) {
    return absl::InvalidArgumentError(
        absl::StrCat("segments: reach page ", end, ", past the destination's ", total_pages));
  }
  return PlanPart(layout, segments, first, static_cast<uint32_t>(end), total_pages, destination,
                  /*contiguous=*/false);
}

absl::StatusOr<std::vector<PlannedRange>> PlanPart(
    const radix::KvLayout& layout, absl::Span<const Segment> segments, uint32_t first,
    uint32_t pages, uint32_t total_pages, const MemoryDescriptor& destination, bool contiguous) {
  std::vector<PlannedRange> plan;
  if (pages <= first) return plan;
  if (absl::Status s =
          CheckMemoryDescriptor(destination, PagesBytes(layout, total_pages), "destination");
      !s.ok()) {
    return s;
  }
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();
  auto* base = static_cast<std::byte*>(destination.ptr);
  uint32_t next = first;  // first sequence page not yet covered
  for (size_t i = 0; i < segments.size() && next < pages; ++i) {
    const Segment& seg = segments[i];
    if (seg.page_count == 0) {
      return absl::InvalidArgumentError(absl::StrCat(Field("segments", i, "page_count"), ": 0"));
    }
    if (contiguous ? seg.seq_page_begin != next : seg.seq_page_begin < next) {
      return absl::InvalidArgumentError(absl::StrCat(
          Field("segments", i, "seq_page_begin"), ": ", seg.seq_page_begin,
          contiguous ? ", expected " : ", before page ", next,
          contiguous
              ? absl::StrCat(" (segments must cover the pages from page ", first, " in order)")
              : std::string(" (segments must be in page order, without overlap)")));
    }
    next = seg.seq_page_begin;  // a gap between two segments (PlanInto) is left alone
    if (seg.blob_pages != 0 && uint64_t{seg.blob_page_offset} + seg.page_count > seg.blob_pages) {
      return absl::InvalidArgumentError(
          absl::StrCat(Field("segments", i, ""), ": pages [", seg.blob_page_offset, ", +",
                       seg.page_count, ") past the blob's ", seg.blob_pages, " pages"));
    }
    const uint32_t take = std::min(seg.page_count, pages - next);
    if (seg.tier == Tier::kText) {
      return absl::NotFoundError(absl::StrCat(
          Field("segments", i, ""), ": sequence pages [", next, ", ", next + take,
          ") are TEXT (the node dropped their KV bytes and kept the tokens): read only the ", next,
          " pages before them (MatchResult::ReadablePages()), recompute, or "
          "RequestRebuild ",
          seg.blob.ToHex()));
    }
    PlannedRange planned{seg.blob, seg.blob_page_offset, take, 0, layout.num_layers, {}};
    if (destination.kind == MemoryKind::kDevice) planned.device = destination.device;
    planned.layer_dest.reserve(layout.num_layers);
    for (uint32_t l = 0; l < layout.num_layers; ++l) {
      planned.layer_dest.push_back(base + (uint64_t{l} * total_pages + next) * chunk_bytes);
    }
    plan.push_back(std::move(planned));
    next += take;
  }
  if (contiguous && next < pages) {
    return absl::InvalidArgumentError(absl::StrCat("segments: cover ", next - first,
                                                   " pages from page ", first, ", fewer than the ",
                                                   pages - first, " asked for"));
  }
  return plan;
}

std::vector<PlannedRange> CutLargeRanges(std::vector<PlannedRange> ranges, uint64_t max_chunks,
                                         uint64_t chunk_bytes) {
  std::vector<PlannedRange> out;
  out.reserve(ranges.size());
  for (PlannedRange& range : ranges) {
    if (range.chunks() <= max_chunks) {
      out.push_back(std::move(range));
      continue;
    }
    const uint32_t layers = range.layer_end - range.layer_begin;
    const uint32_t step = static_cast<uint32_t>(std::max<uint64_t>(1, max_chunks / layers));
    for (uint32_t done = 0; done < range.num_pages; done += step) {
      const uint32_t take = std::min(step, range.num_pages - done);
      PlannedRange piece{range.blob,        range.first_page + done, take,
                         range.layer_begin, range.layer_end,         {}};
      piece.device = range.device;
      piece.layer_dest.reserve(layers);
      for (std::byte* dest : range.layer_dest)
        piece.layer_dest.push_back(dest + done * chunk_bytes);
      out.push_back(std::move(piece));
    }
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> SplitIntoReads(absl::Span<const PlannedRange> ranges,
                                                      size_t max_ranges, uint64_t max_chunks) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t begin = 0;
  uint64_t chunks = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const uint64_t c = ranges[i].chunks();
    if (i > begin && (i - begin >= max_ranges || chunks + c > max_chunks)) {
      runs.emplace_back(begin, i);
      begin = i;
      chunks = 0;
    }
    chunks += c;
  }
  if (begin < ranges.size()) runs.emplace_back(begin, ranges.size());
  return runs;
}

}  // namespace strata::client_internal
