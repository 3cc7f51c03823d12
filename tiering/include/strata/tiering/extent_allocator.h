// ExtentAllocator: a low-fragmentation allocator of large extents over an address range.
//
// It hands out extents of [0, capacity) for blobs of one granule (64 KiB) up to a maximum
// extent (1 GiB), over capacities of up to hundreds of GiB. It only does arithmetic on
// offsets: it never touches the memory (or disk) it describes, so its metadata lives out
// of line and the managed range may be shared, registered or even virtual.
//
// Design: two-level segregated fit (TLSF, Masmano et al. 2004) in units of granules.
//   * Requests round up to a whole number of granules.
//   * Free extents sit in size classes (ClassOf). Sizes below 32 granules have an exact
//     class each: first level 0, second level = the size. A size n >= 32 granules has
//     first level floor(log2(n)) - 4 (so 1 for 32..63 granules) and second level = the
//     kSecondLevelBits bits below n's top bit, so such a class spans 1/32 of its lower
//     bound. Two bitmaps (one bit per first level, one per class) find the smallest
//     non-empty class that surely fits in a few bit instructions.
//   * Good fit: the search first compares up to kScanLimit extents of the request's own
//     class (which may hold an exact fit) and takes the smallest that fits, then the
//     first non-empty higher class, taking the smallest (lowest address on ties) of its
//     first kScanLimit extents, and splits off exactly the rounded request. Measured on
//     the benchmark traces this matches a true best-fit allocator's fragmentation;
//     plain TLSF (head of the next higher class) was measurably worse.
//   * If no higher class is populated, the whole own class is scanned, so Allocate fails
//     only if no free extent at all is large enough.
//   * Size segregation: requests of at least large_extent_bytes (64 MiB) are cut from the
//     high end of the chosen extent, smaller ones from the low end, so small blobs do not
//     splinter the space large ones need (on the KV-like trace at 90% fill this cut
//     requests that fail despite enough free bytes about threefold).
//   * Free coalesces immediately with free neighbours, found through hash maps keyed by
//     extent start and end. Live extents are kept in a hash map too, which is how Free
//     detects double frees and foreign extents.
// Allocate and Free are O(1) expected (hash-map operations, bit scans and at most
// 2 x kScanLimit comparisons), except the fallback scan of one class near exhaustion.
//
// Fragmentation measures (both in [0, 1], 0 when nothing is free):
//   ExternalFragmentation()  = 1 - largest_free_extent / free_bytes. The classical measure:
//       0 when all free bytes are one extent. At high fill with requests up to 1 GiB it is
//       high for any allocator (ten free 1 GiB extents already score 0.9), so it says
//       little about whether the workload's requests can be served.
//   UnusableFreeFraction(r)  = (free bytes in free extents smaller than r) / free_bytes:
//       the share of free memory that a request of r bytes cannot use. Evaluated at the
//       workload's typical (or large) request size it tells how much capacity
//       fragmentation really costs; it is 0 for r <= granule, and 1 for an r that no
//       extent could ever serve (r > max_extent_bytes or r > capacity_bytes).
//   Stats().fragmentation_failures counts requests that failed although free_bytes would
//       have sufficed (the share of such failures is the end-to-end measure).
//
// Reserve (restart): a node that restarts from its metadata marks the extents it recorded
//   live again with Reserve(extent), which carves exactly that extent out of the free
//   extent containing it. Free extents are indexed by hash maps only, so Reserve keeps a
//   sorted index of free-extent starts that it builds on first use (O(F log F) for F free
//   extents) and keeps up to date itself; Allocate and Free drop it. A restart's run of
//   Reserve calls therefore costs O(log F) each after the first; a lone Reserve between
//   allocations costs O(F log F). Reserved extents are ordinary live extents (Free them).
//
// Thread safety: thread-compatible. Const methods may run concurrently with each other;
// anything else needs external synchronization (DramArena holds a mutex).
// Errors: Allocate returns INVALID_ARGUMENT for 0 bytes or more than max_extent_bytes and
// RESOURCE_EXHAUSTED when no free extent is large enough (including a request above
// capacity_bytes but within max_extent_bytes: max_extent_bytes may exceed the capacity,
// as the 1 GiB default does for a small arena). Reserve returns INVALID_ARGUMENT for an
// empty or not granule-aligned extent or one that leaves [0, capacity), ALREADY_EXISTS if
// exactly that extent is already live, and FAILED_PRECONDITION if it overlaps live bytes
// otherwise (nothing changes on error). Free CHECK-fails on an extent
// that is not live (double free, foreign or altered extent): that is a caller bug.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/tiering/tier.h"

namespace strata::tiering {

struct ExtentAllocatorOptions {
  // Size of the managed range [0, capacity_bytes). REQUIRES: > 0, a multiple of
  // granule_bytes, at most 2^40 granules.
  uint64_t capacity_bytes = 0;
  // Allocation unit. REQUIRES: a power of two.
  uint64_t granule_bytes = uint64_t{64} << 10;
  // Largest extent a request may ask for. REQUIRES: > 0, a multiple of granule_bytes.
  // May exceed capacity_bytes (requests above the capacity are then RESOURCE_EXHAUSTED).
  uint64_t max_extent_bytes = uint64_t{1} << 30;
  // Requests of at least this size (rounded up to the granule) are cut from the high end
  // of the free extent chosen, smaller ones from the low end. 0: never (everything from
  // the low end). REQUIRES: 0 or <= max_extent_bytes.
  uint64_t large_extent_bytes = uint64_t{64} << 20;
};

struct ExtentAllocatorStats {
  uint64_t capacity_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t live_bytes = 0;  // capacity_bytes - free_bytes
  uint64_t live_extents = 0;
  uint64_t free_extents = 0;
  uint64_t largest_free_extent = 0;     // bytes
  uint64_t allocations = 0;             // successful Allocate calls
  uint64_t failed_allocations = 0;      // RESOURCE_EXHAUSTED returns
  uint64_t fragmentation_failures = 0;  // ... of which free_bytes would have sufficed
};

class ExtentAllocator {
 public:
  // Returns INVALID_ARGUMENT, naming the field, if `options` breaks a REQUIRES above.
  static absl::Status Validate(const ExtentAllocatorOptions& options);

