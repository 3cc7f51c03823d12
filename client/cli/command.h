// Command and CommandContext: what every `strata` subcommand is made of.
//
// A Command is a CommandSpec (its flags and arguments, argument_parser.h) and a Run
// function. RunCli (cli.h) parses the arguments, builds a CommandContext and calls Run,
// then maps the returned status onto the exit code (exit_codes.h) and prints the error
// line. A Run function writes its result to ctx.out() as a table for people, or as one
// JSON value when ctx.json() (exactly one line on stdout, nothing else there), and returns
// a status: OK; a usage error (UsageError / AsUsageError) for a bad argument found before
// anything was sent; any other status as the client library or a local file returned it.
//
// CommandContext owns the strata::Client, connected on first use (so --help and usage
// errors never touch the node). Every call gets its own deadline, now + --timeout (Call()).
// One CommandContext per command run; not thread-safe.
#pragma once

#include <istream>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "client/cli/argument_parser.h"
#include "strata/client.h"
#include "strata/options.h"

namespace strata::cli {

// The process's streams, replaceable in tests.
struct CommandIo {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

class CommandContext {
 public:
  // REQUIRES: options.Validate().ok(); options.default_timeout is --timeout.
  CommandContext(ClientOptions options, bool json, CommandIo io)
      : options_(std::move(options)), json_(json), io_(io) {}

  // The client of options().node, connected on the first call.
  absl::StatusOr<Client*> client();
  // Options of one call: deadline now + --timeout.
  CallOptions Call() const { return CallOptions::WithTimeout(options_.default_timeout); }

  const ClientOptions& options() const { return options_; }
  // --cluster, else $STRATA_CLUSTER, else "" (commands that need a cluster say so).
  const std::string& cluster_url() const { return cluster_url_; }
  void set_cluster_url(std::string url) { cluster_url_ = std::move(url); }
  bool json() const { return json_; }
  std::istream& in() { return io_.in; }
  std::ostream& out() { return io_.out; }
  std::ostream& err() { return io_.err; }

 private:
  ClientOptions options_;
  bool json_;
  CommandIo io_;
  std::string cluster_url_;
  std::unique_ptr<Client> client_;
};

using CommandRun = absl::Status (*)(CommandContext& ctx, const ParsedArgs& args);

struct Command {
  CommandSpec spec;
  CommandRun run = nullptr;
};

}  // namespace strata::cli
