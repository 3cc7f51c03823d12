// absl::Status <-> grpc::Status: the one place a status crosses the control
// plane, in either direction.
//
// The node's adapter (store/rpc) answers every RPC with ToGrpcStatus(the
// engine's status); the client turns what its stub got back into an
// absl::Status with FromGrpcStatus. Together they carry a status across the
// wire unchanged:
//
//   * Codes map 1:1. absl::StatusCode and grpc::StatusCode both number the
//     codes of google.rpc.Code (OK = 0 .. UNAUTHENTICATED = 16); each code has
//     one meaning in strata (strata/base/status_macros.h, docs/api.md).
//   * The message is kept verbatim.
//   * A code outside 0..16 (a newer or broken peer) becomes UNKNOWN, and its
//     number is put in front of the message: "[code 42] ...".
//   * An OK status carries no message (neither side keeps one).
//   * Not carried: absl::Status payloads, grpc::Status error_details.
//
// Errors that gRPC itself produces arrive through FromGrpcStatus like any
// other: DEADLINE_EXCEEDED (the caller's deadline), UNAVAILABLE (connection
// refused or broken), RESOURCE_EXHAUSTED (message over kMaxMessageBytes),
// CANCELLED, UNIMPLEMENTED (a method the node does not have).
//
// Pure functions; thread-safe.
#pragma once

#include "absl/status/status.h"

#include "grpcpp/support/status.h"

namespace strata::proto {

// The grpc::Status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The absl::Status with the same code and message.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace strata::proto
