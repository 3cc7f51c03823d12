// The `strata` CLI end to end: the real binary (STRATA_CLI_BINARY) run as a process against
// a real strata-node process (NodeProcess, port 0), checking exit codes, stdout and stderr.
// Blob flows (put, get, match, ls of committed blobs, pin, rm, evict) need the node's data
// plane; when strata-node has none ("dataplane listening on" missing) they are skipped
// with that reason.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/file.h"
#include "strata/testing/json.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::cli_test {

using strata::testing::ChildProcess;
using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;
using strata::testing::ReadFileToString;
using strata::testing::ScopedTempDir;

namespace {

using strata::testing::AsBool;
using strata::testing::AsString;
using strata::testing::AsUint;
using strata::testing::ParseJson;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Small pages so blobs stay small: one page of all layers is 2 layers x (K+V) x 4 tokens x
// 2 heads x 8 dims x 2 bytes = 512 bytes.
constexpr char kLayout[] = "layers=2,kv_heads=2,head_dim=8,dtype=bf16,page_tokens=4";
constexpr uint32_t kPageTokens = 4;
constexpr size_t kPageBytes = 512;

using CliResult = strata::testing::ProgramResult;

void WriteWholeFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// Runs the strata binary with `args` and `stdin_text` on its stdin; $STRATA_NODE is
// dropped from the environment unless `env` sets it.
CliResult RunStrata(const std::vector<std::string>& args, const std::string& stdin_text = "",
                    const std::map<std::string, std::string>& env = {}) {
  strata::testing::ProgramOptions options;
  options.stdin_text = stdin_text;
  options.env = env;
  if (env.count("STRATA_NODE") == 0) options.unset_env = {"STRATA_NODE"};
  absl::StatusOr<CliResult> result = strata::testing::RunProgram(STRATA_CLI_BINARY, args, options);
  EXPECT_TRUE(result.ok()) << "strata " << absl::StrJoin(args, " ") << ": " << result.status();
  return result.ok() ? *std::move(result) : CliResult();
}

std::string Describe(const std::vector<std::string>& args, const CliResult& r) {
  return absl::StrCat("strata ", absl::StrJoin(args, " "), "\nexit ", r.exit_code, "\nstdout:\n",
                      r.out, "\nstderr:\n", r.err);
}

// Parses stdout of a --json run: exactly one JSON value, one line.
nlohmann::json ParseOut(const CliResult& r) {
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  absl::StatusOr<nlohmann::json> value = ParseJson(r.out);
  EXPECT_TRUE(value.ok()) << value.status() << "\n" << r.out;
  return value.ok() ? *value : nlohmann::json();
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<NodeProcess>> node = NodeProcess::Start(NodeOptions());
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = node->release();
  }
  static void TearDownTestSuite() {
    delete node_;
    node_ = nullptr;
  }

  static NodeProcessOptions NodeOptions() {
    NodeProcessOptions options;
    // The data plane on a kernel-chosen port too, so tests can run side by side.
    options.args = {"--dataplane_listen=127.0.0.1:0"};
    return options;
  }

  static bool HasDataPlane(const NodeProcess& node) {
    return absl::StrContains(node.StdoutText(), "strata-node: dataplane listening on ");
  }

  void SetUp() override { ASSERT_NE(node_, nullptr); }

  // Runs strata against the suite's node (--node first).
  CliResult Strata(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), "--node=" + node_->grpc_address());
    return RunStrata(args, stdin_text);
  }

  // A file in this test's directory.
  std::string File(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    WriteWholeFile(path, content);
    return path;
  }

  // `pages` pages of tokens starting at `first`, and random KV bytes for them.
  static std::vector<radix::TokenId> Tokens(uint32_t first, uint32_t pages) {
    std::vector<radix::TokenId> tokens(pages * kPageTokens);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = first + static_cast<uint32_t>(i);
    return tokens;
  }
  static std::string RandomBytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    return bytes;
  }
  static std::string TokenText(const std::vector<radix::TokenId>& tokens) {
    return absl::StrJoin(tokens, " ") + "\n";
  }

  // The key the node must compute: h_b of the whole sequence (radix, independently).
  static std::string ExpectedKey(const std::string& tenant,
                                 const std::vector<radix::TokenId>& sequence) {
    const radix::KvLayout layout{.num_layers = 2,
                                 .num_kv_heads = 2,
                                 .head_dim = 8,
                                 .dtype = radix::DType::kBFloat16,
                                 .page_tokens = kPageTokens,
                                 .format = radix::KvFormat::kKeyValue,
                                 .tp_rank = 0,
                                 .tp_world = 1};
    absl::StatusOr<radix::Namespace> ns = radix::Namespace::Create(tenant, "test/model", layout);
    EXPECT_TRUE(ns.ok()) << ns.status();
    return radix::PrefixHashAt(radix::NamespaceHash(*ns), sequence, kPageTokens).ToHex();
  }

  // `strata put --json` of one blob; returns its parsed output (key, existed, ...).
  nlohmann::json Put(const std::string& tenant, const std::vector<radix::TokenId>& tokens,
                     const std::string& bytes, const std::string& parent = "") {
    static int n = 0;
    const std::string tag = std::to_string(++n);
    std::vector<std::string> args = {"put",      "--json",
                                     "--tenant", tenant,
                                     "--model",  "test/model",
                                     "--layout", kLayout,
                                     "--tokens", File("tokens" + tag, TokenText(tokens)),
                                     "-i",       File("kv" + tag, bytes)};
    if (!parent.empty()) {
      args.push_back("--parent");
      args.push_back(parent);
    }
    const CliResult r = Strata(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_THAT(r.err, IsEmpty());
    return r.exit_code == 0 ? ParseOut(r) : nlohmann::json();
  }

  static NodeProcess* node_;
  ScopedTempDir temp_dir_{"strata-cli-test"};
  const std::string dir_ = temp_dir_.path();
};

NodeProcess* CliTest::node_ = nullptr;

#define SKIP_WITHOUT_DATA_PLANE(node)                                                         \
  if (!HasDataPlane(node)) {                                                                  \
    GTEST_SKIP() << "strata-node has no data plane yet (no \"dataplane listening on\" line)"; \
  }

