// UcpContext: owns one ucp_context_h (ucp_init ... ucp_cleanup).
//
// Private to store/transport. The context is created with the active-message and wakeup
// features. Its configuration is read from the environment (UCX_* variables, so UCX_TLS
// picks tcp, shm/cma, rc, ...); a non-empty `transports` overrides UCX_TLS for this context
// only (ucp_config_modify("TLS", ...)), which lets one process host contexts on different
// transports (tests, benchmarks).
//
// Ownership: shared (std::shared_ptr) by the Messenger that made it, its worker, and every
// MemoryRegion mapped in it, so the context outlives all of them. The context is created
// with mt_workers_shared so that ucp_mem_map/ucp_mem_unmap may run on any thread while the
// progress thread drives the worker.
//
// Errors: Create returns UcsToStatus(...) of ucp_config_read / ucp_config_modify / ucp_init
// (INVALID_ARGUMENT for an unknown transport name, UNAVAILABLE when no transport is usable).
#pragma once

#include <memory>
#include <string>

#include <ucp/api/ucp.h>

#include "absl/status/statusor.h"

namespace strata::store::transport::ucx {

struct UcpContextOptions {
  // UCX_TLS syntax ("tcp", "shm,cma", "rc,sm"); empty keeps UCX_TLS / UCX's default.
  std::string transports;
  // Name shown in UCX's logs.
  std::string name = "strata";
};

class UcpContext {
 public:
  static absl::StatusOr<std::shared_ptr<UcpContext>> Create(const UcpContextOptions& options);
  ~UcpContext();
  UcpContext(const UcpContext&) = delete;
  UcpContext& operator=(const UcpContext&) = delete;

  ucp_context_h get() const { return context_; }
  // True when the context has a shared-memory transport (sysv or posix) and CMA among its
  // resources: messages over shared memory, rendezvous payloads pulled with CMA.
  bool has_shared_memory_and_cma() const { return has_shared_memory_and_cma_; }
  // Whether this UCX build handles CUDA device memory (ucp_context_query's memory types).
  bool cuda_memory() const { return cuda_memory_; }

 private:
  explicit UcpContext(ucp_context_h context) : context_(context) {}
  ucp_context_h context_;
  bool has_shared_memory_and_cma_ = false;
  bool cuda_memory_ = false;
};

}  // namespace strata::store::transport::ucx
