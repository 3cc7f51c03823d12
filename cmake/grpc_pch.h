// The precompiled header of the gRPC-heavy libraries (store/proto's converters,
// store/rpc, client/lib): gRPC and strata's generated messages and services, which take
// most of those files' compile time. Headers from outside the project, and the generated
// ones, which change only with the .proto files.
#pragma once

#include "grpcpp/grpcpp.h"
#include "strata/v1/admin.grpc.pb.h"
#include "strata/v1/store.grpc.pb.h"