TEST_F(CliTest, HelpEverywhereExitsZero) {
  const std::vector<std::string> commands = {"status", "tiers", "capacity", "ls",    "stat",
                                             "get",    "put",   "rm",       "pin",   "unpin",
                                             "match",  "evict", "rebuild",  "drain", "cluster"};
  std::vector<std::vector<std::string>> runs = {{"--help"}, {"-h"}, {"help"}};
  for (const std::string& command : commands) {
    runs.push_back({command, "--help"});
    runs.push_back({"help", command});
  }
  for (const auto& args : runs) {
    const CliResult r = RunStrata(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_THAT(r.out, StartsWith("usage: strata")) << Describe(args, r);
    EXPECT_THAT(r.err, IsEmpty()) << Describe(args, r);
  }
  const CliResult top = RunStrata({"--help"});
  for (const std::string& command : commands) {
    EXPECT_THAT(top.out, HasSubstr("\n  " + command + " ")) << command;
  }
}

TEST_F(CliTest, BadUsageExitsTwo) {
  const std::vector<std::vector<std::string>> runs = {
      {},
      {"frobnicate"},
      {"status", "--bogus"},
      {"ls", "--limit", "many"},
      {"stat"},
      {"stat", "not-a-key"},
      {"get", "0123456789abcdef0123456789abcdef"},
      {"put", "--tenant=t", "--model=m", "--layout=layers=2", "--tokens=-", "-i", "/dev/null"},
      {"match", "--tenant=t", "--model=m", std::string("--layout=") + kLayout, "--tokens",
       "/dev/null", "--timeout=never"},
      {"--node=no-port", "status"},
  };
  for (const auto& args : runs) {
    const CliResult r = Strata(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
    EXPECT_THAT(r.err, StartsWith("strata: ")) << Describe(args, r);
    EXPECT_THAT(r.err, HasSubstr(" --help'.\n")) << Describe(args, r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << Describe(args, r);
    EXPECT_THAT(r.out, IsEmpty()) << Describe(args, r);
  }
}

TEST_F(CliTest, UnreachableNodeExitsThree) {
  // A node that was there and is gone: its port refuses connections.
  absl::StatusOr<std::unique_ptr<NodeProcess>> gone = NodeProcess::Start(NodeOptions());
  ASSERT_OK(gone);
  const std::string address = (*gone)->grpc_address();
  (*gone)->Signal(SIGKILL);
  ASSERT_OK((*gone)->WaitExit(absl::Seconds(30)));

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--node=" + address, "--timeout=3s", "status"},
           {"--node=" + address, "--timeout=3s", "ls", "--json"},
           {"--node=" + address, "--timeout=3s", "stat", "0123456789abcdef0123456789abcdef"}}) {
    const CliResult r = RunStrata(args);
    EXPECT_EQ(r.exit_code, 3) << Describe(args, r);
    EXPECT_THAT(r.err, StartsWith("strata: " + args[2] + ": ")) << Describe(args, r);
    EXPECT_TRUE(absl::StrContains(r.err, ": UNAVAILABLE: ") ||
                absl::StrContains(r.err, ": DEADLINE_EXCEEDED: "))
        << Describe(args, r);
    EXPECT_THAT(r.out, IsEmpty());
  }
  // $STRATA_NODE names the node when --node is absent.
  const CliResult from_env = RunStrata({"--timeout=3s", "tiers"}, "", {{"STRATA_NODE", address}});
  EXPECT_EQ(from_env.exit_code, 3) << from_env.err;
  const CliResult live = RunStrata({"status"}, "", {{"STRATA_NODE", node_->grpc_address()}});
  EXPECT_EQ(live.exit_code, 0) << live.err;
}

// strata cluster status against a real etcd with two registered nodes: the table, --json,
// $STRATA_CLUSTER, and the errors (no URL, a bad URL: 2; etcd gone: 3).
TEST_F(CliTest, ClusterStatusListsTheRegisteredNodes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<strata::testing::EtcdProcess> etcd,
                       strata::testing::EtcdProcess::Start());
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  for (int i = 0; i < 2; ++i) {
    NodeProcessOptions options = NodeOptions();
    options.args.push_back("--etcd_endpoints=" + etcd->endpoint());
    options.args.push_back("--cluster=cli");
    options.args.push_back("--cluster_join_window=0");  // founding members: serving at once
    ASSERT_OK_AND_ASSIGN(auto node, NodeProcess::Start(options));
    nodes.push_back(std::move(node));
  }
  const std::string url = "etcd://" + etcd->endpoint() + "/cli";
  nlohmann::json json;
  for (absl::Time until = absl::Now() + absl::Seconds(10);;) {  // registration is async
    const std::vector<std::string> args = {"--cluster=" + url, "cluster", "status", "--json"};
    const CliResult r = RunStrata(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
    json = ParseOut(r);
    if (json["nodes"].size() == 2 || absl::Now() > until) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(json["nodes"].size(), 2u) << json.dump();
  EXPECT_EQ(json["cluster"], "cli");
  std::set<std::string> grpc;
  for (const nlohmann::json& node : json["nodes"]) {
    EXPECT_EQ(node["state"], "serving");
    grpc.insert(node["grpc"].get<std::string>());
    ASSERT_TRUE(node["held"].is_object()) << node.dump();  // each node answered its Tiers
    EXPECT_EQ(node["held"]["blobs"], 0);
  }
  EXPECT_EQ(grpc, (std::set<std::string>{nodes[0]->grpc_address(), nodes[1]->grpc_address()}));

  // The cluster's capacity plan: both nodes answer; no lookups yet, so nothing to plan.
  const std::vector<std::string> plan_args = {"--cluster=" + url, "capacity", "--json"};
  const CliResult plan = RunStrata(plan_args);
  ASSERT_EQ(plan.exit_code, 0) << Describe(plan_args, plan);
  const nlohmann::json plan_json = ParseOut(plan);
  EXPECT_EQ(plan_json["current_nodes"], 2);
  EXPECT_EQ(plan_json["unanswered"].size(), 0u);
  EXPECT_EQ(plan_json["rows"].size(), 0u);
  EXPECT_THAT(AsString(plan_json["advice"]), HasSubstr("no node has seen lookups"));

  const CliResult table = RunStrata({"cluster", "status"}, "", {{"STRATA_CLUSTER", url}});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, StartsWith("cluster cli (etcd " + etcd->endpoint() + "): 2 node(s)"));
  EXPECT_THAT(table.out, HasSubstr(nodes[0]->ReadyField("node_id") + "  serving  " +
                                   nodes[0]->grpc_address()));

  EXPECT_EQ(RunStrata({"cluster", "status"}, "", {{"STRATA_CLUSTER", ""}}).exit_code, 2);
  EXPECT_EQ(RunStrata({"--cluster=http://x:1", "cluster", "status"}).exit_code, 2);
  EXPECT_EQ(RunStrata({"--cluster=" + url, "cluster", "explode"}).exit_code, 2);
  etcd->Kill();
  const CliResult gone = RunStrata({"--cluster=" + url, "--timeout=1s", "cluster", "status"});
  EXPECT_EQ(gone.exit_code, 3) << gone.err;
  EXPECT_THAT(gone.err, HasSubstr("UNAVAILABLE")) << gone.err;
}

TEST_F(CliTest, StatusAndTiers) {
  const CliResult status = Strata({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("node        " + node_->grpc_address() + "\n"));
  EXPECT_THAT(status.out, HasSubstr("state       SERVING\n"));
  EXPECT_THAT(status.out, HasSubstr("data plane  127.0.0.1:"));
  EXPECT_THAT(status.out, HasSubstr(" used of 64.0 MiB ("));

  nlohmann::json health = ParseOut(Strata({"status", "--json"}));
  EXPECT_EQ(AsString(health["state"]), "SERVING");
  EXPECT_FALSE(AsBool(health["draining"]));
  EXPECT_EQ(AsString(health["node"]), node_->grpc_address());
  EXPECT_THAT(AsString(health["data_plane"]), StartsWith("127.0.0.1:"));
  EXPECT_FALSE(AsString(health["version"]).empty());
  ASSERT_GE(health["tiers"].size(), 1u);  // DRAM, then SSD when the node has one
  EXPECT_EQ(AsString(health["tiers"][0]["tier"]), "dram");
  EXPECT_EQ(AsUint(health["tiers"][0]["capacity_bytes"]), 64u << 20);

  const CliResult tiers = Strata({"tiers"});
  ASSERT_EQ(tiers.exit_code, 0) << tiers.err;
  EXPECT_THAT(tiers.out, StartsWith("TIER  CAPACITY"));
  EXPECT_THAT(tiers.out, HasSubstr("\ndram  64.0 MiB "));
  EXPECT_THAT(tiers.out, HasSubstr("\ntext\n"));
  EXPECT_THAT(tiers.out, HasSubstr("\nrebuild queue\n"));
  EXPECT_THAT(tiers.out, HasSubstr("\nindex\n"));
  EXPECT_THAT(tiers.out, HasSubstr("\nengine\n"));

  nlohmann::json stats = ParseOut(Strata({"--json", "tiers"}));
  EXPECT_TRUE(AsUint(stats["text"]["capacity_bytes"]).has_value());
  EXPECT_TRUE(AsUint(stats["rebuild"]["queued"]).has_value());
  EXPECT_EQ(AsUint(stats["tiers"][0]["capacity_bytes"]), 64u << 20);
  EXPECT_EQ(*AsUint(stats["tiers"][0]["used_bytes"]) + *AsUint(stats["tiers"][0]["free_bytes"]),
            64u << 20);
  EXPECT_TRUE(AsUint(stats["index"]["nodes"]).has_value());
  EXPECT_FALSE(AsBool(stats["engine"]["draining"]));
}

TEST_F(CliTest, PutThenGetIsByteIdentical) {
  SKIP_WITHOUT_DATA_PLANE(*node_);
  const std::vector<radix::TokenId> tokens = Tokens(1000, 3);
  const std::string bytes = RandomBytes(3 * kPageBytes, 1);
  const std::string tokens_file = File("tokens", TokenText(tokens));
  const std::string kv_file = File("kv.bin", bytes);
  const std::vector<std::string> put = {"put",        "--tenant", "roundtrip", "--model",
                                        "test/model", "--layout", kLayout,     "--tokens",
                                        tokens_file,  "-i",       kv_file};
  const CliResult first = Strata(put);
  ASSERT_EQ(first.exit_code, 0) << Describe(put, first);
  const std::string key = ExpectedKey("roundtrip", tokens);
  EXPECT_THAT(first.out, HasSubstr("key            " + key + "\n"));
  EXPECT_THAT(first.out, HasSubstr("existed        no\n"));
  EXPECT_THAT(first.out, HasSubstr("indexed pages  3\n"));

  // Again: the key exists, nothing is sent.
  std::vector<std::string> again = put;
  again.push_back("--json");
  nlohmann::json second = ParseOut(Strata(again));
  EXPECT_EQ(AsString(second["key"]), key);
  EXPECT_TRUE(AsBool(second["existed"]));

  // get into a file, and to stdout.
  const std::string out_file = dir_ + "/out.bin";
  const CliResult get = Strata({"get", key, "-o", out_file});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_THAT(get.out, HasSubstr("(1536 bytes, 3 pages) of " + key + " to " + out_file));
  EXPECT_EQ(ReadFileToString(out_file), bytes);
  const CliResult to_stdout = Strata({"get", key, "-o", "-"});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, bytes);  // the bytes and nothing else
  nlohmann::json get_json = ParseOut(Strata({"get", "--json", key, "--output=" + out_file}));
  EXPECT_EQ(AsUint(get_json["bytes"]), 3 * kPageBytes);
  EXPECT_EQ(AsUint(get_json["pages"]), 3u);

  // A child blob continuing all 3 pages, tokens and bytes from stdin.
  const std::vector<radix::TokenId> more = Tokens(2000, 2);
  const std::string child_bytes = RandomBytes(2 * kPageBytes, 2);
  const std::vector<std::string> put_child = {"put",
                                              "--tenant",
                                              "roundtrip",
                                              "--model",
                                              "test/model",
                                              "--layout",
                                              kLayout,
                                              "--tokens",
                                              "-",
                                              "-i",
                                              File("child.bin", child_bytes),
                                              "--parent",
                                              key + ":3",
                                              "--json"};
  const CliResult child = Strata(put_child, TokenText(more));
  ASSERT_EQ(child.exit_code, 0) << Describe(put_child, child);
  std::vector<radix::TokenId> sequence = tokens;
  sequence.insert(sequence.end(), more.begin(), more.end());
  const std::string child_key = ExpectedKey("roundtrip", sequence);
  EXPECT_EQ(AsString(ParseOut(child)["key"]), child_key);
  const CliResult child_get = Strata({"get", child_key, "-o", "-"});
  ASSERT_EQ(child_get.exit_code, 0) << child_get.err;
  EXPECT_EQ(child_get.out, child_bytes);

  // stat shows the record; --tokens its own tokens.
  const CliResult stat = Strata({"stat", child_key});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("parent         " + key + ":3\n"));
  EXPECT_THAT(stat.out, HasSubstr("pages          [3, 5) = 2 pages, 8 tokens\n"));
  EXPECT_THAT(stat.out, HasSubstr("tiers          dram\n"));
  nlohmann::json info = ParseOut(Strata({"stat", child_key, "--tokens", "--json"}));
  EXPECT_EQ(AsString(info["key"]), child_key);
  EXPECT_EQ(AsString(info["tenant"]), "roundtrip");
  EXPECT_EQ(AsString(info["model"]), "test/model");
  EXPECT_EQ(AsString(info["layout"]["spec"]),
            "layers=2,kv_heads=2,head_dim=8,dtype=bfloat16,page_tokens=4,format=kv,tp=0/1");
  EXPECT_EQ(AsString(info["parent"]["key"]), key);
  EXPECT_EQ(AsUint(info["first_page"]), 3u);
  EXPECT_EQ(AsUint(info["bytes"]), 2 * kPageBytes);
  ASSERT_EQ(info["tokens"].size(), more.size());
  for (size_t i = 0; i < more.size(); ++i) EXPECT_EQ(AsUint(info["tokens"][i]), more[i]);

  // A parent that does not exist: the node refuses (exit 1, FAILED_PRECONDITION).
  const std::vector<std::string> orphan = {"put",
                                           "--tenant",
                                           "roundtrip",
                                           "--model",
                                           "test/model",
                                           "--layout",
                                           kLayout,
                                           "--tokens",
                                           File("orphan_tokens", TokenText(Tokens(5000, 1))),
                                           "-i",
                                           File("orphan.bin", RandomBytes(kPageBytes, 3)),
                                           "--parent",
                                           "0123456789abcdef0123456789abcdef:1"};
  const CliResult refused = Strata(orphan);
  EXPECT_EQ(refused.exit_code, 1) << Describe(orphan, refused);
  EXPECT_THAT(refused.err, StartsWith("strata: put: FAILED_PRECONDITION: "));
}

