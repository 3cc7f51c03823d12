// RunCli in-process: help, usage errors and exit codes that need no node (a node that is
// not there answers UNAVAILABLE: exit 3). Commands against a real node are in
// tests/integration/cli_test.cc.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/cli.h"
#include "client/cli/exit_codes.h"

namespace strata::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Nothing listens on port 1 of loopback (a privileged port no test opens).
constexpr char kNoNode[] = "--node=127.0.0.1:1";
constexpr char kLayout[] = "layers=2,kv_heads=1,head_dim=8,dtype=bf16,page_tokens=4";

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun RunArgs(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  CliRun run;
  run.code = RunCli(args, {in, out, err});
  run.out = out.str();
  run.err = err.str();
  return run;
}

std::string TempFile(const std::string& name, const std::string& content) {
  const std::string path =
      ::testing::TempDir() + "/run_cli_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(ExitCodesTest, Mapping) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), kExitOk);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("x")), kExitFailed);
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("from the node")), kExitFailed);
  EXPECT_EQ(ExitCodeFor(absl::DataLossError("x")), kExitFailed);
  EXPECT_EQ(ExitCodeFor(UsageError("bad flag")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(AsUsageError(absl::OutOfRangeError("x"))), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("down")), kExitUnreachable);
  EXPECT_EQ(ExitCodeFor(absl::DeadlineExceededError("slow")), kExitUnreachable);
  EXPECT_FALSE(IsUsageError(absl::OkStatus()));
  EXPECT_TRUE(AsUsageError(absl::OkStatus()).ok());
  EXPECT_EQ(AsUsageError(absl::OutOfRangeError("m")).message(), "m");
}

TEST(RunCliTest, HelpEverywhereExitsZero) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"help"}, {"--node=x", "--help"}}) {
    const CliRun run = RunArgs(args);
    EXPECT_EQ(run.code, 0);
    EXPECT_THAT(run.out, StartsWith("usage: strata"));
    EXPECT_THAT(run.out, HasSubstr("  match "));
    EXPECT_THAT(run.out, HasSubstr("exit codes:"));
    EXPECT_THAT(run.err, IsEmpty());
  }
  for (const Command& command : Commands()) {
    const std::string& name = command.spec.name;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {name, "--help"}, {name, "-h"}, {"help", name}, {kNoNode, name, "--help"}}) {
      const CliRun run = RunArgs(args);
      EXPECT_EQ(run.code, 0) << name;
      EXPECT_THAT(run.out, StartsWith("usage: strata " + name)) << name;
      EXPECT_THAT(run.out, HasSubstr("--json")) << name;
      EXPECT_THAT(run.out, HasSubstr("--timeout DURATION")) << name;
      EXPECT_THAT(run.err, IsEmpty()) << name;
    }
  }
}

TEST(RunCliTest, Version) {
  const CliRun run = RunArgs({"--version"});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, StartsWith("strata "));
}

// Exit 2, one reason line naming the command, then the --help hint; nothing on stdout.
void ExpectUsage(const std::vector<std::string>& args, const std::string& reason,
                 const std::string& hint, const std::string& stdin_text = "") {
  const CliRun run = RunArgs(args, stdin_text);
  EXPECT_EQ(run.code, kExitUsage) << ::testing::PrintToString(args) << run.err;
  EXPECT_EQ(run.err, "strata: " + reason + "\nTry '" + hint + "'.\n")
      << ::testing::PrintToString(args);
  EXPECT_THAT(run.out, IsEmpty());
}

// As ExpectUsage, for reasons whose wording belongs to another module: `text` in the line.
void ExpectUsageContaining(const std::vector<std::string>& args, const std::string& text) {
  const CliRun run = RunArgs(args);
  EXPECT_EQ(run.code, kExitUsage) << ::testing::PrintToString(args) << run.err;
  EXPECT_THAT(run.err, HasSubstr(text));
  EXPECT_THAT(run.err, HasSubstr("\nTry 'strata "));
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 2) << run.err;
  EXPECT_THAT(run.out, IsEmpty());
}

