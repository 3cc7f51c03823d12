#include "strata/tiering/io/uring_block_file.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include <liburing.h>
#include <sys/uio.h>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"
#include "strata/tiering/io/internal/direct_file.h"

namespace strata::tiering::io {
namespace {

using base::ErrnoToStatus;

constexpr int kMaxRetries = 64;
// io_uring_register_buffers refuses a buffer above 1 GiB.
constexpr uint64_t kMaxRegisteredPiece = uint64_t{1} << 30;
constexpr uint32_t kMaxQueueDepth = 4096;
// One request's length must fit an SQE's 32-bit length.
constexpr uint64_t kMaxIoBytes = uint64_t{1} << 30;

}  // namespace

// One SQE's worth of work: a piece of one op, a flush, or the reaper's stop signal.
struct UringBlockFile::Request {
  enum class Kind { kIo, kFlush, kStop };
  Kind kind = Kind::kIo;
  Batch* batch = nullptr;
  size_t op_index = 0;
  uint64_t offset = 0;  // where the rest of this request starts in the file
  std::byte* buffer = nullptr;
  uint64_t remaining = 0;
  int retries = 0;
};

// A batch (or a flush) from submission to completion.
struct UringBlockFile::Batch {
  std::vector<BlockIo> ops;
  std::vector<absl::Status> statuses;  // one per op
  std::vector<Request> requests;       // never resized once started (requests point in)
  size_t unfinished = 0;               // requests not yet finished
  BlockIoDone done;
  FlushDone flush_done;  // set for a flush
  absl::Status flush_status;
};

absl::StatusOr<std::unique_ptr<UringBlockFile>> UringBlockFile::Open(
    const UringBlockFileOptions& options) {
  if (options.queue_depth == 0 || options.queue_depth > kMaxQueueDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("queue_depth ", options.queue_depth, " outside [1, ", kMaxQueueDepth, "]"));
  }
  if (options.max_io_bytes == 0 || options.max_io_bytes % kDefaultBlockSize != 0 ||
      options.max_io_bytes > kMaxIoBytes) {
    return absl::InvalidArgumentError(absl::StrCat("max_io_bytes (", options.max_io_bytes,
                                                   ") must be a positive multiple of ",
                                                   kDefaultBlockSize, " up to ", kMaxIoBytes));
  }
  internal::DirectFileOptions file_options;
  file_options.path = options.path;
  file_options.size_bytes = options.size_bytes;
  file_options.block_size = kDefaultBlockSize;
  file_options.create_if_missing = options.create_if_missing;
  file_options.preallocate = options.preallocate;
  STRATA_ASSIGN_OR_RETURN(internal::DirectFile file, internal::OpenDirectFile(file_options));

  auto ring = std::make_unique<io_uring>();
  const int ret = io_uring_queue_init(options.queue_depth, ring.get(), 0);
  if (ret < 0) return ErrnoToStatus(-ret, "io_uring_queue_init");
  return absl::WrapUnique(new UringBlockFile(std::move(file.fd), options.path, file.size_bytes,
                                             file.block_device, options, std::move(ring)));
}

UringBlockFile::UringBlockFile(tiering::internal::UniqueFd fd, std::string path,
                               uint64_t size_bytes, bool block_device,
                               const UringBlockFileOptions& options, std::unique_ptr<io_uring> ring)
    : fd_(std::move(fd)),
      path_(std::move(path)),
      size_bytes_(size_bytes),
      block_device_(block_device),
      queue_depth_(options.queue_depth),
      max_io_bytes_(options.max_io_bytes),
      ring_(std::move(ring)) {
  reaper_ = std::thread([this] { ReaperLoop(); });
}

UringBlockFile::~UringBlockFile() {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &UringBlockFile::Idle));
    stop_request_ = std::make_unique<Request>();
    stop_request_->kind = Request::Kind::kStop;
    queued_.push_back(stop_request_.get());
    FillRingLocked();
  }
  reaper_.join();
  io_uring_queue_exit(ring_.get());
}

bool UringBlockFile::buffers_registered() const {
  absl::MutexLock lock(&mu_);
  return !registered_.empty();
}

