// CallStatus: what a service method of the node answers for the engine's status.
//
// Logs a failure (INTERNAL, the node's own fault, at ERROR; every other code, the caller's
// business, at verbosity 1 only) as "<service>.<method>: <status>", then maps the status
// to gRPC's (proto::ToGrpcStatus: same code, same message). OK maps to OK, unlogged.
// Thread-safe.
#pragma once

#include "absl/status/status.h"

#include "strata/proto/protocol_internal.h"

namespace strata::store::rpc {

grpc::Status CallStatus(const char* service, const char* method, const absl::Status& status);

}  // namespace strata::store::rpc
