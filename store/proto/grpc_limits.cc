#include "strata/proto/grpc_limits.h"

#include "strata/proto/limits.h"

namespace strata::proto {

void ApplyMessageLimits(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
}

void ApplyMessageLimits(grpc::ChannelArguments* args) {
  args->SetMaxReceiveMessageSize(kMaxMessageBytes);
  args->SetMaxSendMessageSize(kMaxMessageBytes);
}

}  // namespace strata::proto