void UringBlockFile::SubmitBatch(std::vector<BlockIo> ops, BlockIoDone done) {
  auto batch = std::make_unique<Batch>();
  batch->statuses.resize(ops.size());
  size_t request_count = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    batch->statuses[i] = Validate(ops[i]);
    if (batch->statuses[i].ok()) request_count += (ops[i].length - 1) / max_io_bytes_ + 1;
  }
  batch->requests.reserve(request_count);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!batch->statuses[i].ok()) continue;
    for (uint64_t at = 0; at < ops[i].length; at += max_io_bytes_) {
      Request& request = batch->requests.emplace_back();
      request.batch = batch.get();
      request.op_index = i;
      request.offset = ops[i].offset + at;
      request.buffer = ops[i].buffer + at;
      request.remaining = std::min(max_io_bytes_, ops[i].length - at);
    }
  }
  batch->ops = std::move(ops);
  batch->done = std::move(done);
  if (batch->requests.empty()) {  // nothing valid to do: complete inline
    {
      absl::MutexLock lock(&mu_);
      ++stats_.batches;
      stats_.failed_ops += batch->ops.size();
    }
    std::move(batch->done)(std::move(batch->statuses));
    return;
  }
  Start(std::move(batch));
}

void UringBlockFile::Flush(FlushDone done) {
  auto batch = std::make_unique<Batch>();
  batch->flush_done = std::move(done);
  Request& request = batch->requests.emplace_back();
  request.kind = Request::Kind::kFlush;
  request.batch = batch.get();
  Start(std::move(batch));
}

void UringBlockFile::Start(std::unique_ptr<Batch> batch) {
  absl::MutexLock lock(&mu_);
  if (!batch->flush_done) {
    ++stats_.batches;
    for (size_t i = 0; i < batch->ops.size(); ++i) {
      if (!batch->statuses[i].ok()) continue;
      ++(batch->ops[i].kind == BlockIoKind::kRead ? stats_.reads : stats_.writes);
    }
  }
  batch->unfinished = batch->requests.size();
  for (Request& request : batch->requests) queued_.push_back(&request);
  ++live_batches_;
  batch.release();  // owned by its requests until the last completes (CompleteLocked)
  FillRingLocked();
}

int UringBlockFile::FindRegisteredLocked(const std::byte* buffer, uint64_t length) const {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buffer);
  auto it = std::upper_bound(
      registered_.begin(), registered_.end(), begin,
      [](uintptr_t address, const RegisteredPiece& piece) { return address < piece.begin; });
  if (it == registered_.begin()) return -1;
  --it;
  return begin + length <= it->end ? it->index : -1;
}

void UringBlockFile::FillRingLocked() {
  unsigned prepared = 0;
  while (!queued_.empty() && in_flight_ < queue_depth_) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    CHECK(sqe != nullptr) << "io_uring submission queue full with " << in_flight_
                          << " requests in flight";
    Request* request = queued_.front();
    queued_.pop_front();
    switch (request->kind) {
      case Request::Kind::kIo: {
        const BlockIo& op = request->batch->ops[request->op_index];
        const auto length = static_cast<unsigned>(request->remaining);
        const auto offset = static_cast<__u64>(request->offset);
        const int index = FindRegisteredLocked(request->buffer, request->remaining);
        if (op.kind == BlockIoKind::kRead) {
          if (index >= 0) {
            io_uring_prep_read_fixed(sqe, fd_.get(), request->buffer, length, offset, index);
          } else {
            io_uring_prep_read(sqe, fd_.get(), request->buffer, length, offset);
          }
        } else if (index >= 0) {
          io_uring_prep_write_fixed(sqe, fd_.get(), request->buffer, length, offset, index);
        } else {
          io_uring_prep_write(sqe, fd_.get(), request->buffer, length, offset);
        }
        if (index >= 0) ++stats_.fixed_buffer_sqes;
        break;
      }
      case Request::Kind::kFlush:
        io_uring_prep_fsync(sqe, fd_.get(), IORING_FSYNC_DATASYNC);
        break;
      case Request::Kind::kStop:
        io_uring_prep_nop(sqe);
        break;
    }
    io_uring_sqe_set_data(sqe, request);
    ++in_flight_;
    ++prepared;
  }
  if (prepared == 0) return;
  stats_.submitted_sqes += prepared;
  // io_uring_submit hands the kernel every prepared SQE not yet consumed; repeat until
  // all are in. EAGAIN / EBUSY: the kernel is short of memory or completion room for now.
  unsigned submitted = 0;
  int attempts = 0;
  while (submitted < prepared) {
    const int ret = io_uring_submit(ring_.get());
    if (ret >= 0) {
      submitted += static_cast<unsigned>(ret);
      continue;
    }
    CHECK(ret == -EINTR || ret == -EAGAIN || ret == -EBUSY)
        << "io_uring_submit on " << path_ << ": " << ErrnoToStatus(-ret, "io_uring_enter");
    if (++attempts > 3) std::this_thread::yield();
  }
}

