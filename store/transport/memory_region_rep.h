// MemoryRegion::Rep: the UCX registration behind a MemoryRegion (private to store/transport).
#pragma once

#include <memory>

#include <ucp/api/ucp.h>

#include "store/transport/ucx/ucp_context.h"
#include "strata/store/transport/memory_region.h"

namespace strata::store::transport {

struct MemoryRegion::Rep {
  std::shared_ptr<ucx::UcpContext> context;  // keeps the context alive
  ucp_mem_h memh = nullptr;
};

}  // namespace strata::store::transport
