// TLS end to end (issue 12, item 10): a real strata-node serving gRPC over TLS with
// client certificates required (mutual TLS) and a tenants file. Certificates are made at
// test time with the openssl program: a CA, a server certificate for 127.0.0.1, a client
// certificate, and a second CA nobody trusts. libstrata and the CLI with the right CA,
// certificate and token write and read; a plain-text client, one trusting another CA and
// one without a certificate get nothing.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_tls_test {

using strata::testing::NodeProcess;

namespace {

const std::string kToken = "tls-tenant-0123456789abcdef0123456789ab";

// Runs openssl with `args` in `dir`; true on exit 0.
bool OpenSsl(const std::string& dir, std::vector<std::string> args) {
  for (std::string& arg : args) {
    if (arg.rfind("@", 0) == 0) arg = dir + "/" + arg.substr(1);  // @name: a file in dir
  }
  absl::StatusOr<strata::testing::ProgramResult> result =
      strata::testing::RunProgram("/usr/bin/openssl", args);
  EXPECT_TRUE(result.ok() && result->exit_code == 0)
      << "openssl " << args[0] << ": " << (result.ok() ? result->err : result.status().ToString());
  return result.ok() && result->exit_code == 0;
}

// A CA (name.pem, name.key) in `dir`.
bool MakeCa(const std::string& dir, const std::string& name) {
  return OpenSsl(dir, {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                       "-nodes", "-keyout", "@" + name + ".key", "-out", "@" + name + ".pem",
                       "-days", "2", "-subj", "/CN=" + name});
}

// A certificate (name.pem, name.key) signed by CA `ca`, with extensions `ext`.
bool MakeCert(const std::string& dir, const std::string& ca, const std::string& name,
              const std::string& ext) {
  std::ofstream(dir + "/" + name + ".ext") << ext << "\n";
  return OpenSsl(dir, {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                       "-keyout", "@" + name + ".key", "-out", "@" + name + ".csr", "-subj",
                       "/CN=" + name}) &&
         OpenSsl(dir, {"x509", "-req", "-in", "@" + name + ".csr", "-CA", "@" + ca + ".pem",
                       "-CAkey", "@" + ca + ".key", "-CAcreateserial", "-out", "@" + name + ".pem",
                       "-days", "2", "-extfile", "@" + name + ".ext"});
}

class NodeTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<strata::testing::ScopedTempDir>("tls-test");
    const std::string& d = dir_->path();
    ASSERT_TRUE(MakeCa(d, "ca"));
    ASSERT_TRUE(MakeCa(d, "other-ca"));
    ASSERT_TRUE(MakeCert(d, "ca", "server",
                         "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                         "extendedKeyUsage=serverAuth"));
    ASSERT_TRUE(MakeCert(d, "ca", "client", "extendedKeyUsage=clientAuth"));
    ASSERT_TRUE(MakeCert(d, "other-ca", "stranger", "extendedKeyUsage=clientAuth"));
    std::ofstream(d + "/tenants.json")
        << R"({"tenants": [{"name": "acme", "role": "admin", "token_sha256": ")"
        << store::auth::HashHex(store::auth::Sha256(kToken)) << R"("}]})";
    std::ofstream(d + "/token") << kToken << "\n";
    absl::StatusOr<std::unique_ptr<NodeProcess>> node = StartSecuredNode(
        {"--tenants_file=" + d + "/tenants.json", "--tls_cert_file=" + d + "/server.pem",
         "--tls_key_file=" + d + "/server.key", "--tls_client_ca_file=" + d + "/ca.pem"});
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = *std::move(node);
  }
  static void TearDownTestSuite() {
    node_.reset();
    dir_.reset();
  }

  // Options of a client trusting `ca` ("" : plain text) with certificate `cert` ("": none).
  static ClientOptions Options(const std::string& ca, const std::string& cert) {
    ClientOptions options = ClientOptionsFor(node_->grpc_address(), "tcp");
    options.token = kToken;
    options.default_timeout = absl::Seconds(5);
    options.retry.max_retries = 0;
    if (!ca.empty()) {
      options.tls = true;
      options.tls_ca_file = dir_->path() + "/" + ca + ".pem";
    }
    if (!cert.empty()) {
      options.tls_cert_file = dir_->path() + "/" + cert + ".pem";
      options.tls_key_file = dir_->path() + "/" + cert + ".key";
    }
    return options;
  }

  static inline std::unique_ptr<strata::testing::ScopedTempDir> dir_;
  static inline std::unique_ptr<NodeProcess> node_;
};

TEST_F(NodeTlsTest, AClientWithTheCaItsCertificateAndATokenWritesAndReads) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(Options("ca", "client")));
  const Namespace ns = ClientTestNamespace("acme");
  const std::vector<TokenId> tokens = RandomTokens(21, 2 * ClientTestLayout().page_tokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 2);
  ASSERT_OK(client->Write(ns, std::nullopt, tokens, Source(kv)).status());
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client->Match(ns, tokens));
  std::vector<std::byte> read(kv.size());
  ASSERT_OK(client->Read(ns, match.segments, 2, Host(read)));
  EXPECT_TRUE(read == kv);
}

TEST_F(NodeTlsTest, PlainTextAnotherCaOrNoClientCertificateGetsNothing) {
  for (const auto& [ca, cert, what] :
       {std::tuple<std::string, std::string, std::string>{"", "", "plain text"},
        {"other-ca", "client", "trusting another CA"},
        {"ca", "", "without a client certificate"},
        {"ca", "stranger", "with a certificate another CA signed"}}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(Options(ca, cert)));
    const absl::Status status = client->Health().status();
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << what << ": " << status;
  }
  // A CA file that does not exist fails at Connect.
  ClientOptions missing = Options("ca", "client");
  missing.tls_ca_file = dir_->path() + "/absent.pem";
  EXPECT_CODE(Client::Connect(missing).status(), absl::StatusCode::kNotFound);
}

TEST_F(NodeTlsTest, TheCliSpeaksTls) {
  const std::string& d = dir_->path();
  strata::testing::ProgramOptions options;
  options.unset_env = {"STRATA_NODE", "STRATA_TOKEN", "STRATA_TLS_CA"};
  ASSERT_OK_AND_ASSIGN(const strata::testing::ProgramResult ok,
                       strata::testing::RunProgram(
                           STRATA_CLI_BINARY,
                           {"--node=" + node_->grpc_address(), "--token-file=" + d + "/token",
                            "--tls-ca=" + d + "/ca.pem", "--tls-cert=" + d + "/client.pem",
                            "--tls-key=" + d + "/client.key", "tiers"},
                           options));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult plain,
      strata::testing::RunProgram(STRATA_CLI_BINARY,
                                  {"--node=" + node_->grpc_address(),
                                   "--token-file=" + d + "/token", "--timeout=2s", "tiers"},
                                  options));
  EXPECT_EQ(plain.exit_code, 3) << plain.err;  // unreachable: UNAVAILABLE
}

}  // namespace
}  // namespace strata::integration::node_tls_test
