#include "strata/tiering/extent_allocator.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::tiering {

absl::Status ExtentAllocator::Validate(const ExtentAllocatorOptions& options) {
  const uint64_t g = options.granule_bytes;
  if (g == 0 || !std::has_single_bit(g)) {
    return absl::InvalidArgumentError(
        absl::StrCat("granule_bytes must be a power of two, got ", g));
  }
  if (options.capacity_bytes == 0 || options.capacity_bytes % g != 0) {
    return absl::InvalidArgumentError(absl::StrCat("capacity_bytes (", options.capacity_bytes,
                                                   ") must be a positive multiple of ", g));
  }
  if (options.capacity_bytes / g > (uint64_t{1} << 40)) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity_bytes (", options.capacity_bytes, ") exceeds 2^40 granules"));
  }
  if (options.max_extent_bytes == 0 || options.max_extent_bytes % g != 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_extent_bytes (", options.max_extent_bytes,
                                                   ") must be a positive multiple of ", g));
  }
  if (options.large_extent_bytes > options.max_extent_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "large_extent_bytes (", options.large_extent_bytes,
        ") must be 0 (never) or at most max_extent_bytes (", options.max_extent_bytes, ")"));
  }
  return absl::OkStatus();
}

uint64_t ExtentAllocator::GranulesFor(uint64_t bytes) const {
  // (bytes + granule - 1) >> shift would wrap for bytes near 2^64.
  return (bytes >> granule_shift_) + ((bytes & (granule_bytes() - 1)) != 0 ? 1 : 0);
}

ExtentAllocator::ExtentAllocator(const ExtentAllocatorOptions& options) {
  const absl::Status valid = Validate(options);
  CHECK(valid.ok()) << valid;
  granule_shift_ = std::countr_zero(options.granule_bytes);
  capacity_ = options.capacity_bytes >> granule_shift_;
  max_extent_ = options.max_extent_bytes >> granule_shift_;
  large_extent_ = options.large_extent_bytes == 0 ? std::numeric_limits<uint64_t>::max()
                                                  : GranulesFor(options.large_extent_bytes);
  for (auto& heads : class_head_) heads.fill(kNoNode);
  InsertFree(0, capacity_);
}

ExtentAllocator::SizeClass ExtentAllocator::ClassOf(uint64_t granules) {
  DCHECK_GT(granules, 0u);
  if (granules < kSecondLevelCount) return {0, static_cast<int>(granules)};
  const int log2 = std::bit_width(granules) - 1;  // >= kSecondLevelBits
  const int shift = log2 - kSecondLevelBits;
  return {shift + 1, static_cast<int>((granules >> shift) - kSecondLevelCount)};
}

uint32_t ExtentAllocator::BestInClass(SizeClass c, uint64_t granules, int limit) const {
  uint32_t best = kNoNode;
  for (uint32_t i = class_head_[c.first][c.second]; i != kNoNode && limit-- > 0;
       i = nodes_[i].next) {
    const FreeNode& node = nodes_[i];
    if (node.length < granules) continue;
    if (best == kNoNode || node.length < nodes_[best].length ||
        (node.length == nodes_[best].length && node.start < nodes_[best].start)) {
      best = i;
    }
  }
  return best;
}

uint32_t ExtentAllocator::FindFit(uint64_t granules) const {
  // 1. The request's own class may hold an extent that fits (often exactly).
  const SizeClass own = ClassOf(granules);
  if (second_level_bitmap_[own.first] & (uint32_t{1} << own.second)) {
    const uint32_t best = BestInClass(own, granules, kScanLimit);
    if (best != kNoNode) return best;
  }
  // 2. Every extent of a higher class fits: take the best of the first non-empty one.
  int first = own.first;
  uint32_t second_map = own.second + 1 < kSecondLevelCount
                            ? second_level_bitmap_[own.first] & (~uint32_t{0} << (own.second + 1))
                            : 0;
  if (second_map == 0) {
    const uint64_t first_map = own.first + 1 < kFirstLevelCount
                                   ? first_level_bitmap_ & (~uint64_t{0} << (own.first + 1))
                                   : 0;
    if (first_map != 0) {
      first = std::countr_zero(first_map);
      second_map = second_level_bitmap_[first];
    }
  }
  if (second_map != 0) {
    return BestInClass({first, std::countr_zero(second_map)}, granules, kScanLimit);
  }
  // 3. Near exhaustion: look through the whole of the own class.
  return BestInClass(own, granules, std::numeric_limits<int>::max());
}

