// MemoryBlockFile: a BlockFile in memory, with fault injection, for tests of everything
// above the block file (the SSD tier, promotion and demotion, the node engine).
//
// It keeps the BlockFile contract exactly (block alignment, per-op statuses, one
// completion per batch) so that code tested on it behaves the same on UringBlockFile.
// Every failure it injects goes through the same IoErrorStatus mapping as the real file:
//   InjectFault      matching ops fail as if the kernel had returned -error_number (EIO on a
//                    read -> DATA_LOSS, EIO on a write -> UNAVAILABLE, ENOSPC ->
//                    RESOURCE_EXHAUSTED, ...); nothing is transferred
//   SetReadableEnd   reads of bytes at or past the offset come back short, as if the file
//                    ended there (DATA_LOSS "short read"; the bytes before it are copied)
//   SetWriteBudget   writes fail with ENOSPC once they would write more than the budget
//                    (RESOURCE_EXHAUSTED; a failing write writes nothing)
//   FlipBits         silently changes stored bits (later reads return them: checksums
//                    above must catch it; the file reports OK). REQUIRES: offset <
//                    size_bytes() (CHECK)
//   FailNextFlush    the next Flush fails with the given errno
// Completion: inline, before SubmitBatch returns, unless options.async_completion, in
// which case a worker thread runs the batches in order and calls the completions (so
// callers cannot rely on inline completion).
//
// Ownership: the file owns its bytes. contents() is a view for tests, valid for the
// file's lifetime; reading it while writes are in flight is a data race.
// Thread safety: all methods are thread-safe; ops are applied one at a time under a
// mutex. The destructor waits for queued batches (async mode) to complete.
// Errors: Create returns INVALID_ARGUMENT if block_size is not a power of two or
// size_bytes is not a positive multiple of it. Per-op statuses: see block_file.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/tiering/io/block_file.h"

namespace strata::tiering::io {

struct MemoryBlockFileOptions {
  // REQUIRES: > 0 and a multiple of block_size.
  uint64_t size_bytes = 0;
  // REQUIRES: a power of two.
  uint64_t block_size = BlockFile::kDefaultBlockSize;
  // Complete batches (and flushes) on a worker thread instead of inline.
  bool async_completion = false;
};

// A fault applied to the ops of one kind that touch [offset, offset + length).
struct InjectedFault {
  static constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

  BlockIoKind kind = BlockIoKind::kRead;
  int error_number = 0;  // REQUIRES: > 0 (e.g. EIO)
  uint64_t offset = 0;
  uint64_t length = std::numeric_limits<uint64_t>::max();
  // How many matching ops fail before the fault expires (kForever: until ClearFaults).
  uint64_t count = 1;
};

class MemoryBlockFile final : public BlockFile {
 public:
  static absl::StatusOr<std::unique_ptr<MemoryBlockFile>> Create(
      const MemoryBlockFileOptions& options);

  MemoryBlockFile(const MemoryBlockFile&) = delete;
  MemoryBlockFile& operator=(const MemoryBlockFile&) = delete;
  ~MemoryBlockFile() override;

  uint64_t block_size() const override { return block_size_; }
  uint64_t size_bytes() const override { return size_bytes_; }
  void SubmitBatch(std::vector<BlockIo> ops, BlockIoDone done) override ABSL_LOCKS_EXCLUDED(mu_);
  using BlockFile::Flush;  // the synchronous form
  void Flush(FlushDone done) override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) override
      ABSL_LOCKS_EXCLUDED(mu_);
  BlockFileStats Stats() const override ABSL_LOCKS_EXCLUDED(mu_);

  // Fault injection (see the header comment). Each applies to ops run after the call.
  void InjectFault(const InjectedFault& fault) ABSL_LOCKS_EXCLUDED(mu_);
  void SetReadableEnd(uint64_t offset) ABSL_LOCKS_EXCLUDED(mu_);
  void SetWriteBudget(uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  void FlipBits(uint64_t offset, uint8_t mask = 0x01) ABSL_LOCKS_EXCLUDED(mu_);
  void FailNextFlush(int error_number) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes every fault, the readable end and the write budget (not flipped bits).
  void ClearFaults() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Span<const std::byte> contents() const { return {bytes_.get(), size_bytes_}; }
  // The regions of the last RegisterBuffers call.
  std::vector<absl::Span<std::byte>> registered_regions() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Job {
    std::vector<BlockIo> ops;
    BlockIoDone done;
    FlushDone flush_done;  // set for a flush
  };

  explicit MemoryBlockFile(const MemoryBlockFileOptions& options);

  // Runs a job's ops (or its flush) and calls its completion, outside mu_.
  void Run(Job job) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Apply(const BlockIo& op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues (async) or runs (inline) a job.
  void Dispatch(Job job) ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu_);
  bool WorkerHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  }

  const uint64_t size_bytes_;
  const uint64_t block_size_;
  const bool async_;
  const std::unique_ptr<std::byte[]> bytes_;

  mutable absl::Mutex mu_;
  std::vector<InjectedFault> faults_ ABSL_GUARDED_BY(mu_);
  uint64_t readable_end_ ABSL_GUARDED_BY(mu_) = std::numeric_limits<uint64_t>::max();
  uint64_t write_budget_ ABSL_GUARDED_BY(mu_) = std::numeric_limits<uint64_t>::max();
  int next_flush_error_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<absl::Span<std::byte>> regions_ ABSL_GUARDED_BY(mu_);
  BlockFileStats stats_ ABSL_GUARDED_BY(mu_);
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace strata::tiering::io