TEST_F(CliTest, MatchAfterPut) {
  SKIP_WITHOUT_DATA_PLANE(*node_);
  const std::vector<radix::TokenId> first = Tokens(1, 2);
  const std::vector<radix::TokenId> second = Tokens(9, 2);
  const std::string parent_key =
      AsString(Put("matcher", first, RandomBytes(2 * kPageBytes, 4))["key"]);
  ASSERT_FALSE(parent_key.empty());
  const std::string child_key =
      AsString(Put("matcher", second, RandomBytes(2 * kPageBytes, 5), parent_key + ":2")["key"]);
  ASSERT_FALSE(child_key.empty());

  // The query: the 4 cached pages, a 5th page nobody wrote and a partial page.
  std::vector<radix::TokenId> query = first;
  query.insert(query.end(), second.begin(), second.end());
  for (radix::TokenId t : {77, 78, 79, 80, 81, 82}) query.push_back(t);
  const std::string query_file = File("query", TokenText(query));
  const std::vector<std::string> ns = {"--tenant=matcher", "--model=test/model",
                                       std::string("--layout=") + kLayout};
  std::vector<std::string> args = {"match", "--tokens", query_file};
  args.insert(args.end(), ns.begin(), ns.end());
  const CliResult table = Strata(args);
  ASSERT_EQ(table.exit_code, 0) << Describe(args, table);
  EXPECT_THAT(table.out, StartsWith("matched 4 of 5 pages (16 of 22 tokens)\n"));
  EXPECT_THAT(table.out, HasSubstr("[0, 2)         2  " + parent_key + "  [0, 2)       2  dram\n"));
  EXPECT_THAT(table.out, HasSubstr("[2, 4)         2  " + child_key + "  [0, 2)       2  dram\n"));

  args.push_back("--json");
  nlohmann::json match = ParseOut(Strata(args));
  EXPECT_EQ(AsUint(match["matched_pages"]), 4u);
  EXPECT_EQ(AsUint(match["matched_tokens"]), 16u);
  EXPECT_EQ(AsUint(match["query_pages"]), 5u);
  EXPECT_EQ(AsUint(match["query_tokens"]), 22u);
  EXPECT_FALSE(AsBool(match["truncated"]));
  ASSERT_EQ(match["segments"].size(), 2u);
  EXPECT_EQ(AsString(match["segments"][0]["blob"]), parent_key);
  EXPECT_EQ(AsUint(match["segments"][0]["seq_page_begin"]), 0u);
  EXPECT_EQ(AsString(match["segments"][1]["blob"]), child_key);
  EXPECT_EQ(AsUint(match["segments"][1]["seq_page_begin"]), 2u);
  EXPECT_EQ(AsUint(match["segments"][1]["page_count"]), 2u);
  EXPECT_EQ(AsString(match["segments"][1]["tier"]), "dram");

  // Tokens on stdin (the default), as a JSON array; a divergent second page matches 1 page.
  std::vector<std::string> from_stdin = {"match", "--json"};
  from_stdin.insert(from_stdin.end(), ns.begin(), ns.end());
  nlohmann::json partial = ParseOut(Strata(from_stdin, "[1, 2, 3, 4, 5, 6, 7, 99]"));
  EXPECT_EQ(AsUint(partial["matched_pages"]), 1u);
  EXPECT_EQ(AsUint(partial["segments"][0]["page_count"]), 1u);

  // A namespace the node has never seen: NOT_FOUND, exit 1.
  const CliResult unknown = Strata({"match", "--tenant=nobody", "--model=test/model",
                                    std::string("--layout=") + kLayout, "--tokens", query_file});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_THAT(unknown.err, StartsWith("strata: match: NOT_FOUND: "));
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);
  EXPECT_THAT(unknown.out, IsEmpty());
}

