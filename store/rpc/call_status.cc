#include "strata/store/rpc/call_status.h"

#include "glog/logging.h"

#include "strata/proto/status_convert.h"

namespace strata::store::rpc {

grpc::Status CallStatus(const char* service, const char* method, const absl::Status& status) {
  if (!status.ok()) {
    if (absl::IsInternal(status)) {
      LOG(ERROR) << service << "." << method << ": " << status;
    } else {
      VLOG(1) << service << "." << method << ": " << status;
    }
  }
  return proto::ToGrpcStatus(status);
}

}  // namespace strata::store::rpc
