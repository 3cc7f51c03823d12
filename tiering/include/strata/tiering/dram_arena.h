// DramArena: the DRAM tier. One large region of host memory, carved into extents.
//
// Memory: the region is a shareable memory file (memfd), mapped MAP_SHARED, so that the
// node can pass it to a same-host client over a UNIX socket; the client maps the same
// pages, registers them with CUDA and DMAs blob bytes straight to its GPU. The file is
// sealed against shrinking and growing (a client that truncated it would make the node's
// accesses fault). Creation tries, in order:
//   1. memfd_create(MFD_HUGETLB | MFD_HUGE_2MB) + mmap: explicit 2 MiB hugepages, asked
//      for by size so that a host whose default hugepage size is 1 GiB still gets 2 MiB
//      pages (if options.try_hugetlb and the kernel's 2 MiB pool has pages reserved or
//      may overcommit: /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages and
//      nr_overcommit_hugepages). The mapping is rounded up to a whole 2 MiB page.
//      HugePageMode::kHugeTlb.
//   2. a plain memfd + mmap + madvise(MADV_HUGEPAGE): transparent hugepages.
//      HugePageMode::kTransparent if the advice was accepted and the kernel's shmem THP
//      policy (/sys/kernel/mm/transparent_hugepage/shmem_enabled) honours it, else
//      HugePageMode::kNone (4 KiB pages).
//   3. (options.backing kAuto only, when neither step gives hugepages but the kernel's THP
//      policy for anonymous memory honours MADV_HUGEPAGE) private anonymous memory +
//      madvise(MADV_HUGEPAGE), HugePageMode::kTransparent: not shareable (no fd). Measured
//      on this project's VMs (issue 12): recv() into successive MiB of a 2 GiB arena ran at
//      0.58 GB/s on 4 KiB shmem pages and 3.2 GB/s on anonymous THP — a node's PUTs land
//      at the first speed. options.backing kMemfd stops after step 2; kAnonymous takes
//      step 3 directly.
// With options.populate the pages are faulted in at creation (slow for large arenas, but
// no page faults on the data path later; internal/prefault.h); otherwise they are
// allocated on first touch. If populating the hugetlb mapping fails, step 2 is tried.
//
// Sharing with same-host clients: hand a client OpenReadOnlyFd(), never fd(). A read-only
// open of the file can only be mapped PROT_READ and fails write() and fallocate(). That
// alone would stop client bugs, not a hostile client: a process holding the read-only fd
// can open /proc/self/fd/<n> again with O_RDWR (a memfd's inode is mode 0777). So once the
// arena's own read-write mapping exists, the file is also sealed with F_SEAL_FUTURE_WRITE:
// from then on nobody — the node included, through fd() or any reopened descriptor — can
// map it writable (EPERM), write() it or punch holes in it (EPERM); mprotect cannot make a
// read-only mapping writable (EACCES). Only the arena's mapping writes. Create checks that
// the seal holds on this kernel by trying the reopen (write_sealed()); where it does not
// (Linux < 5.1, hugetlbfs before 5.4), the node must not hand the file to clients.
//
// Allocation: an ExtentAllocator (64 KiB granule, 1 GiB largest extent by default) behind
// an absl::Mutex. The byte copies of Read / Write / Data() happen outside the lock.
//
// Ownership: the arena owns the fd, the mapping and the allocator; fd() and base() stay
// valid for the arena's lifetime. Extents and spans from Data() are views into it. The
// caller owns the fd OpenReadOnlyFd returns; it keeps the file alive on its own.
// Thread safety: all methods are thread-safe (see Tier for the data-race rule).
// Errors: Create returns INVALID_ARGUMENT for bad options (capacity 0 or not a multiple of
// the granule, ...: ExtentAllocator::Validate), and otherwise the converted errno of the
// failing system call (strata/base/errno_status.h), notably:
//   RESOURCE_EXHAUSTED  mmap or populating ran out of memory (ENOMEM), or the file would
//                       exceed RLIMIT_FSIZE (EFBIG; checked before ftruncate, which would
//                       raise SIGXFSZ and kill the process)
//   INVALID_ARGUMENT    populating found a page that cannot be backed (EFAULT)
//   PERMISSION_DENIED   EPERM / EACCES
// OpenReadOnlyFd returns the converted errno of open(2) (EMFILE -> RESOURCE_EXHAUSTED,
// ENOENT -> NOT_FOUND when /proc is not mounted).
// Allocate / Free / Read / Write: as in Tier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/tiering/carved_tier.h"
#include "strata/tiering/extent_allocator.h"
#include "strata/tiering/internal/memory_mapping.h"
#include "strata/tiering/internal/unique_fd.h"
#include "strata/tiering/tier.h"

