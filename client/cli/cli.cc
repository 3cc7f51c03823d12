#include "client/cli/cli.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::cli {
namespace {

constexpr char kProgram[] = "strata";

CommandSpec TopLevelSpec() {
  CommandSpec spec{.name = kProgram,
                   .summary = "strata: the admin CLI of a strata KV-cache node.",
                   .flags = GlobalFlags()};
  spec.flags.push_back(
      {.name = "version", .takes_value = false, .help = "print the version and exit"});
  return spec;
}

std::string TopLevelHelp() {
  std::string text = absl::StrCat(
      "usage: strata [--node HOST:PORT] [--timeout DURATION] [--json] COMMAND [ARGS]\n\n",
      "The admin CLI of a strata KV-cache node (docs/api.md).\n\ncommands:\n");
  size_t width = 0;
  for (const Command& command : Commands()) width = std::max(width, command.spec.name.size());
  for (const Command& command : Commands()) {
    absl::StrAppend(&text, "  ", command.spec.name,
                    std::string(width - command.spec.name.size() + 2, ' '), command.spec.summary,
                    "\n");
  }
  absl::StrAppend(&text, "  help", std::string(width - 4 + 2, ' '),
                  "Show the help of a command (strata help COMMAND, or COMMAND --help).\n");
  // The flags section of the generic help, without its usage and summary.
  const std::string flags = FormatHelp(TopLevelSpec(), kProgram);
  absl::StrAppend(&text, "\nglobal flags (before the command or among its flags):",
                  flags.substr(flags.find("\nflags:\n") + 7));
  absl::StrAppend(
      &text,
      "\nenvironment:\n"
      "  STRATA_NODE      the node's address when --node is not given\n"
      "  STRATA_UCX_TLS   UCX transports of the data plane (get, put), e.g. tcp\n"
      "  STRATA_TOKEN     the tenant's bearer token when --token-file is not given\n"
      "  STRATA_TLS_CA    TLS to the node, trusting these CAs, when --tls-ca is not given\n"
      "  STRATA_CLUSTER   the cluster's URL when --cluster is not given\n\n"
      "exit codes:\n"
      "  0  OK\n"
      "  1  the operation failed: the node answered an error, or a local file "
      "could not be read or written\n"
      "     (stderr: strata: COMMAND: CODE: message)\n"
      "  2  usage error: bad flags or arguments\n"
      "  3  node unreachable: UNAVAILABLE or DEADLINE_EXCEEDED\n");
  return text;
}

// The token in the file at `path`: its first line, without surrounding whitespace.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--token-file: cannot read ", path));
  std::string line;
  std::getline(in, line);
  const std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--token-file: ", path, " holds no token"));
  }
  return token;
}

int Usage(CommandIo io, const std::string& where, const absl::Status& status,
          const std::string& help_hint) {
  io.err << kProgram << ": " << where << (where.empty() ? "" : ": ") << status.message() << "\n"
         << "Try '" << help_hint << "'.\n";
  return kExitUsage;
}

// Index of the command name in args: the first argument that is neither a global flag nor a
// global flag's value; args.size() when there is none.
size_t FindCommandIndex(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> globals = GlobalFlags();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") return i;
    if (arg.rfind("--", 0) != 0 || arg.find('=') != std::string::npos) continue;
    for (const FlagSpec& flag : globals) {
      if (arg == "--" + flag.name && flag.takes_value) ++i;  // skip its value
    }
  }
  return args.size();
}

}  // namespace

std::vector<FlagSpec> GlobalFlags() {
  return {
      {.name = "node",
       .value_name = "HOST:PORT",
       .help = "the node's gRPC address (default $STRATA_NODE, else 127.0.0.1:7400)"},
      {.name = "token-file",
       .value_name = "PATH",
       .help = "read the tenant's bearer token from PATH (default $STRATA_TOKEN; needed by a "
               "node with a tenants file)"},
      {.name = "tls-ca",
       .value_name = "PATH",
       .help = "TLS to the node, trusting the CA certificates in PATH (default $STRATA_TLS_CA)"},
      {.name = "tls-cert",
       .value_name = "PATH",
       .help = "this client's certificate, for a node that requires one (with --tls-key)"},
      {.name = "tls-key", .value_name = "PATH", .help = "the private key of --tls-cert"},
      {.name = "timeout",
       .value_name = "DURATION",
       .help = "deadline of each call to the node, e.g. 500ms, 10s (default 10s)"},
      {.name = "cluster",
       .value_name = "URL",
       .help = "the cluster, etcd://HOST:PORT[,HOST:PORT...][/NAME] (default $STRATA_CLUSTER; "
               "strata cluster)"},
      {.name = "json",
       .takes_value = false,
       .help = "print one JSON value on stdout instead of tables"},
  };
}