TEST_F(CliTest, LsJsonIsParsableAndFollowsPageTokens) {
  SKIP_WITHOUT_DATA_PLANE(*node_);
  std::set<std::string> keys;
  for (uint32_t i = 0; i < 5; ++i) {
    keys.insert(
        AsString(Put("lister", Tokens(100 * (i + 1), 1), RandomBytes(kPageBytes, 10 + i))["key"]));
  }
  ASSERT_EQ(keys.size(), 5u);
  const std::vector<std::string> ns = {"--tenant=lister", "--model=test/model",
                                       std::string("--layout=") + kLayout};

  std::vector<std::string> all = {"ls", "--json", "--all"};
  all.insert(all.end(), ns.begin(), ns.end());
  nlohmann::json listed = ParseOut(Strata(all));
  ASSERT_TRUE(listed["blobs"].is_array());
  ASSERT_EQ(listed["blobs"].size(), 5u);
  EXPECT_EQ(AsString(listed["next_page_token"]), "");
  std::vector<std::string> order;
  for (nlohmann::json& blob : listed["blobs"]) {
    order.push_back(AsString(blob["key"]));
    EXPECT_EQ(AsString(blob["tenant"]), "lister");
    EXPECT_EQ(AsUint(blob["pages"]), 1u);
    EXPECT_FALSE(blob.contains("tokens"));
  }
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(std::set<std::string>(order.begin(), order.end()), keys);

  // The same namespace by its hash.
  const std::string h0 = AsString(listed["blobs"][0]["namespace_hash"]);
  nlohmann::json by_hash = ParseOut(Strata({"ls", "--json", "--all", "--namespace", h0}));
  EXPECT_EQ(by_hash["blobs"].size(), 5u);

  // Two at a time, following the tokens by hand: every key once, in order.
  std::vector<std::string> paged;
  std::string token;
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> args = {"ls", "--json", "--limit=2"};
    args.insert(args.end(), ns.begin(), ns.end());
    if (!token.empty()) args.push_back("--page-token=" + token);
    nlohmann::json page = ParseOut(Strata(args));
    EXPECT_LE(page["blobs"].size(), 2u);
    for (nlohmann::json& blob : page["blobs"]) paged.push_back(AsString(blob["key"]));
    token = AsString(page["next_page_token"]);
    if (token.empty()) break;
  }
  EXPECT_EQ(paged, order);

  // The table: a header, one line per blob, and the token to continue from.
  std::vector<std::string> table_args = {"ls", "--limit", "3"};
  table_args.insert(table_args.end(), ns.begin(), ns.end());
  const CliResult table = Strata(table_args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, StartsWith("KEY  "));
  EXPECT_THAT(table.out, HasSubstr(order[0] + "  lister  test/model"));
  EXPECT_THAT(table.out, HasSubstr("(more blobs: strata ls --page-token "));
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 5);

  // A namespace with nothing in it.
  nlohmann::json empty =
      ParseOut(Strata({"ls", "--json", "--tenant=nothing-here", "--model=test/model",
                       std::string("--layout=") + kLayout}));
  EXPECT_EQ(empty["blobs"].size(), 0u);
  const CliResult bad_token = Strata({"ls", "--page-token=garbage"});
  EXPECT_EQ(bad_token.exit_code, 1) << bad_token.err;
  EXPECT_THAT(bad_token.err, StartsWith("strata: ls: INVALID_ARGUMENT: "));
}