absl::StatusOr<Extent> ExtentAllocator::Allocate(uint64_t bytes) {
  if (bytes == 0 || bytes > max_extent_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("extent size ", bytes, " outside [1, ", max_extent_bytes(), "]"));
  }
  const uint64_t granules = GranulesFor(bytes);
  const uint32_t index = granules <= free_granules_ ? FindFit(granules) : kNoNode;
  if (index == kNoNode) {
    ++failed_allocations_;
    if (granules <= free_granules_) ++fragmentation_failures_;
    return absl::ResourceExhaustedError(
        absl::StrCat("no free extent of ", granules << granule_shift_, " bytes (", free_bytes(),
                     " bytes free, largest extent ", LargestFreeExtent(), ")"));
  }

  FreeNode& node = nodes_[index];
  uint64_t start = node.start;
  if (node.length == granules) {
    RemoveFree(index);
  } else if (granules >= large_extent_) {
    // Large extents come from the high end: keep the head free in the same node, whose
    // start (and start-index entry) is unchanged.
    UnlinkFromClass(index);
    free_by_end_.erase(node.start + node.length);
    node.length -= granules;
    start = node.start + node.length;
    free_by_end_.emplace(start, index);
    LinkIntoClass(index);
    free_granules_ -= granules;
  } else {
    // Small extents come from the low end: keep the tail free in the same node, whose end
    // (and end-index entry) is unchanged.
    UnlinkFromClass(index);
    free_by_start_.erase(start);
    node.start += granules;
    node.length -= granules;
    free_by_start_.emplace(node.start, index);
    LinkIntoClass(index);
    free_granules_ -= granules;
  }
  live_.emplace(start, granules);
  ++allocations_;
  DropOrderedIndex();
  return Extent{start << granule_shift_, granules << granule_shift_};
}

void ExtentAllocator::Free(const Extent& extent) {
  const uint64_t mask = granule_bytes() - 1;
  CHECK((extent.offset & mask) == 0 && (extent.length & mask) == 0)
      << "Free of an extent not from this allocator: [" << extent.offset << ", +" << extent.length
      << ")";
  uint64_t start = extent.offset >> granule_shift_;
  uint64_t length = extent.length >> granule_shift_;
  const auto live = live_.find(start);
  CHECK(live != live_.end() && live->second == length)
      << "Free of an extent that is not live (double free or foreign extent): [" << extent.offset
      << ", +" << extent.length << ")";
  live_.erase(live);
  DropOrderedIndex();

  // Coalesce with the free neighbours on either side.
  if (const auto right = free_by_start_.find(start + length); right != free_by_start_.end()) {
    const uint32_t index = right->second;
    length += nodes_[index].length;
    RemoveFree(index);
  }
  if (const auto left = free_by_end_.find(start); left != free_by_end_.end()) {
    const uint32_t index = left->second;
    start = nodes_[index].start;
    length += nodes_[index].length;
    RemoveFree(index);
  }
  InsertFree(start, length);
}

absl::Status ExtentAllocator::Reserve(const Extent& extent) {
  const uint64_t mask = granule_bytes() - 1;
  if (extent.length == 0 || (extent.offset & mask) != 0 || (extent.length & mask) != 0 ||
      extent.offset > capacity_bytes() || extent.length > capacity_bytes() - extent.offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reserve [", extent.offset, ", +", extent.length, "): not a non-empty extent of ",
        granule_bytes(), "-byte granules inside [0, ", capacity_bytes(), ")"));
  }
  const uint64_t start = extent.offset >> granule_shift_;
  const uint64_t length = extent.length >> granule_shift_;
  if (const auto live = live_.find(start); live != live_.end() && live->second == length) {
    return absl::AlreadyExistsError(
        absl::StrCat("extent [", extent.offset, ", +", extent.length, ") is already live"));
  }
  const uint32_t index = FreeNodeContaining(start, length);
  if (index == kNoNode) {
    return absl::FailedPreconditionError(
        absl::StrCat("extent [", extent.offset, ", +", extent.length, ") overlaps a live extent"));
  }
  const FreeNode node = nodes_[index];
  RemoveFree(index);
  if (ordered_index_valid_) ordered_free_starts_.erase(node.start);
  // Give back the free head and tail around the reserved extent.
  if (node.start < start) {
    InsertFree(node.start, start - node.start);
    if (ordered_index_valid_) ordered_free_starts_.insert(node.start);
  }
  const uint64_t end = start + length;
  if (end < node.start + node.length) {
    InsertFree(end, node.start + node.length - end);
    if (ordered_index_valid_) ordered_free_starts_.insert(end);
  }
  live_.emplace(start, length);
  return absl::OkStatus();
}

uint32_t ExtentAllocator::FreeNodeContaining(uint64_t start, uint64_t length) {
  // A restart reserving extents in address order always hits a free extent's start.
  if (const auto exact = free_by_start_.find(start); exact != free_by_start_.end()) {
    return nodes_[exact->second].length >= length ? exact->second : kNoNode;
  }
  if (!ordered_index_valid_) {
    ordered_free_starts_.clear();
    for (const auto& entry : free_by_start_) ordered_free_starts_.insert(entry.first);
    ordered_index_valid_ = true;
  }
  auto it = ordered_free_starts_.upper_bound(start);
  if (it == ordered_free_starts_.begin()) return kNoNode;
  --it;
  const auto node = free_by_start_.find(*it);
  DCHECK(node != free_by_start_.end());
  const FreeNode& free = nodes_[node->second];
  // Free extents are coalesced, so a fully free range lies inside a single one.
  return free.start + free.length >= start + length ? node->second : kNoNode;
}

