// BlockFile: an aligned, asynchronous block store: the narrow interface below the SSD tier.
//
// A block file is a byte range [0, size_bytes()) read and written in whole blocks
// (block_size(), 4096 bytes) from and into caller buffers aligned to a block. Two
// implementations: UringBlockFile (io_uring, O_DIRECT, on a preallocated file or a block
// device) in production, and MemoryBlockFile (in memory, with fault injection) in tests.
//
// I/O is asynchronous and batched. SubmitBatch takes a batch of reads and writes and a
// completion that is called exactly once, with statuses[i] the outcome of ops[i], when
// every op has finished (succeeded or failed: a failed op never stops the others). The
// completion may run on any thread: inline on the caller's, before SubmitBatch returns (an
// empty batch, a batch whose ops all failed validation, MemoryBlockFile's synchronous
// mode), or on the file's completion thread. It must not destroy the file. Callers that
// want to wait use the synchronous helpers (SubmitAndWait, Flush()).
//
// Durability: a completed write is in the device (O_DIRECT), not necessarily durable
// through a power loss until a later Flush (fdatasync) has completed. Flush covers the
// writes that completed before it was submitted; it does not wait for writes in flight.
//
// Ownership: the caller owns the buffers. A buffer named in a batch must stay valid, and
// must not be touched (read buffers) or changed (write buffers), until the batch's
// completion has run. Reading and writing the same blocks at once, in one batch or in
// concurrent ones, gives undefined bytes (no ordering is promised between in-flight ops).
// Thread safety: every method is safe to call concurrently, except that the file must
// not be destroyed while a call is running; the destructor waits for in-flight batches.
//
// Per-op statuses (both implementations; checked before anything is submitted, or
// mapped from the errno of the failed transfer by IoErrorStatus below):
//   INVALID_ARGUMENT    offset, length or buffer address not a multiple of block_size(),
//                       or length 0
//   OUT_OF_RANGE        [offset, offset + length) does not lie inside [0, size_bytes())
//   DATA_LOSS           read failed with EIO, or a short read: the file ended (the kernel
//                       returned 0) before the range was done; the message names the
//                       range and the byte of it where the transfer failed
//   UNAVAILABLE         write failed with EIO (the device may come back; the bytes of that
//                       range are undefined), or EAGAIN/EINTR persisted through retries
//   RESOURCE_EXHAUSTED  ENOSPC, EDQUOT, EFBIG (a sparse file ran out of disk)
//   other               any other errno through tiering's ErrnoToStatus
// Flush: OK, or the errno of fdatasync through IoErrorStatus (EIO -> UNAVAILABLE: the
// writes since the last successful flush may not be durable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/types/span.h"

namespace strata::tiering::io {

enum class BlockIoKind { kRead, kWrite };

// "read" or "write".
std::string_view BlockIoKindName(BlockIoKind kind);

// One read or write of [offset, offset + length) of the file from or into `buffer`.
struct BlockIo {
  BlockIoKind kind = BlockIoKind::kRead;
  uint64_t offset = 0;
  std::byte* buffer = nullptr;  // a write only reads it
  uint64_t length = 0;

  static BlockIo Read(uint64_t offset, absl::Span<std::byte> dst) {
    return {BlockIoKind::kRead, offset, dst.data(), dst.size()};
  }
  static BlockIo Write(uint64_t offset, absl::Span<const std::byte> src) {
    return {BlockIoKind::kWrite, offset, const_cast<std::byte*>(src.data()), src.size()};
  }
};

// Called exactly once per batch, with statuses[i] the outcome of ops[i].
using BlockIoDone = absl::AnyInvocable<void(std::vector<absl::Status> statuses) &&>;
using FlushDone = absl::AnyInvocable<void(absl::Status status) &&>;

// Counts of what a block file has done since it was opened (monotonic).
struct BlockFileStats {
  uint64_t batches = 0;
  uint64_t reads = 0;  // ops submitted (valid ones)
  uint64_t writes = 0;
  uint64_t read_bytes = 0;  // bytes transferred successfully
  uint64_t write_bytes = 0;
  uint64_t failed_ops = 0;
  uint64_t flushes = 0;
  // UringBlockFile only: SQEs prepared (ops are split into at most max_io_bytes each,
  // plus resubmissions), of which used registered buffers; EAGAIN/EINTR resubmissions;
  // partial transfers continued.
  uint64_t submitted_sqes = 0;
  uint64_t fixed_buffer_sqes = 0;
  uint64_t retries = 0;
  uint64_t short_transfers = 0;
};

class BlockFile {
 public:
  static constexpr uint64_t kDefaultBlockSize = 4096;

  virtual ~BlockFile() = default;

  virtual uint64_t block_size() const = 0;
  virtual uint64_t size_bytes() const = 0;

  // Starts the ops; `done` runs once all have finished (see the header comment).
  virtual void SubmitBatch(std::vector<BlockIo> ops, BlockIoDone done) = 0;
  // Makes the writes completed so far durable (fdatasync); `done` runs once with the
  // outcome, on any thread.
  virtual void Flush(FlushDone done) = 0;

  // Registers buffer regions (e.g. the DRAM arena) with the kernel so that ops whose
  // buffer lies inside one skip the per-op page pinning. Best effort: returns OK if the
  // regions are registered, else why not (the file logs it once and keeps using plain
  // ops; I/O works either way). Replaces any earlier registration. MemoryBlockFile
  // records the regions and returns OK. REQUIRES: the regions outlive the file or a later
  // RegisterBuffers call, and no batch is in flight.
  virtual absl::Status RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) = 0;

  virtual BlockFileStats Stats() const = 0;

  // Synchronous forms: submit and wait for the completion.
  std::vector<absl::Status> SubmitAndWait(std::vector<BlockIo> ops);
  absl::Status Flush();

  // The status SubmitBatch gives `op` before submitting it: OK, INVALID_ARGUMENT or
  // OUT_OF_RANGE (see the table above).
  absl::Status Validate(const BlockIo& op) const;
};

// The per-op status for a transfer of `op` that failed with `error_number` at byte
// `bytes_done` of the op (the table in the header comment). error_number 0 means a short
// transfer: the kernel returned 0 bytes before the range was done.
absl::Status IoErrorStatus(const BlockIo& op, int error_number, uint64_t bytes_done);
// The status of a failed fdatasync of `file_description` (EIO -> UNAVAILABLE).
absl::Status FlushErrorStatus(int error_number, std::string_view file_description);

}  // namespace strata::tiering::io