void UringBlockFile::CompleteLocked(Request* request, int result,
                                    std::vector<std::unique_ptr<Batch>>* finished) {
  Batch* const batch = request->batch;
  if (request->kind == Request::Kind::kFlush) {
    ++stats_.flushes;
    if (result < 0) batch->flush_status = FlushErrorStatus(-result, path_);
  } else {
    const BlockIo& op = batch->ops[request->op_index];
    absl::Status& status = batch->statuses[request->op_index];
    const uint64_t position = request->offset - op.offset;
    if (result < 0) {
      const int error = -result;
      if ((error == EAGAIN || error == EINTR) && request->retries < kMaxRetries) {
        ++request->retries;
        ++stats_.retries;
        queued_.push_front(request);
        return;
      }
      if (status.ok()) status = IoErrorStatus(op, error, position);
    } else if (result == 0) {
      if (status.ok()) status = IoErrorStatus(op, 0, position);  // the file ended
    } else {
      const auto transferred = static_cast<uint64_t>(result);
      CHECK_LE(transferred, request->remaining);
      (op.kind == BlockIoKind::kRead ? stats_.read_bytes : stats_.write_bytes) += transferred;
      if (transferred < request->remaining) {  // continue a partial transfer
        ++stats_.short_transfers;
        request->offset += transferred;
        request->buffer += transferred;
        request->remaining -= transferred;
        queued_.push_front(request);
        return;
      }
    }
  }
  if (--batch->unfinished == 0) {
    for (const absl::Status& status : batch->statuses) {
      if (!status.ok()) ++stats_.failed_ops;
    }
    finished->emplace_back(batch);
  }
}

void UringBlockFile::ReaperLoop() {
  bool stop = false;
  while (!stop) {
    io_uring_cqe* cqe = nullptr;
    const int ret = io_uring_wait_cqe(ring_.get(), &cqe);
    if (ret == -EINTR || ret == -EAGAIN) continue;
    CHECK_EQ(ret, 0) << "io_uring_wait_cqe on " << path_ << ": "
                     << ErrnoToStatus(-ret, "io_uring_enter");
    std::vector<std::unique_ptr<Batch>> finished;
    {
      absl::MutexLock lock(&mu_);
      unsigned head;
      unsigned seen = 0;
      io_uring_for_each_cqe(ring_.get(), head, cqe) {
        ++seen;
        --in_flight_;
        auto* request = static_cast<Request*>(io_uring_cqe_get_data(cqe));
        if (request->kind == Request::Kind::kStop) {
          stop = true;
        } else {
          CompleteLocked(request, cqe->res, &finished);
        }
      }
      io_uring_cq_advance(ring_.get(), seen);
      FillRingLocked();
    }
    for (std::unique_ptr<Batch>& batch : finished) {
      if (batch->flush_done) {
        std::move(batch->flush_done)(std::move(batch->flush_status));
      } else {
        std::move(batch->done)(std::move(batch->statuses));
      }
      batch.reset();
    }
    if (!finished.empty()) {
      absl::MutexLock lock(&mu_);
      live_batches_ -= finished.size();
    }
  }
}

absl::Status UringBlockFile::RegisterBuffers(absl::Span<const absl::Span<std::byte>> regions) {
  absl::MutexLock lock(&mu_);
  if (live_batches_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("RegisterBuffers with ", live_batches_, " batches in flight on ", path_));
  }
  if (!registered_.empty()) {
    io_uring_unregister_buffers(ring_.get());
    registered_.clear();
  }
  std::vector<iovec> pieces;
  std::vector<RegisteredPiece> registered;
  for (const absl::Span<std::byte> region : regions) {
    for (uint64_t at = 0; at < region.size(); at += kMaxRegisteredPiece) {
      const uint64_t length = std::min<uint64_t>(kMaxRegisteredPiece, region.size() - at);
      pieces.push_back(iovec{region.data() + at, length});
      const auto begin = reinterpret_cast<uintptr_t>(region.data() + at);
      registered.push_back({begin, begin + length, static_cast<int>(registered.size())});
    }
  }
  if (pieces.empty()) return absl::OkStatus();
  const int ret =
      io_uring_register_buffers(ring_.get(), pieces.data(), static_cast<unsigned>(pieces.size()));
  if (ret < 0) {
    const absl::Status status = ErrnoToStatus(
        -ret, absl::StrCat("io_uring_register_buffers (", pieces.size(), " pieces) on ", path_));
    if (!registration_failure_logged_) {
      registration_failure_logged_ = true;
      LOG(WARNING) << status << "; using plain reads and writes (raise RLIMIT_MEMLOCK to "
                   << "let the kernel pin the buffers once)";
    }
    return status;
  }
  std::sort(registered.begin(), registered.end(),
            [](const RegisteredPiece& a, const RegisteredPiece& b) { return a.begin < b.begin; });
  registered_ = std::move(registered);
  return absl::OkStatus();
}

BlockFileStats UringBlockFile::Stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace strata::tiering::io
