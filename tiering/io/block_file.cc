#include "strata/tiering/io/block_file.h"

#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

#include "strata/base/errno_status.h"

namespace strata::tiering::io {

namespace {

// Debian's absl::StrCat does not take std::string_view.
const char* KindName(BlockIoKind kind) { return kind == BlockIoKind::kRead ? "read" : "write"; }

}  // namespace

std::string_view BlockIoKindName(BlockIoKind kind) { return KindName(kind); }

std::vector<absl::Status> BlockFile::SubmitAndWait(std::vector<BlockIo> ops) {
  absl::Notification finished;
  std::vector<absl::Status> result;
  SubmitBatch(std::move(ops), [&](std::vector<absl::Status> statuses) {
    result = std::move(statuses);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

absl::Status BlockFile::Flush() {
  absl::Notification finished;
  absl::Status result;
  Flush([&](absl::Status status) {
    result = std::move(status);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

absl::Status BlockFile::Validate(const BlockIo& op) const {
  const uint64_t mask = block_size() - 1;
  const uint64_t address = reinterpret_cast<uintptr_t>(op.buffer);
  if (op.length == 0 || (op.offset & mask) != 0 || (op.length & mask) != 0 ||
      (address & mask) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        KindName(op.kind), " of [", op.offset, ", +", op.length, ") with buffer 0x",
        absl::Hex(address), ": offset, length and buffer must be non-zero multiples of ",
        block_size(), " bytes"));
  }
  if (op.offset > size_bytes() || op.length > size_bytes() - op.offset) {
    return absl::OutOfRangeError(absl::StrCat(KindName(op.kind), " of [", op.offset, ", +",
                                              op.length, ") leaves the file of ", size_bytes(),
                                              " bytes"));
  }
  return absl::OkStatus();
}

absl::Status IoErrorStatus(const BlockIo& op, int error_number, uint64_t bytes_done) {
  const std::string what =
      absl::StrCat(KindName(op.kind), " of [", op.offset, ", +", op.length, ") failed at byte ",
                   bytes_done, " of ", op.length, " (file offset ", op.offset + bytes_done, ")");
  if (error_number == 0) {
    if (op.kind == BlockIoKind::kRead) {
      return absl::DataLossError(absl::StrCat("short read: ", what, ": the file ended"));
    }
    return absl::UnavailableError(absl::StrCat("short write: ", what, ": the device wrote 0"));
  }
  if (error_number == EIO) {
    const absl::Status converted = base::ErrnoToStatus(EIO, what);
    if (op.kind == BlockIoKind::kRead) return absl::DataLossError(converted.message());
    return absl::UnavailableError(converted.message());
  }
  return base::ErrnoToStatus(error_number, what);
}

absl::Status FlushErrorStatus(int error_number, std::string_view file_description) {
  const absl::Status converted = base::ErrnoToStatus(
      error_number, absl::StrCat("fdatasync of ", absl::string_view(file_description.data(),
                                                                    file_description.size())));
  if (error_number == EIO) return absl::UnavailableError(converted.message());
  return converted;
}

}  // namespace strata::tiering::io