TEST(RunCliTest, UsageErrors) {
  ExpectUsage({}, "missing command", "strata --help");
  ExpectUsage({"--json"}, "missing command", "strata --help");
  ExpectUsage({"frobnicate"}, "unknown command \"frobnicate\"", "strata --help");
  ExpectUsage({"help", "frobnicate"}, "unknown command \"frobnicate\"", "strata --help");
  ExpectUsage({"--bogus", "status"}, "unknown flag --bogus", "strata --help");
  ExpectUsage({"status", "--bogus"}, "status: unknown flag --bogus", "strata status --help");
  ExpectUsage({"status", "extra"}, "status: unexpected argument \"extra\"", "strata status --help");
  ExpectUsage({"--json", "status", "--json"}, "status: --json given twice", "strata status --help");
  ExpectUsage({"--node"}, "--node needs a value (HOST:PORT)", "strata --help");
  ExpectUsageContaining({"--node=nonsense", "status"}, "strata: status: node: \"nonsense\"");
  ExpectUsage({"status", "--timeout=0s"},
              "status: --timeout: \"0s\" must be a positive, finite duration",
              "strata status --help");
  ExpectUsage({"stat"}, "stat: missing argument KEY", "strata stat --help");
  ExpectUsage({kNoNode, "stat", "xyz"}, "stat: KEY: \"xyz\" is not a blob key (32 hex digits)",
              "strata stat --help");
  ExpectUsage({kNoNode, "rm", "00000000000000000000000000000000"},
              "rm: KEY: the all-zero key is reserved (unset)", "strata rm --help");
  ExpectUsage({"get", "0123456789abcdef0123456789abcdef"}, "get: missing required flag --output",
              "strata get --help");
  ExpectUsage({kNoNode, "capacity", "--tier=tape"},
              "capacity: --tier: \"tape\" is not a tier (hbm, dram, ssd, text)",
              "strata capacity --help");
  ExpectUsage({kNoNode, "capacity", "--plot="}, "capacity: --plot: empty file name",
              "strata capacity --help");
  ExpectUsage({kNoNode, "match", "--phase=later", "--tenant=a", "--model=m",
               "--layout=layers=2,kv_heads=2,head_dim=8,dtype=bf16,page_tokens=4"},
              "match: --phase: \"later\" is not a phase (prefill, midfill, decode)",
              "strata match --help");
  ExpectUsage({kNoNode, "ls", "--limit=0"}, "ls: --limit: must be at least 1 (or use --all)",
              "strata ls --help");
  ExpectUsage({kNoNode, "ls", "--all", "--limit=5"}, "ls: --all and --limit exclude each other",
              "strata ls --help");
  ExpectUsage({kNoNode, "ls", "--tenant=a"},
              "ls: --tenant, --model and --layout go together: missing --model",
              "strata ls --help");
  ExpectUsage({kNoNode, "ls", "--namespace=zz"},
              "ls: --namespace: \"zz\" is not a namespace hash (32 hex digits, as stat shows)",
              "strata ls --help");
  ExpectUsage({kNoNode, "evict", "--bytes=lots"},
              "evict: --bytes: \"lots\" is not a byte size (e.g. 4096, 64MiB, 1GiB, 10GB)",
              "strata evict --help");
  ExpectUsage({kNoNode, "evict", "--bytes=1", "--tier=disk"},
              "evict: --tier: \"disk\" is not a tier (hbm, dram, ssd, text)",
              "strata evict --help");
}

