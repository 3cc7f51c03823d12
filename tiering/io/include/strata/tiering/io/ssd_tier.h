// SsdTier: the SSD tier. A Tier over a BlockFile (UringBlockFile in production: io_uring,
// O_DIRECT, a preallocated file or a block device) carved into extents by an
// ExtentAllocator (64 KiB granule by default, a multiple of the 4 KiB block).
//
// I/O: ReadBatch / WriteBatch submit one BlockFile batch per call and complete from the
// block file's completion thread (or inline when nothing needs submitting: an empty
// batch, or every op failed its checks). The synchronous Read / Write are a batch of one
// plus a wait. A buffer whose address, file offset and length are all multiples of the
// block size goes straight to the device: a read lands in the caller's memory (the DRAM
// arena) with no copy. Any other buffer goes through an aligned bounce buffer: reads
// read the covering blocks and copy out; writes whose range starts or ends inside a
// block first read that block (read-modify-write) so the other bytes of the block keep
// their contents. Bounced I/O is correct but slower; IoStats() counts it.
//
// Restart: the file keeps its bytes (SsdTier::Open of an existing file grows it to the
// capacity if smaller and never clears it). The tier starts with every extent free; the
// node marks the extents its metadata names live again with Reserve before it allocates.
//
// Durability: a completed write is on the device but durable through power loss only
// after a later Flush has returned OK (fdatasync; see block_file.h). The node makes a
// blob visible in this tier only after Flush.
//
// Ownership: the tier owns its block file, allocator and counters. Buffers named in a
// batch must stay valid until its completion has run. REQUIRES: no batch or flush is in
// flight when the tier is destroyed, and the synchronous Read / Write / Flush() are not
// called from a completion (they would wait on the thread that completes them).
// Thread safety: every method is thread-safe (the allocator sits behind a mutex; I/O
// takes no tier lock). Tier's data-race rule applies, and more strictly: two writes in
// flight at once that are not block-aligned and share a 4 KiB block of the file race
// (read-modify-write), even if their bytes do not overlap.
//
// Errors:
//   Open / Create  INVALID_ARGUMENT    bad options: capacity_bytes 0 or not a multiple of
//                                      granule_bytes; granule not a power of two or not a
//                                      multiple of the block size; capacity above the block
//                                      file's size (Create); queue_depth, max_io_bytes
//                  and UringBlockFile::Open's errors (FAILED_PRECONDITION: no O_DIRECT on
//                  that filesystem; RESOURCE_EXHAUSTED: no space to preallocate; NOT_FOUND:
//                  missing and create_if_missing false; ...)
//   Allocate       as Tier (INVALID_ARGUMENT, RESOURCE_EXHAUSTED)
//   Read, Write    INVALID_ARGUMENT    the extent is empty, not made of whole granules,
//                                      or does not lie inside the tier
//   (and batches,  OUT_OF_RANGE        [offset, offset + size) leaves the extent
//   per op)        DATA_LOSS           read EIO, or a short read (the file ended early)
//                  UNAVAILABLE         write EIO (the extent's bytes are undefined), or
//                                      EAGAIN/EINTR persisted
//                  RESOURCE_EXHAUSTED  ENOSPC/EDQUOT/EFBIG (a sparse file's disk is full),
//                                      or no memory for a bounce buffer
//                  A write that needed read-modify-write fails with the read's status if
//                  that read failed. Corrupted bytes come back as they are, with OK:
//                  checksums above this tier catch them.
//   Reserve        INVALID_ARGUMENT    empty, not granule-aligned, or outside the tier
//                  ALREADY_EXISTS      exactly this extent is already live
//                  FAILED_PRECONDITION it overlaps another live extent
//   Flush          OK, or fdatasync's errno (EIO -> UNAVAILABLE: writes since the last
//                  good flush may not be durable)
//   Free           REQUIRES: a live extent with no I/O in flight (CHECK-fails otherwise)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/tiering/extent_allocator.h"
#include "strata/tiering/io/block_file.h"
#include "strata/tiering/tier.h"

