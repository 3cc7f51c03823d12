// OpenDirectFile: opens (and creates, grows, preallocates) the file or block device under
// a UringBlockFile for O_DIRECT I/O. Private to tiering/io (internal: only uring_block_file.cc uses
// it).
//
// A regular file is opened O_RDWR | O_DIRECT (| O_CREAT if create_if_missing). If it is
// smaller than size_bytes it is grown: with preallocate by fallocate(2) (every block
// allocated up front, so later writes cannot run out of space; holes of an existing file
// are filled too), else by ftruncate(2) (sparse: writes may fail with ENOSPC later). A
// larger existing file keeps its size; only [0, size_bytes) is used. A block device is
// used as it is. If Open fails on a file it created, it removes the file again; a file
// it only tried to grow is truncated back to its old size.
//
// Errors:
//   INVALID_ARGUMENT    empty path; size_bytes not a multiple of block_size, or 0 with an
//                       empty new file; the path is a directory or neither a regular
//                       file nor a block device; a block device smaller than size_bytes
//   NOT_FOUND           the file does not exist and create_if_missing is false
//   FAILED_PRECONDITION the filesystem refuses O_DIRECT (open fails with EINVAL): strata
//                       never falls back to buffered I/O
//   RESOURCE_EXHAUSTED  fallocate / ftruncate ran out of space (ENOSPC, EDQUOT), or the
//                       size exceeds RLIMIT_FSIZE or the filesystem's limit (EFBIG)
//   other               the errno of the failing call through ErrnoToStatus (EACCES ->
//                       PERMISSION_DENIED, fallocate EOPNOTSUPP -> UNIMPLEMENTED, ...)
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

#include "strata/tiering/internal/unique_fd.h"

namespace strata::tiering::io::internal {

struct DirectFileOptions {
  std::string path;
  uint64_t size_bytes = 0;  // 0: the existing file's (or device's) size
  uint64_t block_size = 4096;
  bool create_if_missing = true;
  bool preallocate = true;
};

struct DirectFile {
  tiering::internal::UniqueFd fd;
  uint64_t size_bytes = 0;  // the usable size: size_bytes, or what the file had
  bool block_device = false;
};

absl::StatusOr<DirectFile> OpenDirectFile(const DirectFileOptions& options);

}  // namespace strata::tiering::io::internal
