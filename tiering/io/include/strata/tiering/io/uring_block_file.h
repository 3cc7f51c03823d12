// UringBlockFile: the production BlockFile: io_uring with O_DIRECT on a preallocated
// regular file or a block device. liburing is used here and nowhere else in strata.
//
// Structure: one ring of queue_depth entries. Callers' threads submit: SubmitBatch
// validates the ops, cuts each into requests of at most max_io_bytes, queues them and,
// under the file's mutex, fills the ring up to queue_depth requests in flight and submits
// them with one io_uring_enter. One reaper thread waits for completions, handles them,
// refills the ring from the queue (so a large batch streams through the ring at full
// depth) and runs each batch's completion when its last request finishes.
//   * EAGAIN / EINTR completions are resubmitted (up to 64 times, then UNAVAILABLE).
//   * A partial transfer (0 < res < length: e.g. a regular file mid-range) is continued
//     from where it stopped; a read that returns 0 before its range is done hit the end
//     of the file: a short read, DATA_LOSS.
//   * Registered buffers: RegisterBuffers registers caller regions (e.g. the DRAM arena,
//     cut into pieces of at most 1 GiB, the kernel's limit) with
//     io_uring_register_buffers; a request whose buffer lies inside one piece is sent as
//     READ_FIXED / WRITE_FIXED, which skips pinning the pages per request. If the kernel
//     refuses (RLIMIT_MEMLOCK: ENOMEM; file-backed memory on old kernels: EOPNOTSUPP) the
//     file logs it once and sends plain reads and writes. Registering while the reaper
//     waits in the ring needs Linux >= 5.13 (older kernels quiesce the ring to register).
//   * Flush is an IORING_OP_FSYNC with IORING_FSYNC_DATASYNC (fdatasync).
// Per-op statuses: the table in block_file.h (validation before submission; a failed
// request's errno through IoErrorStatus; the first failing request of an op decides).
//
// Ownership: the file owns the descriptor, the ring and the reaper thread. The destructor
// waits until every batch and flush submitted has completed (their completions have run),
// then stops the reaper and closes the ring and the file.
// Thread safety: all methods are thread-safe. Completions run on the reaper thread (or
// inline, for a batch that submits nothing); they may submit more I/O but must not block
// on other I/O of this file (the reaper would wait for itself) or destroy it.
//
// Open errors: INVALID_ARGUMENT for bad options (queue_depth not in [1, 4096],
// max_io_bytes not a positive multiple of 4096 up to 1 GiB, size_bytes not a multiple of 4096), and
// everything internal/direct_file.h lists: NOT_FOUND (missing, create_if_missing false),
// FAILED_PRECONDITION (the filesystem refuses O_DIRECT; no buffered fallback),
// RESOURCE_EXHAUSTED (fallocate/ftruncate ran out of space, EFBIG), ...; the ring's
// setup errno through ErrnoToStatus (ENOMEM -> RESOURCE_EXHAUSTED, EPERM ->
// PERMISSION_DENIED when io_uring is disabled, ENOSYS -> UNIMPLEMENTED).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/tiering/internal/unique_fd.h"
#include "strata/tiering/io/block_file.h"

struct io_uring;  // liburing's ring; defined in uring_block_file.cc's includes only

namespace strata::tiering::io {

struct UringBlockFileOptions {
  // A regular file (created if missing and create_if_missing) or a block device.
  std::string path;
  // Bytes the file offers: a regular file smaller than this is grown; 0 means the size
  // of the existing file or device. REQUIRES: a multiple of 4096.
  uint64_t size_bytes = 0;
  bool create_if_missing = true;
  // Grow regular files with fallocate (every block allocated now; writes cannot hit
  // ENOSPC later). false: a sparse file (ftruncate); writes may fail RESOURCE_EXHAUSTED.
  bool preallocate = true;
  // Requests in flight at most, and the ring's size. REQUIRES: in [1, 4096].
  uint32_t queue_depth = 32;
  // Ops larger than this are cut into several requests. REQUIRES: a positive multiple
  // of 4096, at most 1 GiB.
  uint64_t max_io_bytes = uint64_t{1} << 20;
};

class UringBlockFile final : public BlockFile {
 public:
  static absl::StatusOr<std::unique_ptr<UringBlockFile>> Open(const UringBlockFileOptions& options);

  UringBlockFile(const UringBlockFile&) = delete;
  UringBlockFile& operator=(const UringBlockFile&) = delete;
  ~UringBlockFile() override;

  uint64_t block_size() const override { return kDefaultBlockSize; }
  uint64_t size_bytes() const override { return size_bytes_; }
  const std::string& path() const { return path_; }
  bool is_block_device() const { return block_device_; }
  // True while buffers are registered (the last RegisterBuffers succeeded).
  bool buffers_registered() const ABSL_LOCKS_EXCLUDED(mu_);

  void SubmitBatch(std::vector<BlockIo> ops, BlockIoDone done) override ABSL_LOCKS_EXCLUDED(mu_);
  using BlockFile::Flush;  // the synchronous form
  void Flush(FlushDone done) override ABSL_LOCKS_EXCLUDED(mu_);
  // Errors: FAILED_PRECONDITION if a batch is in flight; otherwise OK or the converted
  // errno of io_uring_register_buffers (ENOMEM -> RESOURCE_EXHAUSTED: RLIMIT_MEMLOCK).
  absl::Status RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) override
      ABSL_LOCKS_EXCLUDED(mu_);
  BlockFileStats Stats() const override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Batch;
  struct Request;
  // One registered piece: [begin, end) of caller memory, buffer index `index`.
  struct RegisteredPiece {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    int index = 0;
  };

  UringBlockFile(tiering::internal::UniqueFd fd, std::string path, uint64_t size_bytes,
                 bool block_device, const UringBlockFileOptions& options,
                 std::unique_ptr<io_uring> ring);

  // Queues the batch's requests and fills the ring; takes ownership of `batch`.
  void Start(std::unique_ptr<Batch> batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves queued requests into the ring while fewer than queue_depth are in flight, and
  // submits them.
  void FillRingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Handles one completion; appends batches that finished to `finished`.
  void CompleteLocked(Request* request, int result, std::vector<std::unique_ptr<Batch>>* finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Index of the registered piece holding [buffer, buffer + length), or -1.
  int FindRegisteredLocked(const std::byte* buffer, uint64_t length) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReaperLoop() ABSL_LOCKS_EXCLUDED(mu_);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return live_batches_ == 0; }

  const tiering::internal::UniqueFd fd_;
  const std::string path_;
  const uint64_t size_bytes_;
  const bool block_device_;
  const uint32_t queue_depth_;
  const uint64_t max_io_bytes_;
  // The submission side of the ring is used under mu_ only; the completion side by the
  // reaper only (it waits without mu_ and consumes completions under mu_).
  const std::unique_ptr<io_uring> ring_;

  mutable absl::Mutex mu_;
  std::deque<Request*> queued_ ABSL_GUARDED_BY(mu_);
  uint32_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // Batches and flushes started whose completion has not returned yet.
  uint64_t live_batches_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<RegisteredPiece> registered_ ABSL_GUARDED_BY(mu_);  // sorted by begin
  bool registration_failure_logged_ ABSL_GUARDED_BY(mu_) = false;
  BlockFileStats stats_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Request> stop_request_ ABSL_GUARDED_BY(mu_);
  std::thread reaper_;
};

}  // namespace strata::tiering::io
