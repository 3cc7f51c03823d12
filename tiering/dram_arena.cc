#include "strata/tiering/dram_arena.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"
#include "strata/tiering/internal/prefault.h"

namespace strata::tiering {
namespace {

using base::ErrnoToStatus;
using internal::MemoryMapping;
using internal::PrefaultForWrite;
using internal::UniqueFd;

// The arena asks for 2 MiB hugetlb pages explicitly (MFD_HUGE_2MB), not the system's
// default hugepage size, which may be 1 GiB.
constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;

struct Backing {
  UniqueFd fd;
  MemoryMapping mapping;
  bool write_sealed = false;  // F_SEAL_FUTURE_WRITE holds (see below)
};

// Fails with RESOURCE_EXHAUSTED (EFBIG) if a file of `bytes` bytes would exceed this
// process's RLIMIT_FSIZE: ftruncate past it would raise SIGXFSZ, which kills the process.
absl::Status CheckFileSizeLimit(uint64_t bytes) {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0) return ErrnoToStatus(errno, "getrlimit");
  if (limit.rlim_cur != RLIM_INFINITY && bytes > limit.rlim_cur) {
    return ErrnoToStatus(EFBIG, absl::StrCat("ftruncate to ", bytes, " bytes (RLIMIT_FSIZE is ",
                                             limit.rlim_cur, ")"));
  }
  return absl::OkStatus();
}

// True when a writable descriptor opened again through /proc (the way around a read-only
// fd that a same-host client has) can neither map the file writable nor write() it: what
// F_SEAL_FUTURE_WRITE promises, checked on this kernel and file system (hugetlbfs honours
// it only since Linux 5.4).
bool WriteSealHolds(int fd) {
  const std::string path = absl::StrCat("/proc/self/fd/", fd);
  UniqueFd writable(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!writable.valid()) return errno == EACCES || errno == EPERM;
  const long page = ::sysconf(_SC_PAGESIZE);
  void* address = ::mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE, MAP_SHARED,
                         writable.get(), 0);
  if (address != MAP_FAILED) {
    ::munmap(address, static_cast<size_t>(page));
    return false;
  }
  // (A write that got through stores a 0 over the fresh file's 0.)
  const char byte = 0;
  return ::pwrite(writable.get(), &byte, 1, 0) < 0;
}

// Creates a sealed memfd of `bytes` bytes and maps it shared, read-write (the only writable
// mapping there will ever be when the write seal holds).
absl::StatusOr<Backing> MapMemfd(const std::string& name, uint64_t bytes, bool hugetlb) {
  unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  if (hugetlb) flags |= MFD_HUGETLB | MFD_HUGE_2MB;
  UniqueFd fd(::memfd_create(name.c_str(), flags));
  if (!fd.valid()) return ErrnoToStatus(errno, "memfd_create");
  STRATA_RETURN_IF_ERROR(CheckFileSizeLimit(bytes));
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return ErrnoToStatus(errno, "ftruncate");
  }
  void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (address == MAP_FAILED) return ErrnoToStatus(errno, "mmap");
  Backing backing{std::move(fd), MemoryMapping(address, bytes)};
  // A client holding the fd must not be able to shrink the file under the node, nor — once
  // the node's own mapping exists — get any new writable mapping or write() of it
  // (F_SEAL_FUTURE_WRITE, Linux >= 5.1; existing mappings keep their access).
  const int base_seals = F_SEAL_SHRINK | F_SEAL_GROW;
  if (::fcntl(backing.fd.get(), F_ADD_SEALS, base_seals | F_SEAL_FUTURE_WRITE) == 0) {
    backing.write_sealed = WriteSealHolds(backing.fd.get());
  } else if (::fcntl(backing.fd.get(), F_ADD_SEALS, base_seals) != 0) {
    return ErrnoToStatus(errno, "fcntl(F_ADD_SEALS)");
  }
  if (::fcntl(backing.fd.get(), F_ADD_SEALS, F_SEAL_SEAL) != 0) {
    return ErrnoToStatus(errno, "fcntl(F_ADD_SEALS, F_SEAL_SEAL)");
  }
  return backing;
}

// True if the kernel's THP policy in `path` (shmem_enabled or enabled) honours
// MADV_HUGEPAGE.
bool ThpHonoursAdvice(const char* path) {
  std::ifstream file(path);
  std::string policy;
  if (!std::getline(file, policy)) return false;
  const size_t open = policy.find('[');
  const size_t close = policy.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return false;
  const std::string selected = policy.substr(open + 1, close - open - 1);
  return selected == "always" || selected == "within_size" || selected == "advise" ||
         selected == "madvise" || selected == "force";
}

bool ShmemThpHonoursAdvice() {
  return ThpHonoursAdvice("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
}

bool AnonymousThpHonoursAdvice() {
  return ThpHonoursAdvice("/sys/kernel/mm/transparent_hugepage/enabled");
}

// Private anonymous memory of `bytes` bytes (no fd).
absl::StatusOr<Backing> MapAnonymous(uint64_t bytes) {
  void* address =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) return ErrnoToStatus(errno, "mmap");
  return Backing{UniqueFd(), MemoryMapping(address, bytes)};
}

}  // namespace

