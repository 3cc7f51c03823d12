// The one header that includes the code protoc and grpc_cpp_plugin generate
// from store/proto/strata/v1/*.proto (package strata.v1, C++ namespace
// strata::v1).
//
// Internal: only store/proto, store/rpc and the client library's .cc files
// include it, never a public header (client/include/strata/ shows no protobuf
// or gRPC type; pimpl hides them). The generated headers live in the build
// tree (<build>/store/proto/gen), exported by the strata::proto target as a
// SYSTEM include directory so their warnings never reach our code.
//
// Generated types are plain protobuf messages: not thread-safe for concurrent
// mutation, safe for concurrent const reads. Stubs (Store::Stub, Admin::Stub)
// are thread-safe.
#pragma once

#include "strata/v1/admin.grpc.pb.h"  // IWYU pragma: export
#include "strata/v1/admin.pb.h"       // IWYU pragma: export
#include "strata/v1/store.grpc.pb.h"  // IWYU pragma: export
#include "strata/v1/store.pb.h"       // IWYU pragma: export
#include "strata/v1/types.pb.h"       // IWYU pragma: export
