// The contract across a real gRPC hop (loopback TCP, port 0): a status made by
// the node's side with ToGrpcStatus reaches the client through FromGrpcStatus
// with its code and message; gRPC's own failures (deadline, message size)
// arrive with the codes docs/api.md promises.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/grpc_limits.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/protocol_internal.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"

namespace strata::proto {
namespace {

// A Store that converts what it gets the way the real adapter will, and knows
// no namespace.
class FakeStore final : public v1::Store::Service {
 public:
  grpc::Status Match(grpc::ServerContext*, const v1::MatchRequest* request,
                     v1::MatchResponse*) override {
    return ToGrpcStatus(Handle(*request));
  }
  grpc::Status BeginPut(grpc::ServerContext*, const v1::BeginPutRequest* request,
                        v1::BeginPutResponse*) override {
    return ToGrpcStatus(absl::ResourceExhaustedError("DRAM tier full"));
  }
  grpc::Status Health(grpc::ServerContext*, const v1::HealthRequest*,
                      v1::HealthResponse* response) override {
    response->set_state(v1::SERVING_STATE_SERVING);
    response->set_version("test");
    return grpc::Status::OK;
  }

 private:
  static absl::Status Handle(const v1::MatchRequest& request) {
    const auto ns = NamespaceFromProto(request.ns(), "ns");
    if (!ns.ok()) return ns.status();
    const auto tokens = TokensFromProto(request.tokens(), "tokens");
    if (!tokens.ok()) return tokens.status();
    return absl::NotFoundError("namespace not known to this node");
  }
};

class WireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    ApplyMessageLimits(&builder);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // A client channel with strata's limits, or gRPC's defaults.
  std::unique_ptr<v1::Store::Stub> Stub(bool with_limits = true) {
    grpc::ChannelArguments args;
    if (with_limits) ApplyMessageLimits(&args);
    // gRPC's defaults cap what a client sends at nothing: -1 = unlimited.
    if (!with_limits) args.SetMaxSendMessageSize(-1);
    return v1::Store::NewStub(grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port_),
                                                        grpc::InsecureChannelCredentials(), args));
  }

  static void SetDeadline(grpc::ClientContext* context, std::chrono::milliseconds ms) {
    context->set_deadline(std::chrono::system_clock::now() + ms);
  }

  FakeStore service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

v1::MatchRequest ValidMatch() {
  v1::MatchRequest request;
  v1::Namespace* ns = request.mutable_ns();
  ns->set_tenant("acme");
  ns->set_model("m");
  v1::KvLayout* l = ns->mutable_layout();
  l->set_num_layers(2);
  l->set_num_kv_heads(1);
  l->set_head_dim(8);
  l->set_dtype(v1::DTYPE_FLOAT16);
  l->set_page_tokens(4);
  l->set_format(v1::KV_FORMAT_KEY_VALUE);
  l->set_tp_world(1);
  TokensToProto(std::vector<radix::TokenId>{0, 1, 2, 3, 4, 5, 6, 7}, request.mutable_tokens());
  return request;
}

TEST_F(WireTest, HealthAnswers) {
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::HealthResponse response;
  ASSERT_OK(FromGrpcStatus(Stub()->Health(&context, v1::HealthRequest(), &response)));
  EXPECT_EQ(response.state(), v1::SERVING_STATE_SERVING);
}

TEST_F(WireTest, EngineStatusCrossesWithCodeAndMessage) {
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::MatchResponse response;
  const absl::Status status = FromGrpcStatus(Stub()->Match(&context, ValidMatch(), &response));
  EXPECT_EQ(status, absl::NotFoundError("namespace not known to this node"));

  grpc::ClientContext put_context;
  SetDeadline(&put_context, std::chrono::seconds(10));
  v1::BeginPutResponse put_response;
  EXPECT_EQ(FromGrpcStatus(Stub()->BeginPut(&put_context, v1::BeginPutRequest(), &put_response)),
            absl::ResourceExhaustedError("DRAM tier full"));
}

TEST_F(WireTest, MalformedRequestGetsInvalidArgumentNamingTheField) {
  v1::MatchRequest request = ValidMatch();
  request.mutable_ns()->mutable_layout()->set_dtype(static_cast<v1::DType>(42));
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::MatchResponse response;
  const absl::Status status = FromGrpcStatus(Stub()->Match(&context, request, &response));
  EXPECT_EQ(status, absl::InvalidArgumentError("ns.layout.dtype: unknown value 42"));
}

TEST_F(WireTest, RaggedTokenBytesAreInvalidArgument) {
  v1::MatchRequest request = ValidMatch();
  request.mutable_tokens()->push_back('\x01');  // 33 bytes: 8 ids and a stray byte
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::MatchResponse response;
  const absl::Status status = FromGrpcStatus(Stub()->Match(&context, request, &response));
  EXPECT_EQ(status, absl::InvalidArgumentError(
                        "tokens: 33 bytes is not a whole number of 4-byte token ids"));
}

TEST_F(WireTest, TooManyTokensUnderTheSizeLimitIsInvalidArgument) {
  v1::MatchRequest request = ValidMatch();
  request.mutable_tokens()->assign((kMaxTokensPerRequest + 1) * kTokenIdBytes, '\x01');
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(30));
  v1::MatchResponse response;
  const absl::Status status = FromGrpcStatus(Stub()->Match(&context, request, &response));
  EXPECT_CODE(status, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tokens: 2097153 entries exceed the limit of 2097152");
}

TEST_F(WireTest, MessageOverTheLimitIsResourceExhausted) {
  // 9M tokens of 4 bytes: 36 MB > kMaxMessageBytes (32 MiB).
  v1::MatchRequest request = ValidMatch();
  request.mutable_tokens()->assign(9'000'000 * kTokenIdBytes, '\xff');
  ASSERT_GT(request.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));

  // A client with strata's limits refuses to send it.
  {
    grpc::ClientContext context;
    SetDeadline(&context, std::chrono::seconds(30));
    v1::MatchResponse response;
    EXPECT_CODE(FromGrpcStatus(Stub(/*with_limits=*/true)->Match(&context, request, &response)),
                absl::StatusCode::kResourceExhausted);
  }
  // A client without them sends it, and the node refuses to receive it.
  {
    grpc::ClientContext context;
    SetDeadline(&context, std::chrono::seconds(30));
    v1::MatchResponse response;
    EXPECT_CODE(FromGrpcStatus(Stub(/*with_limits=*/false)->Match(&context, request, &response)),
                absl::StatusCode::kResourceExhausted);
  }
}

TEST_F(WireTest, PassedDeadlineIsDeadlineExceeded) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() - std::chrono::milliseconds(1));
  v1::HealthResponse response;
  EXPECT_CODE(FromGrpcStatus(Stub()->Health(&context, v1::HealthRequest(), &response)),
              absl::StatusCode::kDeadlineExceeded);
}

TEST_F(WireTest, UnimplementedMethodIsUnimplemented) {
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::ReleaseResponse response;
  EXPECT_CODE(FromGrpcStatus(Stub()->Release(&context, v1::ReleaseRequest(), &response)),
              absl::StatusCode::kUnimplemented);
}

TEST_F(WireTest, NoNodeIsUnavailable) {
  std::unique_ptr<v1::Store::Stub> stub = Stub();
  server_->Shutdown();
  server_.reset();  // the port is closed now
  grpc::ClientContext context;
  SetDeadline(&context, std::chrono::seconds(10));
  v1::HealthResponse response;
  EXPECT_CODE(FromGrpcStatus(stub->Health(&context, v1::HealthRequest(), &response)),
              absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::proto