std::string_view HugePageModeName(HugePageMode mode) {
  switch (mode) {
    case HugePageMode::kHugeTlb:
      return "hugetlb";
    case HugePageMode::kTransparent:
      return "transparent";
    case HugePageMode::kNone:
      return "none";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<DramArena>> DramArena::Create(const DramArenaOptions& options) {
  ExtentAllocatorOptions allocator_options;
  allocator_options.capacity_bytes = options.capacity_bytes;
  allocator_options.granule_bytes = options.granule_bytes;
  allocator_options.max_extent_bytes = options.max_extent_bytes;
  allocator_options.large_extent_bytes = options.large_extent_bytes;
  STRATA_RETURN_IF_ERROR(ExtentAllocator::Validate(allocator_options));

  const bool anonymous_thp = AnonymousThpHonoursAdvice();
  const bool anonymous =
      options.backing == DramBacking::kAnonymous ||
      (options.backing == DramBacking::kAuto && !ShmemThpHonoursAdvice() && anonymous_thp);
  if (options.try_hugetlb && options.backing != DramBacking::kAnonymous) {
    const uint64_t bytes = (options.capacity_bytes / kHugePageBytes +
                            (options.capacity_bytes % kHugePageBytes != 0 ? 1 : 0)) *
                           kHugePageBytes;
    absl::StatusOr<Backing> backing = MapMemfd(options.name, bytes, /*hugetlb=*/true);
    if (backing.ok() && options.populate) {
      const absl::Status populated =
          PrefaultForWrite(backing->mapping.data(), backing->mapping.size());
      if (!populated.ok()) backing = populated;
    }
    if (backing.ok()) {
      LOG(INFO) << "DramArena '" << options.name << "': " << bytes << " bytes on hugetlb pages";
      return absl::WrapUnique(new DramArena(std::move(backing->fd), std::move(backing->mapping),
                                            HugePageMode::kHugeTlb, backing->write_sealed,
                                            allocator_options));
    }
    VLOG(1) << "DramArena '" << options.name << "': no hugetlb pages (" << backing.status()
            << "), falling back to transparent hugepages";
  }

  STRATA_ASSIGN_OR_RETURN(Backing backing, anonymous
                                               ? MapAnonymous(options.capacity_bytes)
                                               : MapMemfd(options.name, options.capacity_bytes,
                                                          /*hugetlb=*/false));
  HugePageMode mode = HugePageMode::kNone;
  if (::madvise(backing.mapping.data(), backing.mapping.size(), MADV_HUGEPAGE) == 0 &&
      (anonymous ? anonymous_thp : ShmemThpHonoursAdvice())) {
    mode = HugePageMode::kTransparent;
  }
  if (options.populate) {
    STRATA_RETURN_IF_ERROR(PrefaultForWrite(backing.mapping.data(), backing.mapping.size()));
  }
  LOG(INFO) << "DramArena '" << options.name << "': " << options.capacity_bytes
            << " bytes, hugepage mode " << HugePageModeName(mode)
            << (anonymous ? ", anonymous memory (not shareable)" : ", memfd");
  if (!anonymous && !backing.write_sealed) {
    LOG(WARNING) << "DramArena '" << options.name
                 << "': the kernel does not seal the memfd against new writable mappings "
                    "(F_SEAL_FUTURE_WRITE): same-host clients will not be given it";
  }
  return absl::WrapUnique(new DramArena(std::move(backing.fd), std::move(backing.mapping), mode,
                                        backing.write_sealed, allocator_options));
}

absl::StatusOr<internal::UniqueFd> DramArena::OpenReadOnlyFd() const {
  if (!shareable()) {
    return absl::FailedPreconditionError(
        "the DRAM arena is anonymous memory (dram_backing): it has no file to share");
  }
  const std::string path = absl::StrCat("/proc/self/fd/", fd_.get());
  UniqueFd read_only(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!read_only.valid()) return ErrnoToStatus(errno, absl::StrCat("open(", path, ", O_RDONLY)"));
  return read_only;
}

DramArena::DramArena(internal::UniqueFd fd, internal::MemoryMapping mapping, HugePageMode mode,
                     bool write_sealed, const ExtentAllocatorOptions& allocator_options)
    : CarvedTier(allocator_options),
      fd_(std::move(fd)),
      mapping_(std::move(mapping)),
      huge_page_mode_(mode),
      write_sealed_(write_sealed) {}

absl::Span<std::byte> DramArena::Data(const Extent& extent) const {
  CHECK(extent.offset <= capacity() && extent.length <= capacity() - extent.offset)
      << "extent [" << extent.offset << ", +" << extent.length << ") outside the arena";
  return absl::Span<std::byte>(mapping_.data() + extent.offset, extent.length);
}

absl::Status DramArena::Write(const Extent& extent, uint64_t offset,
                              absl::Span<const std::byte> src) {
  STRATA_RETURN_IF_ERROR(CheckRange(extent, offset, src.size()));
  if (!src.empty()) std::memcpy(mapping_.data() + extent.offset + offset, src.data(), src.size());
  return absl::OkStatus();
}

absl::Status DramArena::Read(const Extent& extent, uint64_t offset,
                             absl::Span<std::byte> dst) const {
  STRATA_RETURN_IF_ERROR(CheckRange(extent, offset, dst.size()));
  if (!dst.empty()) std::memcpy(dst.data(), mapping_.data() + extent.offset + offset, dst.size());
  return absl::OkStatus();
}

}  // namespace strata::tiering
