#include "store/transport/ucx/endpoint.h"

#include <cstring>

#include "glog/logging.h"

#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport::ucx {

absl::StatusOr<std::unique_ptr<Endpoint>> Endpoint::ConnectToWorker(UcpWorker& worker,
                                                                    std::string_view address,
                                                                    bool peer_error_mode,
                                                                    ErrorCallback on_error,
                                                                    void* arg) {
  ucp_ep_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = peer_error_mode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = on_error;
  params.err_handler.arg = arg;
  ucp_ep_h ep = nullptr;
  STRATA_RETURN_IF_ERROR(
      UcsToStatus(ucp_ep_create(worker.get(), &params, &ep), "ucp_ep_create(worker address)"));
  return std::unique_ptr<Endpoint>(new Endpoint(&worker, ep));
}

void* Endpoint::StartClose(bool force) {
  CHECK(ep_ != nullptr) << "endpoint closed twice";
  ucp_request_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(ep_, &param);
  ep_ = nullptr;
  if (UCS_PTR_IS_ERR(request)) {
    // The endpoint is released even when closing reports an error (e.g. the peer is gone).
    VLOG(1) << UcsToStatus(UCS_PTR_STATUS(request), "ucp_ep_close_nbx");
    return nullptr;
  }
  return request;
}

Endpoint::~Endpoint() {
  if (ep_ == nullptr) return;
  void* request = StartClose(/*force=*/true);
  if (request == nullptr) return;
  while (ucp_request_check_status(request) == UCS_INPROGRESS) worker_->Progress();
  ucp_request_free(request);
}

}  // namespace strata::store::transport::ucx