TEST_F(CliTest, PinUnpinRmStat) {
  SKIP_WITHOUT_DATA_PLANE(*node_);
  const std::string key =
      AsString(Put("pinner", Tokens(7, 2), RandomBytes(2 * kPageBytes, 20))["key"]);
  ASSERT_FALSE(key.empty());

  const CliResult pin = Strata({"pin", key});
  ASSERT_EQ(pin.exit_code, 0) << pin.err;
  EXPECT_EQ(pin.out, "pinned " + key + "\n");
  EXPECT_TRUE(AsBool(ParseOut(Strata({"stat", "--json", key}))["pinned"]));

  const CliResult pinned_rm = Strata({"rm", key});
  EXPECT_EQ(pinned_rm.exit_code, 1);
  EXPECT_THAT(pinned_rm.err, StartsWith("strata: rm: FAILED_PRECONDITION: "));

  nlohmann::json unpin = ParseOut(Strata({"unpin", key, "--json"}));
  EXPECT_EQ(AsString(unpin["key"]), key);
  EXPECT_FALSE(AsBool(unpin["pinned"]));

  nlohmann::json removed = ParseOut(Strata({"rm", "--json", key}));
  EXPECT_EQ(AsUint(removed["pages_removed"]), 2u);
  EXPECT_EQ(AsUint(removed["blobs_unlinked"]), 1u);

  for (const std::string command : {"stat", "rm", "pin", "unpin", "get"}) {
    std::vector<std::string> args = {command, key};
    if (command == "get") args.insert(args.end(), {"-o", dir_ + "/never"});
    const CliResult gone = Strata(args);
    EXPECT_EQ(gone.exit_code, 1) << Describe(args, gone);
    EXPECT_THAT(gone.err, StartsWith("strata: " + command + ": NOT_FOUND: "));
    EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1);
    EXPECT_THAT(gone.out, IsEmpty());
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/never"));
}

