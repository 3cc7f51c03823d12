// Applies the wire's message-size limit (limits.h: kMaxMessageBytes) to a gRPC
// server or channel, so both ends of every strata.v1 call agree on it. With
// it, a message over the limit fails with RESOURCE_EXHAUSTED on the side that
// would send it (client channel) or receive it (server); strata code never
// sees it.
//
// Functions; not thread-safe on one builder or argument set (gRPC's own rule).
#pragma once

#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace strata::proto {

// Max receive and send message size = kMaxMessageBytes.
// REQUIRES: builder != nullptr.
void ApplyMessageLimits(grpc::ServerBuilder* builder);

// Max receive and send message size = kMaxMessageBytes.
// REQUIRES: args != nullptr.
void ApplyMessageLimits(grpc::ChannelArguments* args);

}  // namespace strata::proto