  // REQUIRES: Validate(options).ok(). Starts with one free extent covering everything.
  explicit ExtentAllocator(const ExtentAllocatorOptions& options);
  ExtentAllocator(const ExtentAllocator&) = delete;
  ExtentAllocator& operator=(const ExtentAllocator&) = delete;

  // Reserves bytes rounded up to the granule. The returned extent's length is that
  // rounded size.
  absl::StatusOr<Extent> Allocate(uint64_t bytes);
  // Marks exactly `extent` live (see "Reserve" above for the statuses and the cost).
  absl::Status Reserve(const Extent& extent);
  // REQUIRES: `extent` was returned by Allocate (or accepted by Reserve) and not freed
  // since.
  void Free(const Extent& extent);
  // True if `extent` is exactly a live extent of this allocator.
  bool IsLive(const Extent& extent) const;

  uint64_t capacity_bytes() const { return capacity_ << granule_shift_; }
  uint64_t granule_bytes() const { return uint64_t{1} << granule_shift_; }
  uint64_t max_extent_bytes() const { return max_extent_ << granule_shift_; }
  uint64_t free_bytes() const { return free_granules_ << granule_shift_; }
  uint64_t live_bytes() const { return capacity_bytes() - free_bytes(); }
  uint64_t live_extents() const { return live_.size(); }
  uint64_t free_extents() const { return free_by_start_.size(); }

  // O(1) plus a scan of the top size class.
  uint64_t LargestFreeExtent() const;
  // See the header comment. O(number of classes) plus a scan of one class.
  double ExternalFragmentation() const;
  double UnusableFreeFraction(uint64_t request_bytes) const;
  ExtentAllocatorStats Stats() const;

  // Calls `fn` for each free extent, in no particular order. For tests and diagnostics.
  void ForEachFreeExtent(absl::FunctionRef<void(const Extent&)> fn) const;

 private:
  static constexpr int kSecondLevelBits = 5;
  static constexpr int kSecondLevelCount = 1 << kSecondLevelBits;
  static constexpr int kFirstLevelCount = 64;
  static constexpr uint32_t kNoNode = ~uint32_t{0};
  // How many extents of one class a search compares before settling for the best so far.
  static constexpr int kScanLimit = 16;

  struct SizeClass {
    int first = 0;
    int second = 0;
  };
  // One free extent, in granules; prev/next link its size-class list.
  struct FreeNode {
    uint64_t start = 0;
    uint64_t length = 0;
    uint32_t prev = kNoNode;
    uint32_t next = kNoNode;
  };

  // `bytes` rounded up to whole granules, without overflow for any uint64_t.
  uint64_t GranulesFor(uint64_t bytes) const;
  // The class whose range contains `granules` (insertion class).
  static SizeClass ClassOf(uint64_t granules);
  // Index of a node whose extent holds >= `granules`, or kNoNode.
  uint32_t FindFit(uint64_t granules) const;
  // Among the first `limit` extents of class `c`, the smallest (then lowest) that holds
  // >= `granules`, or kNoNode.
  uint32_t BestInClass(SizeClass c, uint64_t granules, int limit) const;

  // Creates a free extent, links it and indexes it by start and end.
  void InsertFree(uint64_t start, uint64_t length);
  // Unlinks and unindexes node `index` and recycles it.
  void RemoveFree(uint32_t index);
  // Node index of the free extent holding granules [start, start + length), or kNoNode.
  // Builds ordered_free_starts_ if it is not valid.
  uint32_t FreeNodeContaining(uint64_t start, uint64_t length);
  // Allocate and Free change the free extents without updating the ordered index.
  void DropOrderedIndex();
  void LinkIntoClass(uint32_t index);
  void UnlinkFromClass(uint32_t index);

  int granule_shift_ = 0;
  uint64_t capacity_ = 0;      // granules
  uint64_t max_extent_ = 0;    // granules
  uint64_t large_extent_ = 0;  // granules
  uint64_t free_granules_ = 0;

  uint64_t first_level_bitmap_ = 0;
  std::array<uint32_t, kFirstLevelCount> second_level_bitmap_{};
  std::array<std::array<uint32_t, kSecondLevelCount>, kFirstLevelCount> class_head_;
  std::array<std::array<uint64_t, kSecondLevelCount>, kFirstLevelCount> class_granules_{};

  std::vector<FreeNode> nodes_;
  std::vector<uint32_t> spare_nodes_;
  absl::flat_hash_map<uint64_t, uint32_t> free_by_start_;  // start granule -> node
  absl::flat_hash_map<uint64_t, uint32_t> free_by_end_;    // end granule -> node
  absl::flat_hash_map<uint64_t, uint64_t> live_;           // start granule -> length
  // Starts of all free extents, sorted; valid only while ordered_index_valid_ (Reserve).
  std::set<uint64_t> ordered_free_starts_;
  bool ordered_index_valid_ = false;

  uint64_t allocations_ = 0;
  uint64_t failed_allocations_ = 0;
  uint64_t fragmentation_failures_ = 0;
};

}  // namespace strata::tiering