// Evict and drain change the node for good: their own node.
TEST_F(CliTest, EvictThenDrain) {
  absl::StatusOr<std::unique_ptr<NodeProcess>> own = NodeProcess::Start(NodeOptions());
  ASSERT_OK(own);
  NodeProcess& node = **own;
  const std::string at = "--node=" + node.grpc_address();
  const std::vector<std::string> ns = {"--tenant=drainer", "--model=test/model",
                                       std::string("--layout=") + kLayout};
  auto put = [&](uint32_t first, uint32_t seed) {
    std::vector<std::string> args = {
        at,         "put",
        "--tokens", File(absl::StrCat("t", seed), TokenText(Tokens(first, 1))),
        "-i",       File(absl::StrCat("b", seed), RandomBytes(kPageBytes, seed))};
    args.insert(args.end(), ns.begin(), ns.end());
    return RunStrata(args);
  };

  if (HasDataPlane(node)) {
    ASSERT_EQ(put(1, 30).exit_code, 0);
    const CliResult evict = RunStrata({at, "evict", "--bytes=1GiB", "--json"});
    ASSERT_EQ(evict.exit_code, 0) << evict.err;
    nlohmann::json evicted = ParseOut(evict);
    EXPECT_EQ(AsString(evicted["tier"]), "dram");
    EXPECT_EQ(AsUint(evicted["bytes_requested"]), 1u << 30);
    EXPECT_GE(*AsUint(evicted["bytes_freed"]), kPageBytes);
    // Its bytes went (to SSD when the node has one, else dropped: TEXT); it stays indexed.
    EXPECT_EQ(*AsUint(evicted["blobs_dropped"]) + *AsUint(evicted["blobs_demoted"]), 1u);
    EXPECT_EQ(AsUint(evicted["blobs_unlinked"]), 0u);
  }
  // A tier the node does not have: the node refuses (exit 1).
  const CliResult bad_tier = RunStrata({at, "evict", "--bytes=1", "--tier=hbm"});
  EXPECT_EQ(bad_tier.exit_code, 1) << bad_tier.err;
  EXPECT_THAT(bad_tier.err, StartsWith("strata: evict: INVALID_ARGUMENT: "));
  // Neither --bytes nor --all, or both: usage errors (exit 2), nothing sent.
  EXPECT_EQ(RunStrata({at, "evict"}).exit_code, 2);
  EXPECT_EQ(RunStrata({at, "evict", "--all", "--bytes=1"}).exit_code, 2);

  const CliResult drain = RunStrata({at, "drain", "--wait=5s"});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  EXPECT_THAT(drain.out, StartsWith("drained"));
  nlohmann::json status = ParseOut(RunStrata({at, "status", "--json"}));
  EXPECT_EQ(AsString(status["state"]), "DRAINING");
  EXPECT_TRUE(AsBool(status["draining"]));
  // A draining node refuses puts with UNAVAILABLE: exit 3.
  const CliResult refused = put(50, 31);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_THAT(refused.err, StartsWith("strata: put: UNAVAILABLE: "));
}

