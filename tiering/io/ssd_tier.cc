#include "strata/tiering/io/ssd_tier.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

#include "strata/base/status_macros.h"
#include "strata/tiering/io/uring_block_file.h"

namespace strata::tiering::io {
// Not in the anonymous namespace: SsdTier's plans hold bounce buffers.
namespace ssd_tier_internal {

struct FreeDeleter {
  void operator()(std::byte* bytes) const { std::free(bytes); }
};
// A bounce buffer: block-aligned heap memory.
using AlignedBytes = std::unique_ptr<std::byte, FreeDeleter>;

AlignedBytes AllocateAligned(uint64_t alignment, uint64_t bytes) {
  return AlignedBytes(static_cast<std::byte*>(std::aligned_alloc(alignment, bytes)));
}

}  // namespace ssd_tier_internal

using ssd_tier_internal::AlignedBytes;
using ssd_tier_internal::AllocateAligned;

namespace {

absl::Status NoBounceMemory(uint64_t bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("no memory for a ", bytes, "-byte bounce buffer"));
}

ExtentAllocatorOptions AllocatorOptions(const SsdTierOptions& options) {
  ExtentAllocatorOptions allocator;
  allocator.capacity_bytes = options.capacity_bytes;
  allocator.granule_bytes = options.granule_bytes;
  allocator.max_extent_bytes = options.max_extent_bytes;
  allocator.large_extent_bytes = options.large_extent_bytes;
  return allocator;
}

absl::Status ValidateOptions(const SsdTierOptions& options, uint64_t block_size) {
  STRATA_RETURN_IF_ERROR(ExtentAllocator::Validate(AllocatorOptions(options)));
  if (options.granule_bytes % block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("granule_bytes (", options.granule_bytes,
                                                   ") must be a multiple of the block size (",
                                                   block_size, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

struct SsdTier::ReadPlan {
  // Block op k serves reads[read_of_op[k]], through bounces[bounce_of_op[k]] if >= 0.
  struct Bounce {
    AlignedBytes buffer;
    uint64_t skip = 0;  // where the read's bytes start in the buffer
  };
  std::vector<TierRead> reads;
  std::vector<absl::Status> statuses;
  std::vector<size_t> read_of_op;
  std::vector<int> bounce_of_op;
  std::vector<Bounce> bounces;
  TierIoDone done;
};

struct SsdTier::WritePlan {
  // One write that passed its checks: straight from the source, or through `bounce`
  // ([file_offset, file_offset + bounce_length), source copied in at `skip`).
  struct Item {
    size_t write_index = 0;
    uint64_t file_offset = 0;
    AlignedBytes bounce;
    uint64_t bounce_length = 0;
    uint64_t skip = 0;
  };
  std::vector<TierWrite> writes;
  std::vector<absl::Status> statuses;
  std::vector<Item> items;
  TierIoDone done;
};

absl::StatusOr<std::unique_ptr<SsdTier>> SsdTier::Open(const SsdTierOptions& options) {
  STRATA_RETURN_IF_ERROR(ValidateOptions(options, BlockFile::kDefaultBlockSize));
  UringBlockFileOptions file_options;
  file_options.path = options.path;
  file_options.size_bytes = options.capacity_bytes;
  file_options.create_if_missing = options.create_if_missing;
  file_options.preallocate = options.preallocate;
  file_options.queue_depth = options.queue_depth;
  file_options.max_io_bytes = options.max_io_bytes;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<UringBlockFile> file, UringBlockFile::Open(file_options));
  return Create(std::move(file), options);
}

absl::StatusOr<std::unique_ptr<SsdTier>> SsdTier::Create(std::unique_ptr<BlockFile> file,
                                                         const SsdTierOptions& options) {
  STRATA_RETURN_IF_ERROR(ValidateOptions(options, file->block_size()));
  if (options.capacity_bytes > file->size_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat("capacity_bytes (", options.capacity_bytes,
                                                   ") exceeds the block file's ",
                                                   file->size_bytes(), " bytes"));
  }
  return absl::WrapUnique(new SsdTier(std::move(file), AllocatorOptions(options)));
}

SsdTier::SsdTier(std::unique_ptr<BlockFile> file, const ExtentAllocatorOptions& allocator_options)
    : file_(std::move(file)),
      capacity_(allocator_options.capacity_bytes),
      block_size_(file_->block_size()),
      granule_(allocator_options.granule_bytes),
      allocator_(allocator_options) {}

absl::StatusOr<Extent> SsdTier::Allocate(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  return allocator_.Allocate(bytes);
}

void SsdTier::Free(const Extent& extent) {
  absl::MutexLock lock(&mu_);
  allocator_.Free(extent);
}

absl::Status SsdTier::Reserve(const Extent& extent) {
  absl::MutexLock lock(&mu_);
  return allocator_.Reserve(extent);
}

absl::Status SsdTier::CheckRange(const Extent& extent, uint64_t offset, uint64_t size) const {
  if (extent.length == 0 || extent.offset > capacity_ ||
      extent.length > capacity_ - extent.offset ||
      ((extent.offset | extent.length) & (granule_ - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "extent [", extent.offset, ", +", extent.length,
        ") is not an extent of the SSD tier (inside it, of whole ", granule_, "-byte granules)"));
  }
  if (offset > extent.length || size > extent.length - offset) {
    return absl::OutOfRangeError(absl::StrCat("range [", offset, ", +", size,
                                              ") leaves the extent of ", extent.length, " bytes"));
  }
  return absl::OkStatus();
}

bool SsdTier::Aligned(uint64_t file_offset, const std::byte* buffer, uint64_t size) const {
  const uint64_t mask = block_size_ - 1;
  return ((file_offset | reinterpret_cast<uintptr_t>(buffer) | size) & mask) == 0;
}

void SsdTier::ReadBatch(std::vector<TierRead> reads, TierIoDone done) const {
  auto plan = std::make_unique<ReadPlan>();
  plan->statuses.resize(reads.size());
  std::vector<BlockIo> ops;
  const uint64_t mask = block_size_ - 1;
  for (size_t i = 0; i < reads.size(); ++i) {
    const TierRead& read = reads[i];
    plan->statuses[i] = CheckRange(read.extent, read.offset, read.dst.size());
    if (!plan->statuses[i].ok() || read.dst.empty()) continue;
    const uint64_t at = read.extent.offset + read.offset;
    if (Aligned(at, read.dst.data(), read.dst.size())) {
      ops.push_back(BlockIo::Read(at, read.dst));
      plan->read_of_op.push_back(i);
      plan->bounce_of_op.push_back(-1);
      direct_reads_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // The covering blocks lie inside the extent: extents are granule-aligned.
    const uint64_t begin = at & ~mask;
    const uint64_t length = ((at + read.dst.size() + mask) & ~mask) - begin;
    AlignedBytes buffer = AllocateAligned(block_size_, length);
    if (buffer == nullptr) {
      plan->statuses[i] = NoBounceMemory(length);
      continue;
    }
    ops.push_back(BlockIo::Read(begin, absl::MakeSpan(buffer.get(), length)));
    plan->read_of_op.push_back(i);
    plan->bounce_of_op.push_back(static_cast<int>(plan->bounces.size()));
    plan->bounces.push_back({std::move(buffer), at - begin});
    bounced_reads_.fetch_add(1, std::memory_order_relaxed);
    bounce_bytes_.fetch_add(length, std::memory_order_relaxed);
  }
  if (ops.empty()) {
    std::move(done)(std::move(plan->statuses));
    return;
  }
  plan->reads = std::move(reads);
  plan->done = std::move(done);
  file_->SubmitBatch(std::move(ops), [plan = std::move(plan)](std::vector<absl::Status> io) {
    for (size_t k = 0; k < io.size(); ++k) {
      const size_t i = plan->read_of_op[k];
      if (!io[k].ok()) {
        plan->statuses[i] = std::move(io[k]);
      } else if (plan->bounce_of_op[k] >= 0) {
        const ReadPlan::Bounce& bounce = plan->bounces[plan->bounce_of_op[k]];
        const absl::Span<std::byte> dst = plan->reads[i].dst;
        std::memcpy(dst.data(), bounce.buffer.get() + bounce.skip, dst.size());
      }
    }
    std::move(plan->done)(std::move(plan->statuses));
  });
}

void SsdTier::WriteBatch(std::vector<TierWrite> writes, TierIoDone done) {
  auto plan = std::make_unique<WritePlan>();
  plan->statuses.resize(writes.size());
  // Reads of the partial first / last blocks of unaligned writes, and their items.
  std::vector<BlockIo> edge_reads;
  std::vector<size_t> item_of_edge_read;
  const uint64_t mask = block_size_ - 1;
  for (size_t i = 0; i < writes.size(); ++i) {
    const TierWrite& write = writes[i];
    plan->statuses[i] = CheckRange(write.extent, write.offset, write.src.size());
    if (!plan->statuses[i].ok() || write.src.empty()) continue;
    const uint64_t at = write.extent.offset + write.offset;
    WritePlan::Item item;
    item.write_index = i;
    if (Aligned(at, write.src.data(), write.src.size())) {
      item.file_offset = at;
      plan->items.push_back(std::move(item));
      direct_writes_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const uint64_t end = at + write.src.size();
    item.file_offset = at & ~mask;
    item.bounce_length = ((end + mask) & ~mask) - item.file_offset;
    item.skip = at - item.file_offset;
    item.bounce = AllocateAligned(block_size_, item.bounce_length);
    if (item.bounce == nullptr) {
      plan->statuses[i] = NoBounceMemory(item.bounce_length);
      continue;
    }
    const bool head_partial = (at & mask) != 0;
    const bool tail_partial = (end & mask) != 0;
    if (head_partial) {
      edge_reads.push_back(
          BlockIo::Read(item.file_offset, absl::MakeSpan(item.bounce.get(), block_size_)));
      item_of_edge_read.push_back(plan->items.size());
    }
    if (tail_partial && (!head_partial || item.bounce_length > block_size_)) {
      const uint64_t last = item.bounce_length - block_size_;
      edge_reads.push_back(BlockIo::Read(item.file_offset + last,
                                         absl::MakeSpan(item.bounce.get() + last, block_size_)));
      item_of_edge_read.push_back(plan->items.size());
    }
    if (head_partial || tail_partial) read_modify_writes_.fetch_add(1, std::memory_order_relaxed);
    bounced_writes_.fetch_add(1, std::memory_order_relaxed);
    bounce_bytes_.fetch_add(item.bounce_length, std::memory_order_relaxed);
    plan->items.push_back(std::move(item));
  }
  plan->writes = std::move(writes);
  plan->done = std::move(done);
  if (edge_reads.empty()) {
    SubmitWrites(std::move(plan));
    return;
  }
  file_->SubmitBatch(std::move(edge_reads), [this, plan = std::move(plan),
                                             item_of_edge_read = std::move(item_of_edge_read)](
                                                std::vector<absl::Status> io) mutable {
    for (size_t k = 0; k < io.size(); ++k) {
      if (io[k].ok()) continue;
      const size_t i = plan->items[item_of_edge_read[k]].write_index;
      if (plan->statuses[i].ok()) plan->statuses[i] = std::move(io[k]);
    }
    SubmitWrites(std::move(plan));
  });
}

void SsdTier::SubmitWrites(std::unique_ptr<WritePlan> plan) {
  std::vector<BlockIo> ops;
  std::vector<size_t> write_of_op;
  for (WritePlan::Item& item : plan->items) {
    const size_t i = item.write_index;
    if (!plan->statuses[i].ok()) continue;  // its read-modify-write read failed
    const absl::Span<const std::byte> src = plan->writes[i].src;
    if (item.bounce == nullptr) {
      ops.push_back(BlockIo::Write(item.file_offset, src));
    } else {
      std::memcpy(item.bounce.get() + item.skip, src.data(), src.size());
      ops.push_back(BlockIo::Write(item.file_offset,
                                   absl::MakeConstSpan(item.bounce.get(), item.bounce_length)));
    }
    write_of_op.push_back(i);
  }
  if (ops.empty()) {
    std::move(plan->done)(std::move(plan->statuses));
    return;
  }
  file_->SubmitBatch(std::move(ops), [plan = std::move(plan), write_of_op = std::move(write_of_op)](
                                         std::vector<absl::Status> io) mutable {
    for (size_t k = 0; k < io.size(); ++k) {
      if (!io[k].ok()) plan->statuses[write_of_op[k]] = std::move(io[k]);
    }
    std::move(plan->done)(std::move(plan->statuses));
  });
}

absl::Status SsdTier::Write(const Extent& extent, uint64_t offset,
                            absl::Span<const std::byte> src) {
  absl::Notification finished;
  absl::Status result;
  WriteBatch({TierWrite{extent, offset, src}}, [&](std::vector<absl::Status> statuses) {
    result = std::move(statuses[0]);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

absl::Status SsdTier::Read(const Extent& extent, uint64_t offset, absl::Span<std::byte> dst) const {
  absl::Notification finished;
  absl::Status result;
  ReadBatch({TierRead{extent, offset, dst}}, [&](std::vector<absl::Status> statuses) {
    result = std::move(statuses[0]);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

absl::Status SsdTier::Flush() { return file_->Flush(); }

void SsdTier::Flush(FlushDone done) { file_->Flush(std::move(done)); }

absl::Status SsdTier::RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) {
  return file_->RegisterBuffers(regions);
}

TierStats SsdTier::Stats() const {
  TierStats stats = counters_.Snapshot();
  stats.tier = report::Tier::kSsd;
  stats.capacity_bytes = capacity_;
  absl::MutexLock lock(&mu_);
  stats.used_bytes = allocator_.live_bytes();
  stats.blobs = allocator_.live_extents();
  return stats;
}

SsdTierIoStats SsdTier::IoStats() const {
  SsdTierIoStats stats;
  stats.direct_reads = direct_reads_.load(std::memory_order_relaxed);
  stats.direct_writes = direct_writes_.load(std::memory_order_relaxed);
  stats.bounced_reads = bounced_reads_.load(std::memory_order_relaxed);
  stats.bounced_writes = bounced_writes_.load(std::memory_order_relaxed);
  stats.bounce_bytes = bounce_bytes_.load(std::memory_order_relaxed);
  stats.read_modify_writes = read_modify_writes_.load(std::memory_order_relaxed);
  return stats;
}

ExtentAllocatorStats SsdTier::AllocatorStats() const {
  absl::MutexLock lock(&mu_);
  return allocator_.Stats();
}

}  // namespace strata::tiering::io
