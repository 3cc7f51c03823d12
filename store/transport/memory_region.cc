#include "strata/store/transport/memory_region.h"

#include <cstdint>

#include "glog/logging.h"

#include "store/transport/memory_region_rep.h"
#include "store/transport/ucx/ucs_status.h"

namespace strata::store::transport {

MemoryRegion::MemoryRegion(const uint8_t* data, size_t size, std::unique_ptr<Rep> rep)
    : data_(data), size_(size), rep_(std::move(rep)) {}

MemoryRegion::~MemoryRegion() {
  if (rep_->context == nullptr) return;  // a messenger without UCX registers nothing
  const ucs_status_t status = ucp_mem_unmap(rep_->context->get(), rep_->memh);
  LOG_IF(WARNING, status != UCS_OK) << ucx::UcsToStatus(status, "ucp_mem_unmap");
}

bool MemoryRegion::Contains(const void* p, size_t n) const {
  const auto begin = reinterpret_cast<uintptr_t>(data_);
  const auto q = reinterpret_cast<uintptr_t>(p);
  return q >= begin && n <= size_ && q - begin <= size_ - n;
}

}  // namespace strata::store::transport