// Evicted blobs stay as TEXT; `strata rebuild` queues them, `--wait` sees them refilled by a
// put of the original bytes (here: `strata put` of the same tokens and bytes, as a worker
// would). Its own node: evicting changes every blob's tier.
TEST_F(CliTest, TextTierAndRebuild) {
  absl::StatusOr<std::unique_ptr<NodeProcess>> own = NodeProcess::Start(NodeOptions());
  ASSERT_OK(own);
  NodeProcess& node = **own;
  if (!HasDataPlane(node)) GTEST_SKIP() << "strata-node has no data plane yet";
  const std::string at = "--node=" + node.grpc_address();
  const std::vector<radix::TokenId> tokens = Tokens(300, 2);
  const std::string bytes = RandomBytes(2 * kPageBytes, 40);
  std::vector<std::string> put = {at,         "put",
                                  "--tenant", "texter",
                                  "--model",  "test/model",
                                  "--layout", kLayout,
                                  "--tokens", File("text_tokens", TokenText(tokens)),
                                  "-i",       File("text.bin", bytes),
                                  "--json"};
  const CliResult first = RunStrata(put);
  ASSERT_EQ(first.exit_code, 0) << Describe(put, first);
  const std::string key = AsString(ParseOut(first)["key"]);

  nlohmann::json evicted = ParseOut(RunStrata({at, "evict", "--all", "--json"}));
  EXPECT_TRUE(evicted["bytes_requested"].is_null());
  if (*AsUint(evicted["blobs_demoted"]) > 0) {
    ASSERT_EQ(RunStrata({at, "evict", "--tier=ssd", "--all"}).exit_code, 0);
  }
  const CliResult stat = RunStrata({at, "stat", key});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("tiers          text\n"));

  // match: the pages are still matched, as text with their tokens, none readable.
  const std::string query = File("text_query", TokenText(tokens));
  const std::vector<std::string> match = {at,
                                          "match",
                                          "--tenant=texter",
                                          "--model=test/model",
                                          std::string("--layout=") + kLayout,
                                          "--tokens",
                                          query};
  const CliResult match_table = RunStrata(match);
  ASSERT_EQ(match_table.exit_code, 0) << match_table.err;
  EXPECT_THAT(match_table.out, StartsWith("matched 2 of 2 pages (8 of 8 tokens)\n"
                                          "readable: the first 0 pages;"));
  EXPECT_THAT(match_table.out, HasSubstr("  text\n"));
  std::vector<std::string> match_json = match;
  match_json.push_back("--json");
  nlohmann::json matched = ParseOut(RunStrata(match_json));
  EXPECT_EQ(AsUint(matched["readable_pages"]), 0u);
  ASSERT_EQ(matched["segments"].size(), 1u);
  EXPECT_EQ(AsString(matched["segments"][0]["tier"]), "text");
  ASSERT_EQ(matched["segments"][0]["tokens"].size(), tokens.size());
  EXPECT_EQ(AsUint(matched["segments"][0]["tokens"][7]), tokens[7]);

  // get of a TEXT blob: a miss (exit 1), nothing written.
  const CliResult get = RunStrata({at, "get", key, "-o", dir_ + "/text.out"});
  EXPECT_EQ(get.exit_code, 1) << get.err;
  EXPECT_THAT(get.err, StartsWith("strata: get: NOT_FOUND: "));

  // rebuild: queued once, then already queued; the queue shows in tiers.
  const CliResult rebuild = RunStrata({at, "rebuild", key, "--prefix"});
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.err;
  EXPECT_EQ(rebuild.out,
            "rebuild of " + key + " (with its prefix): 1 queued, 0 already queued, 0 resident\n");
  nlohmann::json again = ParseOut(RunStrata({at, "rebuild", key, "--json"}));
  EXPECT_EQ(AsUint(again["queued"]), 0u);
  EXPECT_EQ(AsUint(again["already_queued"]), 1u);
  EXPECT_FALSE(AsBool(again["with_prefix"]));
  nlohmann::json tiers = ParseOut(RunStrata({at, "tiers", "--json"}));
  EXPECT_EQ(AsUint(tiers["rebuild"]["queued"]), 1u);
  EXPECT_GE(*AsUint(tiers["text"]["blobs"]), 1u);
  const CliResult table = RunStrata({at, "tiers"});
  EXPECT_THAT(table.out, HasSubstr("\ntext  "));

  // --wait with nobody filling it: still TEXT when the wait ends, exit 1.
  const CliResult waited = RunStrata({at, "rebuild", key, "--wait=300ms"});
  EXPECT_EQ(waited.exit_code, 1) << waited.err;
  EXPECT_THAT(waited.err,
              StartsWith("strata: rebuild: FAILED_PRECONDITION: " + key + " is still text after "));

  // --wait while a put of the original bytes refills it: rebuilt, exit 0.
  absl::StatusOr<std::unique_ptr<ChildProcess>> waiter =
      ChildProcess::Start(STRATA_CLI_BINARY, {at, "rebuild", key, "--wait=60s"});
  ASSERT_TRUE(waiter.ok()) << waiter.status();
  const CliResult refill = RunStrata(put);
  ASSERT_EQ(refill.exit_code, 0) << Describe(put, refill);
  const absl::StatusOr<int> code = (*waiter)->WaitExit(absl::Seconds(60));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << (*waiter)->StderrText();
  EXPECT_THAT((*waiter)->StdoutText(), HasSubstr("rebuilt: " + key + " is in dram after "));
  const CliResult back = RunStrata({at, "get", key, "-o", "-"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, bytes);

  // Unknown keys: NOT_FOUND, exit 1.
  const CliResult unknown = RunStrata({at, "rebuild", "0123456789abcdef0123456789abcdef"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_THAT(unknown.err, StartsWith("strata: rebuild: NOT_FOUND: "));
}

// Lookups by phase and the miss-ratio curves on a node of its own (fresh counters): a
// scripted workload of puts and matches with explicit phases, then `strata tiers` and
// `strata capacity` (table, JSON, --plot) must agree with the script and with each other.
TEST_F(CliTest, TiersByPhaseAndCapacityCurves) {
  absl::StatusOr<std::unique_ptr<NodeProcess>> own = NodeProcess::Start(NodeOptions());
  ASSERT_OK(own);
  NodeProcess& node = **own;
  const std::string at = "--node=" + node.grpc_address();

  // Before any Match the node has no curve: FAILED_PRECONDITION, exit 1, a clear message.
  const CliResult early = RunStrata({at, "capacity"});
  EXPECT_EQ(early.exit_code, 1) << early.err;
  EXPECT_THAT(early.err, StartsWith("strata: capacity: FAILED_PRECONDITION: the node has no "
                                    "miss-ratio curve yet"));
  EXPECT_THAT(early.out, IsEmpty());
  if (!HasDataPlane(node)) GTEST_SKIP() << "strata-node has no data plane yet";

  // Two blobs, 4 pages; the query is those 4 pages and one page nobody wrote.
  const std::vector<radix::TokenId> first = Tokens(500, 2), second = Tokens(600, 2);
  std::vector<std::string> put = {at,           "put",      "--tenant", "planner", "--model",
                                  "test/model", "--layout", kLayout,    "--json"};
  auto put_blob = [&](const std::vector<radix::TokenId>& tokens, uint32_t seed,
                      const std::string& parent) {
    std::vector<std::string> args = put;
    for (const std::string& a :
         {std::string("--tokens"), File("t" + std::to_string(seed), TokenText(tokens)),
          std::string("-i"), File("b" + std::to_string(seed), RandomBytes(2 * kPageBytes, seed))}) {
      args.push_back(a);
    }
    if (!parent.empty()) args.insert(args.end(), {"--parent", parent});
    const CliResult r = RunStrata(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return r.exit_code == 0 ? AsString(ParseOut(r)["key"]) : std::string();
  };
  const std::string parent = put_blob(first, 61, "");
  ASSERT_FALSE(parent.empty());
  ASSERT_FALSE(put_blob(second, 62, parent + ":2").empty());
  std::vector<radix::TokenId> query = first;
  query.insert(query.end(), second.begin(), second.end());
  for (radix::TokenId t : {1, 2, 3, 4}) query.push_back(90000 + t);
  const std::string query_file = File("query", TokenText(query));
  const std::string cold_file = File("cold", TokenText(Tokens(70000, 2)));
  auto match = [&](const std::string& phase, const std::string& tokens_file) {
    const std::vector<std::string> args = {at,         "match",      "--phase",  phase,
                                           "--tokens", tokens_file,  "--tenant", "planner",
                                           "--model",  "test/model", "--layout", kLayout};
    const CliResult r = RunStrata(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  };
  match("prefill", query_file);  // 5 pages: 4 in DRAM, 1 miss
  match("decode", query_file);   // twice
  match("decode", query_file);
  match("midfill", cold_file);  // 2 pages, both misses

  const CliResult json_run = RunStrata({at, "tiers", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  nlohmann::json tiers = ParseOut(json_run);
  EXPECT_EQ(AsString(tiers["tiers"][0]["tier"]), "dram");
  EXPECT_EQ(AsUint(tiers["tiers"][0]["pages"]), 4u);
  EXPECT_EQ(AsUint(tiers["text"]["pages"]), 0u);
  ASSERT_EQ(tiers["lookups"].size(), 3u);
  struct Want {
    const char* phase;
    uint64_t lookups, queried, dram, miss;
  };
  const Want want[] = {{"prefill", 1, 5, 4, 1}, {"midfill", 1, 2, 0, 2}, {"decode", 2, 10, 8, 2}};
  uint64_t lookups = 0;
  for (size_t i = 0; i < 3; ++i) {
    nlohmann::json& l = tiers["lookups"][i];
    SCOPED_TRACE(want[i].phase);
    EXPECT_EQ(AsString(l["phase"]), want[i].phase);
    EXPECT_EQ(AsUint(l["lookups"]), want[i].lookups);
    EXPECT_EQ(AsUint(l["queried_pages"]), want[i].queried);
    EXPECT_EQ(AsUint(l["dram_hit_pages"]), want[i].dram);
    EXPECT_EQ(AsUint(l["ssd_hit_pages"]), 0u);
    EXPECT_EQ(AsUint(l["text_hit_pages"]), 0u);
    EXPECT_EQ(AsUint(l["miss_pages"]), want[i].miss);
    lookups += *AsUint(l["lookups"]);
  }
  EXPECT_EQ(AsUint(tiers["engine"]["matches"]), lookups);
  EXPECT_GT(AsUint(tiers["meta"]["disk_bytes"]), 0u);  // the node's RocksDB store
  // The curve saw every page of every query (17 accesses; all sampled at this size).
  EXPECT_EQ(AsUint(tiers["mrc"]["accesses"]), 17u);
  ASSERT_GE(tiers["mrc"]["points"].size(), 1u);
  ASSERT_GE(tiers["curves"].size(), 1u);
  nlohmann::json& dram_curve = tiers["curves"][0];
  EXPECT_EQ(AsString(dram_curve["tier"]), "dram");
  EXPECT_EQ(AsUint(dram_curve["capacity_bytes"]), 64u << 20);
  const double expected = dram_curve["expected_hit_ratio"].get<double>();
  EXPECT_GE(expected, 0.0);
  EXPECT_LE(expected, 1.0);
  uint64_t last = 0;
  for (nlohmann::json& point : dram_curve["points"]) {
    EXPECT_GE(*AsUint(point["capacity_bytes"]), last);
    last = *AsUint(point["capacity_bytes"]);
  }
  const std::string expected_text = absl::StrFormat("%.1f%%", expected * 100);

  // The table: the phases' rows as in JSON, the DRAM row's pages and expected hit rate.
  const CliResult table = RunStrata({at, "tiers"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("\nlookups by phase (pages)\nPHASE    LOOKUPS  PAGES  DRAM  "));
  // The cells of the table line that starts with `first` (and a blank).
  auto row = [&table](const std::string& first) -> std::vector<std::string> {
    const size_t at_line = table.out.find("\n" + first + " ");
    if (at_line == std::string::npos) return {};
    const size_t end = table.out.find('\n', at_line + 1);
    return absl::StrSplit(table.out.substr(at_line + 1, end - at_line - 1), ' ', absl::SkipEmpty());
  };
  using Cells = std::vector<std::string>;
  EXPECT_EQ(row("prefill"), (Cells{"prefill", "1", "5", "4", "0", "0", "1", "80.0%"})) << table.out;
  EXPECT_EQ(row("midfill"), (Cells{"midfill", "1", "2", "0", "0", "0", "2", "0.0%"}));
  EXPECT_EQ(row("decode"), (Cells{"decode", "2", "10", "8", "0", "0", "2", "80.0%"}));
  EXPECT_EQ(row("total"), (Cells{"total", "4", "17", "12", "0", "0", "5", "70.6%"}));
  // DRAM: 4 pages (cell 9: sizes take two cells), the curve's expected hit rate last.
  const Cells dram_row = row("dram");
  ASSERT_EQ(dram_row.size(), 17u) << table.out;
  EXPECT_EQ(dram_row[9], "4");
  EXPECT_EQ(dram_row.back(), expected_text);

  // strata capacity: the same curve as a table, the current capacity marked, and a PNG.
  const std::string png = dir_ + "/curves.png";
  const CliResult capacity = RunStrata({at, "capacity", "--tier=dram", "--plot", png});
  ASSERT_EQ(capacity.exit_code, 0) << capacity.err;
  EXPECT_THAT(capacity.out, StartsWith("miss-ratio curve: 17 page accesses, "));
  EXPECT_THAT(capacity.out, HasSubstr("\ndram: 64.0 MiB now, expected hit rate " + expected_text));
  EXPECT_THAT(capacity.out, HasSubstr("<- current"));
  EXPECT_THAT(capacity.out, HasSubstr("\nplot written to " + png + "\n"));
  const std::string image = ReadFileToString(png);
  ASSERT_GE(image.size(), 8u);
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  nlohmann::json capacity_json = ParseOut(RunStrata({at, "capacity", "--json"}));
  ASSERT_GE(capacity_json["curves"].size(), 1u);
  EXPECT_TRUE(capacity_json["curves"][0]["expected_hit_ratio"].is_number());
  EXPECT_EQ(capacity_json["curves"][0]["expected_hit_ratio"], dram_curve["expected_hit_ratio"]);
  EXPECT_EQ(AsUint(capacity_json["mrc"]["accesses"]), 17u);
  EXPECT_TRUE(capacity_json["plot"].is_null());
  // A tier the node plans no curve for (no SSD tier here): NOT_FOUND, exit 1.
  if (tiers["tiers"].size() == 1) {
    const CliResult ssd = RunStrata({at, "capacity", "--tier=ssd"});
    EXPECT_EQ(ssd.exit_code, 1) << ssd.err;
    EXPECT_THAT(ssd.err, StartsWith("strata: capacity: NOT_FOUND: the node has no ssd curve"));
  }
  // An unwritable plot path is a local-file failure: exit 1, not 3.
  const CliResult bad_plot = RunStrata({at, "capacity", "--plot", dir_ + "/no/such/dir/x.png"});
  EXPECT_EQ(bad_plot.exit_code, 1) << bad_plot.err;
  EXPECT_THAT(bad_plot.err, HasSubstr("--plot: "));
}

}  // namespace
}  // namespace strata::integration::cli_test
