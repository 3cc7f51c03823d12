// PrefaultForWrite: faults in every page of a shared, writable mapping up front, so that
// the data path takes no page faults later (DramArenaOptions::populate).
//
// It asks the kernel with madvise(MADV_POPULATE_WRITE) (Linux 5.14+), which reports a
// failure as an errno instead of a signal. Only where the kernel does not know that advice
// (EINVAL, confirmed by a zero-length probe) does it fall back to writing one zero byte per
// 4 KiB page, which on memory exhaustion ends in the OOM killer or SIGBUS; every other
// failure is returned, converted by ErrnoToStatus (strata/base/errno_status.h):
//   ENOMEM   RESOURCE_EXHAUSTED  no memory to back the pages
//   EFAULT   INVALID_ARGUMENT    a page cannot be backed (the fault would have raised
//                                SIGBUS: e.g. the mapping runs past the end of its file)
//   EINVAL   INVALID_ARGUMENT    advice known but the mapping is not writable/compatible
//   EINTR    UNAVAILABLE         a fatal signal is pending
// Thread-safe (it only touches the given range).
//
// REQUIRES: [data, data + size) is a page-aligned, PROT_WRITE, MAP_SHARED mapping of a
// freshly created file whose bytes are all zero (the fallback writes zeros).
#pragma once

#include <cstddef>

#include "absl/status/status.h"

namespace strata::tiering::internal {

absl::Status PrefaultForWrite(std::byte* data, size_t size);

}  // namespace strata::tiering::internal
