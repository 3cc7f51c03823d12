// Authentication end to end (issue 12, item 8): a real strata-node with a tenants file.
// Every method of strata.v1.Store and strata.v1.Admin — found in the services' descriptors,
// so a method added later is covered too — refuses calls without a tenant's token; a worker
// cannot call Admin; libstrata with a token writes and reads over the real data plane, whose
// connections need a credential from Store.OpenDataPlane; a forged or absent credential gets
// nothing from the data plane; the CLI takes its token from a file; a node that would be
// reachable from other hosts without authentication refuses to start.
#include <algorithm>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/proto/protocol_internal.h"
#include "strata/proto/status_convert.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/store/http/http_get.h"
#include "strata/store/transport/messenger.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_auth_test {

using strata::testing::NodeProcess;

namespace {

const std::string kWorkerToken = "worker-0123456789abcdef0123456789abcdef";
const std::string kAdminToken = "admin-fedcba9876543210fedcba9876543210";
const std::string kGlobexToken = "globex-00112233445566778899aabbccddeeff";

std::string TenantsFile() {
  return absl::StrCat(R"({"tenants": [
    {"name": "acme", "role": "worker", "namespaces": ["acme", "shared-prompts"],
     "token_sha256": ")",
                      store::auth::HashHex(store::auth::Sha256(kWorkerToken)), R"("},
    {"name": "globex", "role": "worker", "namespaces": ["globex", "shared-prompts"],
     "quota": {"dram": "256KiB"}, "token_sha256": ")",
                      store::auth::HashHex(store::auth::Sha256(kGlobexToken)), R"("},
    {"name": "ops", "role": "admin", "token_sha256": ")",
                      store::auth::HashHex(store::auth::Sha256(kAdminToken)), R"("}]})");
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A unary call of `method` ("/strata.v1.Store/Match") with an empty request and the given
// authorization metadata values (none: no entry).
absl::Status CallWith(grpc::GenericStub& stub, const std::string& method,
                      const std::vector<std::string>& authorization) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  for (const std::string& value : authorization) context.AddMetadata("authorization", value);
  // An empty message (an uninitialized ByteBuffer is no message at all to gRPC).
  grpc::Slice empty{std::string()};
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return proto::FromGrpcStatus(done.get_future().get());
}

// "/strata.v1.Store/Match", ... for every method of `service` ("strata.v1.Store").
std::vector<std::string> MethodsOf(const std::string& service) {
  const google::protobuf::ServiceDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
  EXPECT_NE(descriptor, nullptr) << service;
  std::vector<std::string> methods;
  for (int i = 0; descriptor != nullptr && i < descriptor->method_count(); ++i) {
    methods.push_back(absl::StrCat("/", service, "/", descriptor->method(i)->name()));
  }
  return methods;
}

class NodeAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<strata::testing::ScopedTempDir>("auth-test");
    WriteFile(dir_->path() + "/tenants.json", TenantsFile());
    absl::StatusOr<std::unique_ptr<NodeProcess>> node =
        StartSecuredNode({"--tenants_file=" + dir_->path() + "/tenants.json"});
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = *std::move(node);
  }
  static void TearDownTestSuite() {
    node_.reset();
    dir_.reset();
  }

  static std::unique_ptr<Client> ClientWith(const std::string& token) {
    ClientOptions options = ClientOptionsFor(node_->grpc_address(), "tcp");
    options.token = token;
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  static uint64_t RefusedConnections() {
    absl::StatusOr<store::http::HttpResponse> metrics =
        store::http::HttpGet(node_->http_address(), "/metrics");
    if (!metrics.ok()) return UINT64_MAX;
    const std::string name = "strata_dataplane_connections_refused_total ";
    const size_t at = metrics->body.find("\n" + name);
    if (at == std::string::npos) return UINT64_MAX;
    return std::stoull(metrics->body.substr(at + 1 + name.size()));
  }

  static inline std::unique_ptr<strata::testing::ScopedTempDir> dir_;
  static inline std::unique_ptr<NodeProcess> node_;
};

