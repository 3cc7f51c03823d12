#include "client/cli/local_files.h"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"

namespace strata::cli {
namespace {

absl::Status ErrnoError(int error, const std::string& what, const std::string& path) {
  if (error == EISDIR) {
    return absl::FailedPreconditionError(absl::StrCat(what, " ", path, ": is a directory"));
  }
  return base::ErrnoToStatus(error, absl::StrCat(what, " ", path));
}

absl::Status WriteAll(int fd, absl::Span<const char> bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadLocalFile(const std::string& path, std::istream& stdin_stream) {
  if (path == "-") {
    std::string text(std::istreambuf_iterator<char>(stdin_stream), {});
    if (stdin_stream.bad()) return absl::UnknownError("cannot read <stdin>");
    return text;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return ErrnoError(EISDIR, "cannot read", path);
  }
  std::string content;
  if (S_ISREG(st.st_mode) && st.st_size > 0) content.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return ErrnoError(error, "cannot read", path);
    }
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

absl::Status WriteLocalFile(const std::string& path, absl::Span<const char> bytes,
                            std::ostream& stdout_stream) {
  if (path == "-") {
    stdout_stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    stdout_stream.flush();
    if (!stdout_stream) return absl::UnknownError("cannot write <stdout>");
    return absl::OkStatus();
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return ErrnoError(EISDIR, "cannot write", path);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a pipe: write in place.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno, "cannot open", path);
    absl::Status written = WriteAll(fd, bytes, path);
    ::close(fd);
    return written;
  }
  const std::string temp = absl::StrCat(path, ".strata-tmp-", ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "cannot create", temp);
  absl::Status written = WriteAll(fd, bytes, temp);
  if (::close(fd) != 0 && written.ok()) written = ErrnoError(errno, "cannot write", temp);
  if (written.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    written = ErrnoError(errno, "cannot rename to", path);
  }
  if (!written.ok()) ::unlink(temp.c_str());
  return written;
}

}  // namespace strata::cli
