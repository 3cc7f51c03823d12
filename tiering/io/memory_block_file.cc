#include "strata/tiering/io/memory_block_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::tiering::io {
namespace {

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

// True if [a, a + a_length) and [b, b + b_length) share a byte (lengths may be huge).
bool Overlaps(uint64_t a, uint64_t a_length, uint64_t b, uint64_t b_length) {
  const uint64_t a_end = a + std::min(a_length, kNoLimit - a);
  const uint64_t b_end = b + std::min(b_length, kNoLimit - b);
  return a < b_end && b < a_end;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MemoryBlockFile>> MemoryBlockFile::Create(
    const MemoryBlockFileOptions& options) {
  if (options.block_size == 0 || !std::has_single_bit(options.block_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("block_size must be a power of two, got ", options.block_size));
  }
  if (options.size_bytes == 0 || options.size_bytes % options.block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("size_bytes (", options.size_bytes,
                                                   ") must be a positive multiple of ",
                                                   options.block_size));
  }
  return absl::WrapUnique(new MemoryBlockFile(options));
}

MemoryBlockFile::MemoryBlockFile(const MemoryBlockFileOptions& options)
    : size_bytes_(options.size_bytes),
      block_size_(options.block_size),
      async_(options.async_completion),
      bytes_(new std::byte[options.size_bytes]()) {
  if (async_) worker_ = std::thread([this] { WorkerLoop(); });
}

MemoryBlockFile::~MemoryBlockFile() {
  if (!async_) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  worker_.join();
}

void MemoryBlockFile::SubmitBatch(std::vector<BlockIo> ops, BlockIoDone done) {
  Dispatch(Job{std::move(ops), std::move(done), nullptr});
}

void MemoryBlockFile::Flush(FlushDone done) { Dispatch(Job{{}, nullptr, std::move(done)}); }

void MemoryBlockFile::Dispatch(Job job) {
  if (!async_) {
    Run(std::move(job));
    return;
  }
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(job));
}

void MemoryBlockFile::WorkerLoop() {
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &MemoryBlockFile::WorkerHasWork));
      if (queue_.empty()) return;  // stopping, and everything queued has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Run(std::move(job));
  }
}

void MemoryBlockFile::Run(Job job) {
  if (job.flush_done) {
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      ++stats_.flushes;
      if (next_flush_error_ != 0) {
        status = FlushErrorStatus(next_flush_error_, "memory block file");
        next_flush_error_ = 0;
      }
    }
    std::move(job.flush_done)(std::move(status));
    return;
  }
  std::vector<absl::Status> statuses;
  statuses.reserve(job.ops.size());
  {
    absl::MutexLock lock(&mu_);
    ++stats_.batches;
    for (const BlockIo& op : job.ops) {
      absl::Status status = Validate(op);
      if (status.ok()) {
        ++(op.kind == BlockIoKind::kRead ? stats_.reads : stats_.writes);
        status = Apply(op);
      }
      if (!status.ok()) ++stats_.failed_ops;
      statuses.push_back(std::move(status));
    }
  }
  std::move(job.done)(std::move(statuses));
}

absl::Status MemoryBlockFile::Apply(const BlockIo& op) {
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->kind != op.kind || !Overlaps(it->offset, it->length, op.offset, op.length)) continue;
    const int error_number = it->error_number;
    if (it->count != InjectedFault::kForever && --it->count == 0) faults_.erase(it);
    return IoErrorStatus(op, error_number, 0);
  }
  std::byte* const stored = bytes_.get() + op.offset;
  if (op.kind == BlockIoKind::kRead) {
    if (op.offset + op.length > readable_end_) {
      const uint64_t readable = readable_end_ > op.offset ? readable_end_ - op.offset : 0;
      std::memcpy(op.buffer, stored, readable);
      stats_.read_bytes += readable;
      return IoErrorStatus(op, 0, readable);
    }
    std::memcpy(op.buffer, stored, op.length);
    stats_.read_bytes += op.length;
    return absl::OkStatus();
  }
  if (write_budget_ != kNoLimit) {
    if (op.length > write_budget_) return IoErrorStatus(op, ENOSPC, 0);
    write_budget_ -= op.length;
  }
  std::memcpy(stored, op.buffer, op.length);
  stats_.write_bytes += op.length;
  return absl::OkStatus();
}

absl::Status MemoryBlockFile::RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) {
  absl::MutexLock lock(&mu_);
  regions_.assign(regions.begin(), regions.end());
  return absl::OkStatus();
}

std::vector<absl::Span<std::byte>> MemoryBlockFile::registered_regions() const {
  absl::MutexLock lock(&mu_);
  return regions_;
}

BlockFileStats MemoryBlockFile::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void MemoryBlockFile::InjectFault(const InjectedFault& fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(fault);
}

void MemoryBlockFile::SetReadableEnd(uint64_t offset) {
  absl::MutexLock lock(&mu_);
  readable_end_ = offset;
}

void MemoryBlockFile::SetWriteBudget(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  write_budget_ = bytes;
}

void MemoryBlockFile::FlipBits(uint64_t offset, uint8_t mask) {
  CHECK_LT(offset, size_bytes_) << "FlipBits past the end of the file";
  absl::MutexLock lock(&mu_);
  bytes_[offset] ^= std::byte{mask};
}

void MemoryBlockFile::FailNextFlush(int error_number) {
  absl::MutexLock lock(&mu_);
  next_flush_error_ = error_number;
}

void MemoryBlockFile::ClearFaults() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
  readable_end_ = kNoLimit;
  write_budget_ = kNoLimit;
  next_flush_error_ = 0;
}

}  // namespace strata::tiering::io