TEST_F(NodeAuthTest, EveryCallWithoutATenantsTokenIsUnauthenticated) {
  std::vector<std::string> methods = MethodsOf("strata.v1.Store");
  const std::vector<std::string> admin = MethodsOf("strata.v1.Admin");
  methods.insert(methods.end(), admin.begin(), admin.end());
  ASSERT_GE(methods.size(), 20u);
  grpc::GenericStub stub(
      grpc::CreateChannel(node_->grpc_address(), grpc::InsecureChannelCredentials()));
  const std::vector<std::vector<std::string>> refused = {
      {},                                                    // no token
      {"Bearer not-a-tenant-token-0123456789abcdef"},        // no tenant's
      {"Bearer " + kWorkerToken.substr(0, 20)},              // a prefix of one
      {"Basic " + kWorkerToken},                             // another scheme
      {"Bearer " + kWorkerToken, "Bearer " + kWorkerToken},  // two entries
      {kWorkerToken},                                        // no scheme
  };
  for (const std::string& method : methods) {
    for (const std::vector<std::string>& authorization : refused) {
      const absl::Status status = CallWith(stub, method, authorization);
      EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated)
          << method << " with " << authorization.size() << " authorization entries: " << status;
    }
    // With a token, the call gets past authentication (an empty request may still be
    // malformed for the call itself): a worker's Admin call is PERMISSION_DENIED.
    const bool is_admin = absl::StartsWith(method, "/strata.v1.Admin/");
    const absl::Status as_worker = CallWith(stub, method, {"Bearer " + kWorkerToken});
    if (is_admin) {
      EXPECT_EQ(as_worker.code(), absl::StatusCode::kPermissionDenied) << method << as_worker;
      EXPECT_THAT(std::string(as_worker.message()), ::testing::HasSubstr("admin role"));
    } else {
      EXPECT_NE(as_worker.code(), absl::StatusCode::kUnauthenticated) << method << as_worker;
      EXPECT_NE(as_worker.code(), absl::StatusCode::kPermissionDenied) << method << as_worker;
    }
  }
  EXPECT_OK(CallWith(stub, "/strata.v1.Admin/Tiers", {"Bearer " + kAdminToken}));
  EXPECT_OK(CallWith(stub, "/strata.v1.Store/Health", {"bearer " + kAdminToken}));
}

TEST_F(NodeAuthTest, ATenantWritesAndReadsOverTheDataPlaneAndNoTokenGetsNothing) {
  const Namespace ns = ClientTestNamespace("acme");
  const std::vector<TokenId> tokens = RandomTokens(7, 4 * ClientTestLayout().page_tokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 4);

  std::unique_ptr<Client> nobody = ClientWith("");
  ASSERT_NE(nobody, nullptr);
  EXPECT_CODE(nobody->Write(ns, std::nullopt, tokens, Source(kv)).status(),
              absl::StatusCode::kUnauthenticated);
  EXPECT_CODE(nobody->Match(ns, tokens).status(), absl::StatusCode::kUnauthenticated);
  std::unique_ptr<Client> forger = ClientWith("Zm9yZ2VkLXRva2VuLTAxMjM0NTY3ODk");
  ASSERT_NE(forger, nullptr);
  EXPECT_CODE(forger->Write(ns, std::nullopt, tokens, Source(kv)).status(),
              absl::StatusCode::kUnauthenticated);

  std::unique_ptr<Client> acme = ClientWith(kWorkerToken);
  ASSERT_NE(acme, nullptr);
  ASSERT_OK_AND_ASSIGN(const WriteResult written,
                       acme->Write(ns, std::nullopt, tokens, Source(kv)));
  EXPECT_FALSE(written.existed);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, acme->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 4u);
  std::vector<std::byte> read(kv.size());
  ASSERT_OK(acme->Read(ns, match.segments, 4, Host(read)));
  EXPECT_TRUE(read == kv);
  // Admin calls need the admin role.
  EXPECT_CODE(acme->Tiers().status(), absl::StatusCode::kPermissionDenied);
  std::unique_ptr<Client> ops = ClientWith(kAdminToken);
  ASSERT_NE(ops, nullptr);
  EXPECT_OK(ops->Tiers().status());
}