namespace strata::tiering {

enum class HugePageMode { kHugeTlb, kTransparent, kNone };

// What backs the arena (see above): a shareable memfd, or private anonymous memory; kAuto
// takes the memfd unless only anonymous memory gets hugepages.
enum class DramBacking { kAuto, kMemfd, kAnonymous };

// "hugetlb", "transparent" or "none".
std::string_view HugePageModeName(HugePageMode mode);

struct DramArenaOptions {
  // REQUIRES: > 0 and a multiple of granule_bytes.
  uint64_t capacity_bytes = 0;
  // The memfd's name (shows in /proc/<pid>/fd and /proc/<pid>/maps as "memfd:<name>").
  std::string name = "strata-dram";
  // Try explicit hugepages first (falls back silently if the kernel has none).
  bool try_hugetlb = true;
  // Fault all pages in at creation.
  bool populate = false;
  DramBacking backing = DramBacking::kMemfd;
  // Allocator shape (see ExtentAllocatorOptions).
  uint64_t granule_bytes = uint64_t{64} << 10;
  uint64_t max_extent_bytes = uint64_t{1} << 30;
  uint64_t large_extent_bytes = uint64_t{64} << 20;
};

class DramArena final : public CarvedTier {
 public:
  static absl::StatusOr<std::unique_ptr<DramArena>> Create(const DramArenaOptions& options);

  DramArena(const DramArena&) = delete;
  DramArena& operator=(const DramArena&) = delete;
  ~DramArena() override = default;

  HugePageMode huge_page_mode() const { return huge_page_mode_; }
  // True when a memfd backs the arena (fd() and OpenReadOnlyFd work); false for anonymous
  // memory.
  bool shareable() const { return fd_.valid(); }
  // The memfd backing the arena (-1 when not shareable); map [0, mapped_bytes()) MAP_SHARED,
  // PROT_READ to see the same bytes (a writable mapping is refused once write-sealed). For
  // the node's own use: give clients OpenReadOnlyFd().
  int fd() const { return fd_.get(); }
  // True when F_SEAL_FUTURE_WRITE holds (see above): the file may be given to clients.
  bool write_sealed() const { return write_sealed_; }
  // A new read-only descriptor of the same file (open("/proc/self/fd/<fd()>", O_RDONLY |
  // O_CLOEXEC)): what a same-host client gets. It can be mapped PROT_READ MAP_SHARED
  // only; write(), ftruncate() and fallocate() on it fail with EBADF or EINVAL.
  // FAILED_PRECONDITION when anonymous memory backs the arena.
  absl::StatusOr<internal::UniqueFd> OpenReadOnlyFd() const;
  std::byte* base() const { return mapping_.data(); }
  // Size of the file and mapping (capacity rounded up to a hugepage in kHugeTlb mode).
  uint64_t mapped_bytes() const { return mapping_.size(); }

  // The extent's bytes. REQUIRES: `extent` lies inside the arena (CHECK) and is held by
  // the caller.
  absl::Span<std::byte> Data(const Extent& extent) const;

  report::Tier kind() const override { return report::Tier::kDram; }
  absl::Status Write(const Extent& extent, uint64_t offset,
                     absl::Span<const std::byte> src) override;
  absl::Status Read(const Extent& extent, uint64_t offset,
                    absl::Span<std::byte> dst) const override;

 private:
  DramArena(internal::UniqueFd fd, internal::MemoryMapping mapping, HugePageMode mode,
            bool write_sealed, const ExtentAllocatorOptions& allocator_options);

  const internal::UniqueFd fd_;
  const internal::MemoryMapping mapping_;
  const HugePageMode huge_page_mode_;
  const bool write_sealed_;
};

}  // namespace strata::tiering
