// The `strata` subcommands. Each function returns the command's spec and Run function
// (command.h); the files named beside them implement them. RunCli (cli.h) collects them
// and adds the global flags (--node, --timeout, --json) to every spec.
//
// What each prints and which client call it makes is in its spec's help text and in
// client/cli/README.md. Exit codes: exit_codes.h.
#pragma once

#include "client/cli/command.h"

namespace strata::cli {

Command StatusCommand();    // node_commands.cc: Health + Tiers summary
Command TiersCommand();     // node_commands.cc: Admin.Tiers table
Command CapacityCommand();  // capacity_command.cc: Admin.Tiers' miss-ratio curves (+ --plot)
Command ListCommand();      // list_command.cc: List, following page tokens
Command StatCommand();      // blob_commands.cc: Stat
Command RemoveCommand();    // blob_commands.cc: Delete
Command PinCommand();       // blob_commands.cc: Pin
Command UnpinCommand();     // blob_commands.cc: Unpin
Command GetCommand();       // get_command.cc: Stat + Read of the whole blob into a file
Command PutCommand();       // put_command.cc: Write of one blob from a file
Command MatchCommand();     // match_command.cc: Match
Command EvictCommand();     // node_control_commands.cc: Admin.Evict
Command RebuildCommand();   // rebuild_command.cc: RequestRebuild (+ Stat polling with --wait)
Command DrainCommand();     // node_control_commands.cc: Admin.Drain
Command ClusterCommand();   // cluster_command.cc: the cluster's members from etcd

}  // namespace strata::cli