TEST(RunCliTest, PutAndMatchCheckTheirInputsBeforeConnecting) {
  const std::string tokens5 = TempFile("tokens5", "1 2 3 4 5");
  const std::string tokens4 = TempFile("tokens4", "[1, 2, 3, 4]");
  const std::string bad_tokens = TempFile("bad_tokens", "1 2 three 4");
  // One page of layers=2, kv_heads=1, head_dim=8, bf16, page_tokens=4: 2 * 2 * 4*1*8*2 bytes.
  const std::string page = TempFile("page", std::string(256, 'k'));
  const std::string short_page = TempFile("short", std::string(255, 'k'));
  const std::vector<std::string> ns = {"--tenant=acme", "--model=m",
                                       std::string("--layout=") + kLayout};
  auto put = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {kNoNode, "put"};
    args.insert(args.end(), ns.begin(), ns.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::string hint = "strata put --help";
  ExpectUsage({kNoNode, "put", "--tenant=acme", "--model=m", "--layout=layers=2", "--tokens",
               tokens4, "-i", page},
              "put: layout: missing key kv_heads", hint);
  ExpectUsageContaining({kNoNode, "put", "--tenant=a c", "--model=m",
                         std::string("--layout=") + kLayout, "--tokens", tokens4, "-i", page},
                        "strata: put: Namespace.tenant byte 1");
  ExpectUsage(put({"--tokens", tokens5, "-i", page}),
              "put: token file " + tokens5 + ": 5 tokens are not whole pages of page_tokens 4",
              hint);
  ExpectUsage(put({"--tokens", bad_tokens, "-i", page}),
              "put: token file " + bad_tokens +
                  ": line 1: \"three\" is not a token id (an integer in 0..4294967295)",
              hint);
  ExpectUsage(
      put({"--tokens", tokens4, "-i", short_page}),
      "put: input " + short_page + " has 255 bytes; the layout needs 1 pages x 256 = 256 bytes",
      hint);
  ExpectUsage(put({"--tokens", "-", "-i", "-"}), "put: --tokens and -i cannot both read stdin",
              hint);
  ExpectUsage(put({"--tokens", "-", "-i", page}), "put: token file -: no tokens", hint, "");
  ExpectUsage(put({"--tokens", tokens4, "-i", page, "--parent", "abc:1"}),
              "put: --parent: \"abc\" is not a blob key (32 hex digits)", hint);
  ExpectUsage({kNoNode, "match", "--tenant=acme", "--model=m", "--layout=layers=2,kv_heads=1",
               "--tokens", tokens4},
              "match: layout: missing key head_dim", "strata match --help");
  ExpectUsage({kNoNode, "match", "--tenant=acme", "--model=m", std::string("--layout=") + kLayout},
              "match: token file <stdin>: line 2: \"x\" is not a token id (an integer in "
              "0..4294967295)",
              "strata match --help", "1 2\nx\n");

  // A missing input file is a failed operation (exit 1), not a usage error.
  const CliRun missing = RunArgs(put({"--tokens", tokens4, "-i", "/nonexistent/kv.bin"}));
  EXPECT_EQ(missing.code, kExitFailed);
  EXPECT_EQ(missing.err,
            "strata: put: NOT_FOUND: cannot open /nonexistent/kv.bin: No such file or directory "
            "(errno 2)\n");
  for (const std::string& path : {tokens5, tokens4, bad_tokens, page, short_page}) {
    std::remove(path.c_str());
  }
}

TEST(RunCliTest, UnreachableNodeExitsThree) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {kNoNode, "--timeout=3s", "status"},
           {kNoNode, "--timeout=3s", "stat", "0123456789abcdef0123456789abcdef"},
           {"--timeout=3s", "--json", "tiers", kNoNode}}) {
    const CliRun run = RunArgs(args);
    EXPECT_EQ(run.code, kExitUnreachable) << run.err;
    EXPECT_THAT(run.err, StartsWith("strata: " + args[2] + ": "));
    EXPECT_THAT(run.err,
                ::testing::AnyOf(HasSubstr(": UNAVAILABLE: "), HasSubstr(": DEADLINE_EXCEEDED: ")));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_THAT(run.out, IsEmpty());
  }
}

TEST(RunCliTest, NodeFromEnvironment) {
  // $STRATA_NODE is used when --node is absent; --node wins over it.
  ASSERT_EQ(setenv("STRATA_NODE", "not an address", 1), 0);
  const CliRun from_env = RunArgs({"status"});
  EXPECT_EQ(from_env.code, kExitUsage);
  EXPECT_THAT(from_env.err, HasSubstr("not an address"));
  const CliRun flag_wins = RunArgs({kNoNode, "--timeout=2s", "status"});
  EXPECT_EQ(flag_wins.code, kExitUnreachable) << flag_wins.err;
  ASSERT_EQ(unsetenv("STRATA_NODE"), 0);
}

}  // namespace
}  // namespace strata::cli