void ExtentAllocator::DropOrderedIndex() {
  if (!ordered_index_valid_) return;
  ordered_free_starts_.clear();
  ordered_index_valid_ = false;
}

bool ExtentAllocator::IsLive(const Extent& extent) const {
  const uint64_t mask = granule_bytes() - 1;
  if ((extent.offset & mask) != 0 || (extent.length & mask) != 0) return false;
  const auto live = live_.find(extent.offset >> granule_shift_);
  return live != live_.end() && live->second == (extent.length >> granule_shift_);
}

void ExtentAllocator::InsertFree(uint64_t start, uint64_t length) {
  uint32_t index;
  if (!spare_nodes_.empty()) {
    index = spare_nodes_.back();
    spare_nodes_.pop_back();
  } else {
    index = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[index].start = start;
  nodes_[index].length = length;
  LinkIntoClass(index);
  free_by_start_.emplace(start, index);
  free_by_end_.emplace(start + length, index);
  free_granules_ += length;
}

void ExtentAllocator::RemoveFree(uint32_t index) {
  const FreeNode& node = nodes_[index];
  UnlinkFromClass(index);
  free_by_start_.erase(node.start);
  free_by_end_.erase(node.start + node.length);
  free_granules_ -= node.length;
  spare_nodes_.push_back(index);
}

void ExtentAllocator::LinkIntoClass(uint32_t index) {
  FreeNode& node = nodes_[index];
  const SizeClass c = ClassOf(node.length);
  uint32_t& head = class_head_[c.first][c.second];
  node.prev = kNoNode;
  node.next = head;
  if (head != kNoNode) nodes_[head].prev = index;
  head = index;
  class_granules_[c.first][c.second] += node.length;
  second_level_bitmap_[c.first] |= uint32_t{1} << c.second;
  first_level_bitmap_ |= uint64_t{1} << c.first;
}

void ExtentAllocator::UnlinkFromClass(uint32_t index) {
  FreeNode& node = nodes_[index];
  const SizeClass c = ClassOf(node.length);
  if (node.prev != kNoNode) {
    nodes_[node.prev].next = node.next;
  } else {
    class_head_[c.first][c.second] = node.next;
  }
  if (node.next != kNoNode) nodes_[node.next].prev = node.prev;
  class_granules_[c.first][c.second] -= node.length;
  if (class_head_[c.first][c.second] == kNoNode) {
    second_level_bitmap_[c.first] &= ~(uint32_t{1} << c.second);
    if (second_level_bitmap_[c.first] == 0) first_level_bitmap_ &= ~(uint64_t{1} << c.first);
  }
}

uint64_t ExtentAllocator::LargestFreeExtent() const {
  if (first_level_bitmap_ == 0) return 0;
  const int first = std::bit_width(first_level_bitmap_) - 1;
  const int second = std::bit_width(second_level_bitmap_[first]) - 1;
  uint64_t largest = 0;
  for (uint32_t i = class_head_[first][second]; i != kNoNode; i = nodes_[i].next) {
    largest = std::max(largest, nodes_[i].length);
  }
  return largest << granule_shift_;
}

double ExtentAllocator::ExternalFragmentation() const {
  if (free_granules_ == 0) return 0.0;
  return 1.0 - static_cast<double>(LargestFreeExtent()) / static_cast<double>(free_bytes());
}

double ExtentAllocator::UnusableFreeFraction(uint64_t request_bytes) const {
  if (free_granules_ == 0 || request_bytes == 0) return 0.0;
  const uint64_t granules = GranulesFor(request_bytes);
  // No free extent can serve a request that Allocate rejects or that exceeds the capacity.
  if (granules > std::min(max_extent_, capacity_)) return 1.0;
  const SizeClass own = ClassOf(granules);
  uint64_t unusable = 0;
  for (int first = 0; first <= own.first; ++first) {
    const int end = first < own.first ? kSecondLevelCount : own.second;
    for (int second = 0; second < end; ++second) unusable += class_granules_[first][second];
  }
  for (uint32_t i = class_head_[own.first][own.second]; i != kNoNode; i = nodes_[i].next) {
    if (nodes_[i].length < granules) unusable += nodes_[i].length;
  }
  return static_cast<double>(unusable) / static_cast<double>(free_granules_);
}

ExtentAllocatorStats ExtentAllocator::Stats() const {
  ExtentAllocatorStats s;
  s.capacity_bytes = capacity_bytes();
  s.free_bytes = free_bytes();
  s.live_bytes = live_bytes();
  s.live_extents = live_extents();
  s.free_extents = free_extents();
  s.largest_free_extent = LargestFreeExtent();
  s.allocations = allocations_;
  s.failed_allocations = failed_allocations_;
  s.fragmentation_failures = fragmentation_failures_;
  return s;
}

void ExtentAllocator::ForEachFreeExtent(absl::FunctionRef<void(const Extent&)> fn) const {
  for (const auto& [start, index] : free_by_start_) {
    fn(Extent{start << granule_shift_, nodes_[index].length << granule_shift_});
  }
}

}  // namespace strata::tiering
