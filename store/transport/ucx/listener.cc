#include "store/transport/ucx/listener.h"

#include <cstring>

#include "glog/logging.h"

#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport::ucx {

absl::StatusOr<std::unique_ptr<Listener>> Listener::Create(UcpWorker& worker,
                                                           const SocketAddress& address,
                                                           RequestCallback on_request, void* arg) {
  ucp_listener_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  params.sockaddr.addr = address.get();
  params.sockaddr.addrlen = address.length();
  params.conn_handler.cb = on_request;
  params.conn_handler.arg = arg;
  ucp_listener_h listener = nullptr;
  STRATA_RETURN_IF_ERROR(UcsToStatus(ucp_listener_create(worker.get(), &params, &listener),
                                     "ucp_listener_create(" + address.ToString() + ")"));

  ucp_listener_attr_t attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  const ucs_status_t status = ucp_listener_query(listener, &attr);
  if (status != UCS_OK) {
    ucp_listener_destroy(listener);
    return UcsToStatus(status, "ucp_listener_query");
  }
  SocketAddress bound = SocketAddress::FromSockaddr(
      reinterpret_cast<const sockaddr*>(&attr.sockaddr), sizeof(attr.sockaddr));
  return std::unique_ptr<Listener>(new Listener(listener, std::move(bound)));
}

Listener::~Listener() { ucp_listener_destroy(listener_); }

void Listener::Reject(ucp_conn_request_h request) {
  const ucs_status_t status = ucp_listener_reject(listener_, request);
  LOG_IF(WARNING, status != UCS_OK) << UcsToStatus(status, "ucp_listener_reject");
}

}  // namespace strata::store::transport::ucx
