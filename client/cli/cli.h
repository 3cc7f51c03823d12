// RunCli: the whole `strata` program behind main(), with its streams passed in so tests can
// run it in-process.
//
//   strata [GLOBAL FLAGS] COMMAND [FLAGS] [ARGS]
//   strata help [COMMAND] | strata --help | strata COMMAND --help | strata --version
//
// Global flags (accepted before the command or among its flags, once):
//   --node HOST:PORT    the node's gRPC address; default $STRATA_NODE, else 127.0.0.1:7400
//   --token-file PATH   the tenant's bearer token, from a file; default $STRATA_TOKEN
//   --timeout DURATION  deadline of each call (default 10s)
//   --json              one JSON value on stdout instead of tables
//
// Output: results on `io.out`; errors on `io.err` as one line
//   strata: <command>: <CODE>: <message>        (exit 1 or 3)
//   strata: <command>: <reason>                 (exit 2, then a line pointing at --help)
// Exit codes: exit_codes.h. Reads the environment (STRATA_NODE, STRATA_UCX_TLS, STRATA_TOKEN)
// through ClientOptions::FromEnvironment. Not thread-safe (one run at a time per process, as
// a program).
#pragma once

#include <string>
#include <vector>

#include "client/cli/command.h"

namespace strata::cli {

// Every command, in the order the top-level help lists them, with the global flags
// appended to each spec.
const std::vector<Command>& Commands();

// The global flags.
std::vector<FlagSpec> GlobalFlags();

// Runs the program with argv[1..] = `args`; returns the exit code.
int RunCli(const std::vector<std::string>& args, CommandIo io);

}  // namespace strata::cli