// Issue 12, item 9: globex cannot see, read, pin or delete acme's blobs through any call —
// each answers as for a key or namespace that does not exist — nor write into acme's
// namespace; both read a namespace they share.
TEST_F(NodeAuthTest, ATenantSeesNothingOfAnothersAndBothReadWhatTheyShare) {
  const Namespace acme_ns = ClientTestNamespace("acme");
  const Namespace shared_ns = ClientTestNamespace("shared-prompts");
  const std::vector<TokenId> tokens = RandomTokens(11, 3 * ClientTestLayout().page_tokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 3);
  std::unique_ptr<Client> acme = ClientWith(kWorkerToken);
  std::unique_ptr<Client> globex = ClientWith(kGlobexToken);
  ASSERT_NE(acme, nullptr);
  ASSERT_NE(globex, nullptr);
  ASSERT_OK_AND_ASSIGN(const WriteResult mine,
                       acme->Write(acme_ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(const WriteResult ours,
                       acme->Write(shared_ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(const MatchResult acme_match, acme->Match(acme_ns, tokens));
  ASSERT_EQ(acme_match.matched_pages, 3u);

  // Match: as for a namespace this node never saw.
  const absl::Status matched = globex->Match(acme_ns, tokens).status();
  EXPECT_EQ(matched.code(), absl::StatusCode::kNotFound) << matched;
  EXPECT_THAT(std::string(matched.message()), ::testing::HasSubstr("is not known to this node"));
  // Read over the data plane with acme's own segments: a miss.
  std::vector<std::byte> read(kv.size());
  const absl::Status stolen = globex->Read(acme_ns, acme_match.segments, 3, Host(read));
  EXPECT_EQ(stolen.code(), absl::StatusCode::kNotFound) << stolen;
  EXPECT_TRUE(std::all_of(read.begin(), read.end(), [](std::byte b) { return b == std::byte{0}; }));
  // Key calls: as for a key not in the index (the message names the key either way).
  const std::string absent =
      absl::StrCat("blob ", mine.key.ToHex(), " is not in this node's index");
  EXPECT_EQ(globex->Stat(mine.key, false).status(), absl::NotFoundError(absent));
  EXPECT_EQ(globex->Pin(mine.key), absl::NotFoundError(absent));
  EXPECT_EQ(globex->Delete(mine.key).status(), absl::NotFoundError(absent));
  EXPECT_EQ(globex->RequestRebuild(mine.key, true).status(), absl::NotFoundError(absent));
  // Writing into acme's namespace is refused.
  EXPECT_CODE(
      globex->Write(acme_ns, std::nullopt, RandomTokens(12, tokens.size()), Source(kv)).status(),
      absl::StatusCode::kPermissionDenied);
  // List shows globex only the shared blob.
  ASSERT_OK_AND_ASSIGN(const ListResult listed, globex->List(ListOptions{}));
  ASSERT_EQ(listed.blobs.size(), 1u);
  EXPECT_EQ(listed.blobs[0].key, ours.key);
  // acme's blob is untouched; both read the shared one.
  ASSERT_OK_AND_ASSIGN(const BlobInfo info, acme->Stat(mine.key, false));
  EXPECT_FALSE(info.pinned);
  for (Client* client : {acme.get(), globex.get()}) {
    ASSERT_OK_AND_ASSIGN(const MatchResult match, client->Match(shared_ns, tokens));
    ASSERT_EQ(match.matched_pages, 3u);
    std::fill(read.begin(), read.end(), std::byte{0});
    ASSERT_OK(client->Read(shared_ns, match.segments, 3, Host(read)));
    EXPECT_TRUE(read == kv);
  }
}

// Issue 12, item 9: globex's DRAM quota (256 KiB: four 64 KiB extents of 3-page blobs):
// its later blobs evict its own older ones, never acme's; the admin sees each label
// against its quota in Tiers and in /metrics.
TEST_F(NodeAuthTest, ATenantAtItsQuotaEvictsItsOwnBlobsAndTheAdminSeesIt) {
  std::unique_ptr<Client> acme = ClientWith(kWorkerToken);
  std::unique_ptr<Client> globex = ClientWith(kGlobexToken);
  std::unique_ptr<Client> ops = ClientWith(kAdminToken);
  ASSERT_TRUE(acme != nullptr && globex != nullptr && ops != nullptr);
  const Namespace acme_ns = ClientTestNamespace("acme");
  const Namespace globex_ns = ClientTestNamespace("globex");
  const uint32_t page_tokens = ClientTestLayout().page_tokens;
  const std::vector<TokenId> kept = RandomTokens(40, 3 * page_tokens);
  const std::vector<std::byte> kept_kv = ModelBytes(kept, 0, 3);
  ASSERT_OK(acme->Write(acme_ns, std::nullopt, kept, Source(kept_kv)).status());
  for (uint64_t i = 0; i < 8; ++i) {
    const std::vector<TokenId> tokens = RandomTokens(50 + i, 3 * page_tokens);
    ASSERT_OK(
        globex->Write(globex_ns, std::nullopt, tokens, Source(ModelBytes(tokens, 0, 3))).status())
        << "blob " << i;
  }
  ASSERT_OK_AND_ASSIGN(const NodeTiers tiers, ops->Tiers());
  const report::TenantUsage* g = nullptr;
  const report::TenantUsage* a = nullptr;
  for (const report::TenantUsage& u : tiers.tenants) {
    if (u.tenant == "globex") g = &u;
    if (u.tenant == "acme") a = &u;
  }
  ASSERT_TRUE(g != nullptr && a != nullptr);
  EXPECT_EQ(g->dram_quota_bytes, 256u << 10);
  EXPECT_LE(g->dram_charged_bytes, 256u << 10);
  EXPECT_GE(g->quota_evictions, 4u);  // 8 x 64 KiB written, at most 4 stay in DRAM
  EXPECT_EQ(a->dram_quota_bytes, 0u);
  EXPECT_EQ(a->quota_evictions, 0u);
  EXPECT_GE(a->dram_bytes, 64u << 10);
  // acme's blob, older than all of globex's, is still whole in DRAM.
  ASSERT_OK_AND_ASSIGN(const MatchResult match, acme->Match(acme_ns, kept));
  ASSERT_EQ(match.matched_pages, 3u);
  std::vector<std::byte> read(kept_kv.size());
  ASSERT_OK(acme->Read(acme_ns, match.segments, 3, Host(read)));
  EXPECT_TRUE(read == kept_kv);
  ASSERT_OK_AND_ASSIGN(const store::http::HttpResponse metrics,
                       store::http::HttpGet(node_->http_address(), "/metrics"));
  EXPECT_THAT(
      metrics.body,
      ::testing::HasSubstr("strata_tenant_quota_bytes{tenant=\"globex\",tier=\"dram\"} 262144"));
  EXPECT_THAT(metrics.body,
              ::testing::HasSubstr("strata_tenant_quota_evictions_total{tenant=\"globex\"}"));
}

TEST_F(NodeAuthTest, TheDataPlaneAdmitsOnlyACredentialTheNodeIssued) {
  store::transport::MessengerOptions options;
  options.name = "auth-test";
  options.transports = "tcp";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::transport::Messenger> messenger,
                       store::transport::Messenger::Create(std::move(options)));
  const uint64_t refused_before = RefusedConnections();
  // None; forged; a real one's bytes altered.
  v1::OpenDataPlaneResponse opened;
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + kWorkerToken);
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    ASSERT_OK(proto::FromGrpcStatus(
        node_->StoreStub()->OpenDataPlane(&context, v1::OpenDataPlaneRequest(), &opened)));
  }
  EXPECT_EQ(opened.data_plane().ucx_address(), node_->data_plane_address());
  EXPECT_GT(opened.expires_in_ms(), 0u);
  ASSERT_FALSE(opened.credential().empty());
  std::string altered = opened.credential();
  altered[altered.size() / 2] ^= 1;
  for (const std::string& credential : {std::string(), std::string("forged credential"), altered}) {
    const absl::StatusOr<store::transport::PeerId> peer =
        messenger->Connect(node_->data_plane_address(), absl::Seconds(10), credential);
    EXPECT_EQ(peer.status().code(), absl::StatusCode::kUnauthenticated) << peer.status();
  }
  EXPECT_EQ(RefusedConnections(), refused_before + 3);
  // The credential the node issued connects.
  EXPECT_OK(
      messenger->Connect(node_->data_plane_address(), absl::Seconds(10), opened.credential()));
  EXPECT_EQ(RefusedConnections(), refused_before + 3);
}

TEST_F(NodeAuthTest, TheCliTakesItsTokenFromAFile) {
  WriteFile(dir_->path() + "/admin.token", kAdminToken + "\n");
  WriteFile(dir_->path() + "/worker.token", kWorkerToken);
  auto run = [](const std::vector<std::string>& args) {
    strata::testing::ProgramOptions options;
    options.unset_env = {"STRATA_NODE", "STRATA_TOKEN"};
    absl::StatusOr<strata::testing::ProgramResult> result =
        strata::testing::RunProgram(STRATA_CLI_BINARY, args, options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : strata::testing::ProgramResult();
  };
  const std::string node = "--node=" + node_->grpc_address();
  const auto as_admin = run({node, "--token-file=" + dir_->path() + "/admin.token", "tiers"});
  EXPECT_EQ(as_admin.exit_code, 0) << as_admin.err;
  const auto as_worker = run({node, "--token-file=" + dir_->path() + "/worker.token", "tiers"});
  EXPECT_EQ(as_worker.exit_code, 1) << as_worker.err;
  EXPECT_THAT(as_worker.err, ::testing::HasSubstr("PERMISSION_DENIED"));
  const auto without = run({node, "tiers"});
  EXPECT_EQ(without.exit_code, 1) << without.err;
  EXPECT_THAT(without.err, ::testing::HasSubstr("UNAUTHENTICATED"));
  const auto missing = run({node, "--token-file=" + dir_->path() + "/none.token", "tiers"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST(NodeExposureTest, ANodeThatOtherHostsCouldReachWithoutAuthenticationRefusesToStart) {
  // Refused before anything is bound (no server listens on a non-loopback address here).
  for (const std::string& flag :
       {std::string("--grpc_listen=0.0.0.0:0"), std::string("--dataplane_listen=0.0.0.0:0"),
        std::string("--http_listen=0.0.0.0:0")}) {
    const strata::testing::ProgramResult result = NodeProcess::RunToExit(
        {flag, "--dram_bytes=64MiB", "--ssd_bytes=0", "--data_dir=/nonexistent/never-created"});
    EXPECT_NE(result.exit_code, 0) << flag;
    EXPECT_THAT(result.out + result.err, ::testing::HasSubstr("--insecure")) << flag;
  }
  // A malformed tenants file stops the node with the entry named.
  const strata::testing::ScopedTempDir dir("auth-bad");
  WriteFile(dir.path() + "/tenants.json", R"({"tenants":[{"name":"a","role":"root"}]})");
  const strata::testing::ProgramResult bad = NodeProcess::RunToExit(
      {"--tenants_file=" + dir.path() + "/tenants.json", "--grpc_listen=127.0.0.1:0",
       "--dataplane_listen=127.0.0.1:0", "--http_listen=", "--dram_bytes=64MiB", "--ssd_bytes=0",
       "--data_dir=" + dir.path() + "/data"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.out + bad.err, ::testing::HasSubstr("tenants[0]: role must be"));
}

}  // namespace
}  // namespace strata::integration::node_auth_test