const std::vector<Command>& Commands() {
  static const std::vector<Command>* const kCommands = [] {
    auto* commands = new std::vector<Command>{
        StatusCommand(), TiersCommand(), CapacityCommand(), ListCommand(),  StatCommand(),
        GetCommand(),    PutCommand(),   RemoveCommand(),   PinCommand(),   UnpinCommand(),
        MatchCommand(),  EvictCommand(), RebuildCommand(),  DrainCommand(), ClusterCommand(),
    };
    for (Command& command : *commands) {
      for (FlagSpec& flag : GlobalFlags()) command.spec.flags.push_back(std::move(flag));
    }
    return commands;
  }();
  return *kCommands;
}

int RunCli(const std::vector<std::string>& args, CommandIo io) {
  const size_t command_index = FindCommandIndex(args);
  const std::vector<std::string> global_args(args.begin(), args.begin() + command_index);
  absl::StatusOr<ParsedArgs> globals = ParseArguments(TopLevelSpec(), global_args);
  if (!globals.ok()) return Usage(io, "", globals.status(), "strata --help");
  if (globals->help()) {
    io.out << TopLevelHelp();
    return kExitOk;
  }
  if (globals->Bool("version")) {
    io.out << kProgram << " " << STRATA_VERSION << "\n";
    return kExitOk;
  }
  if (command_index == args.size()) {
    return Usage(io, "", UsageError("missing command"), "strata --help");
  }

  std::string name = args[command_index];
  std::vector<std::string> command_args(args.begin() + command_index + 1, args.end());
  if (name == "help") {
    if (command_args.empty()) {
      io.out << TopLevelHelp();
      return kExitOk;
    }
    name = command_args[0];
    command_args = {"--help"};
  }
  const auto& commands = Commands();
  auto command = std::find_if(commands.begin(), commands.end(),
                              [&](const Command& c) { return c.spec.name == name; });
  if (command == commands.end()) {
    return Usage(io, "", UsageError(absl::StrCat("unknown command \"", name, "\"")),
                 "strata --help");
  }
  const std::string hint = absl::StrCat("strata ", name, " --help");
  absl::StatusOr<ParsedArgs> parsed = ParseArguments(command->spec, command_args);
  if (!parsed.ok()) return Usage(io, name, parsed.status(), hint);
  if (parsed->help()) {
    io.out << FormatHelp(command->spec, kProgram);
    return kExitOk;
  }
  for (const FlagSpec& flag : GlobalFlags()) {  // --version is not among them
    if (globals->Has(flag.name) && parsed->Has(flag.name)) {
      return Usage(io, name, UsageError(absl::StrCat("--", flag.name, " given twice")), hint);
    }
  }
  auto global_value = [&](const std::string& flag) {
    return parsed->Has(flag) ? parsed->Value(flag) : globals->Value(flag);
  };

  ClientOptions options = ClientOptions::FromEnvironment();
  if (std::optional<std::string> node = global_value("node")) options.node = *node;
  if (std::optional<std::string> ca = global_value("tls-ca")) {
    options.tls = true;
    options.tls_ca_file = *ca;
  }
  if (std::optional<std::string> cert = global_value("tls-cert")) {
    options.tls = true;
    options.tls_cert_file = *cert;
  }
  if (std::optional<std::string> key = global_value("tls-key")) options.tls_key_file = *key;
  if (std::optional<std::string> path = global_value("token-file")) {
    absl::StatusOr<std::string> token = ReadTokenFile(*path);
    if (!token.ok()) return Usage(io, name, token.status(), hint);
    options.token = *std::move(token);
  }
  if (std::optional<std::string> timeout = global_value("timeout")) {
    absl::StatusOr<absl::Duration> duration = ParsePositiveDuration("--timeout", *timeout);
    if (!duration.ok()) return Usage(io, name, duration.status(), hint);
    options.default_timeout = *duration;
  }
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    // Only --node, $STRATA_NODE, --timeout, $STRATA_UCX_TLS, --token-file and $STRATA_TOKEN
    // reach the options.
    return Usage(io, name, valid, hint);
  }
  const bool json = global_value("json").value_or("false") == "true";

  CommandContext ctx(std::move(options), json, io);
  if (std::optional<std::string> cluster = global_value("cluster")) {
    ctx.set_cluster_url(*cluster);
  } else if (const char* env = std::getenv("STRATA_CLUSTER"); env != nullptr) {
    ctx.set_cluster_url(env);
  }
  const absl::Status status = command->run(ctx, *parsed);
  const int code = ExitCodeFor(status);
  if (code == kExitUsage) return Usage(io, name, status, hint);
  if (code != kExitOk) {
    io.err << kProgram << ": " << name << ": " << absl::StatusCodeToString(status.code()) << ": "
           << status.message() << "\n";
  }
  return code;
}

}  // namespace strata::cli
