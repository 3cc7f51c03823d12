#include "store/transport/ucx/ucp_worker.h"

#include <cstring>
#include <utility>

#include "glog/logging.h"

#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport::ucx {

absl::StatusOr<std::unique_ptr<UcpWorker>> UcpWorker::Create(std::shared_ptr<UcpContext> context) {
  ucp_worker_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h raw = nullptr;
  STRATA_RETURN_IF_ERROR(
      UcsToStatus(ucp_worker_create(context->get(), &params, &raw), "ucp_worker_create"));
  std::unique_ptr<UcpWorker> worker(new UcpWorker(std::move(context), raw));

  ucp_worker_attr_t attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  STRATA_RETURN_IF_ERROR(UcsToStatus(ucp_worker_query(raw, &attr), "ucp_worker_query"));
  worker->max_am_header_ = attr.max_am_header;
  STRATA_RETURN_IF_ERROR(
      UcsToStatus(ucp_worker_get_efd(raw, &worker->event_fd_), "ucp_worker_get_efd"));
  ucp_address_t* address = nullptr;
  size_t address_length = 0;
  STRATA_RETURN_IF_ERROR(UcsToStatus(ucp_worker_get_address(raw, &address, &address_length),
                                     "ucp_worker_get_address"));
  worker->address_.assign(reinterpret_cast<const char*>(address), address_length);
  ucp_worker_release_address(raw, address);
  return worker;
}

UcpWorker::~UcpWorker() { ucp_worker_destroy(worker_); }

bool UcpWorker::Arm() {
  const ucs_status_t status = ucp_worker_arm(worker_);
  if (status == UCS_ERR_BUSY) return false;
  CHECK_EQ(status, UCS_OK) << UcsToStatus(status, "ucp_worker_arm");
  return true;
}

}  // namespace strata::store::transport::ucx