namespace strata::tiering::io {

struct SsdTierOptions {
  // The file or block device (Open only).
  std::string path;
  // Bytes the tier holds; the file is grown to this size. REQUIRES: a positive multiple
  // of granule_bytes.
  uint64_t capacity_bytes = 0;
  // Allocator shape (ExtentAllocatorOptions). granule_bytes REQUIRES: a power of two and
  // a multiple of the block size (4096).
  uint64_t granule_bytes = uint64_t{64} << 10;
  uint64_t max_extent_bytes = uint64_t{1} << 30;
  uint64_t large_extent_bytes = uint64_t{64} << 20;
  // UringBlockFileOptions (Open only).
  uint32_t queue_depth = 32;
  uint64_t max_io_bytes = uint64_t{1} << 20;
  bool preallocate = true;
  bool create_if_missing = true;
};

// How the tier's I/O went: ops sent straight to the device vs through a bounce buffer.
struct SsdTierIoStats {
  uint64_t direct_reads = 0;
  uint64_t direct_writes = 0;
  uint64_t bounced_reads = 0;
  uint64_t bounced_writes = 0;
  uint64_t bounce_bytes = 0;        // bytes moved through bounce buffers (device side)
  uint64_t read_modify_writes = 0;  // bounced writes that first read a partial block
};

class SsdTier final : public Tier {
 public:
  // Opens (or creates) options.path with a UringBlockFile.
  static absl::StatusOr<std::unique_ptr<SsdTier>> Open(const SsdTierOptions& options);
  // A tier over `file` (e.g. a MemoryBlockFile in tests); uses the capacity and allocator
  // fields of `options`.
  static absl::StatusOr<std::unique_ptr<SsdTier>> Create(std::unique_ptr<BlockFile> file,
                                                         const SsdTierOptions& options);

  SsdTier(const SsdTier&) = delete;
  SsdTier& operator=(const SsdTier&) = delete;
  ~SsdTier() override = default;

  report::Tier kind() const override { return report::Tier::kSsd; }
  uint64_t capacity() const override { return capacity_; }
  absl::StatusOr<Extent> Allocate(uint64_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  void Free(const Extent& extent) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Write(const Extent& extent, uint64_t offset,
                     absl::Span<const std::byte> src) override;
  absl::Status Read(const Extent& extent, uint64_t offset,
                    absl::Span<std::byte> dst) const override;
  void ReadBatch(std::vector<TierRead> reads, TierIoDone done) const override;
  void WriteBatch(std::vector<TierWrite> writes, TierIoDone done) override;
  TierStats Stats() const override ABSL_LOCKS_EXCLUDED(mu_);
  TierCounters& counters() override { return counters_; }

  // Marks `extent` live again (restart from metadata). See the error table.
  absl::Status Reserve(const Extent& extent) override ABSL_LOCKS_EXCLUDED(mu_);
  // Makes completed writes durable (fdatasync), synchronously or with a completion.
  absl::Status Flush() override;
  void Flush(FlushDone done);
  // Registers buffer regions (the DRAM arena) with the block file; best effort (see
  // BlockFile::RegisterBuffers). REQUIRES: no I/O in flight.
  absl::Status RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions);

  BlockFile& file() const { return *file_; }
  SsdTierIoStats IoStats() const;
  ExtentAllocatorStats AllocatorStats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct ReadPlan;
  struct WritePlan;

  SsdTier(std::unique_ptr<BlockFile> file, const ExtentAllocatorOptions& allocator_options);

  // OK if [offset, offset + size) lies inside `extent` and `extent` inside the tier.
  absl::Status CheckRange(const Extent& extent, uint64_t offset, uint64_t size) const;
  bool Aligned(uint64_t file_offset, const std::byte* buffer, uint64_t size) const;
  // Second phase of WriteBatch: copies sources into bounce buffers and submits writes.
  void SubmitWrites(std::unique_ptr<WritePlan> plan);

  const std::unique_ptr<BlockFile> file_;
  const uint64_t capacity_;
  const uint64_t block_size_;
  const uint64_t granule_;

  mutable absl::Mutex mu_;
  ExtentAllocator allocator_ ABSL_GUARDED_BY(mu_);
  TierCounters counters_;

  mutable std::atomic<uint64_t> direct_reads_{0};
  mutable std::atomic<uint64_t> bounced_reads_{0};
  std::atomic<uint64_t> direct_writes_{0};
  std::atomic<uint64_t> bounced_writes_{0};
  mutable std::atomic<uint64_t> bounce_bytes_{0};
  std::atomic<uint64_t> read_modify_writes_{0};
};

}  // namespace strata::tiering::io
