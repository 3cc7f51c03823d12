// strata evict, strata drain: operator actions on a node.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/cli/blob_format.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/table.h"
#include "client/cli/tier_format.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

absl::Status RunEvict(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(Tier tier, ParseTier("--tier", args.ValueOr("tier", "dram")));
  const bool all = args.Bool("all");
  std::optional<uint64_t> asked;
  if (std::optional<std::string> text = args.Value("bytes")) {
    if (all) return UsageError("give --bytes SIZE or --all, not both");
    STRATA_ASSIGN_OR_RETURN(asked, ParseByteSize("--bytes", *text));
  } else if (!all) {
    return UsageError("give --bytes SIZE (how much to free) or --all (everything that can go)");
  }
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(EvictResult result,
                          client->Evict(tier, asked.value_or(UINT64_MAX), ctx.Call()));
  if (ctx.json()) {
    Json json;
    json["tier"] = std::string(TierName(tier));
    json["bytes_requested"] = asked.has_value() ? Json(*asked) : Json(nullptr);
    json["bytes_freed"] = result.bytes_freed;
    json["pages_evicted"] = result.pages_evicted;
    json["blobs_unlinked"] = result.blobs_unlinked;
    json["blobs_demoted"] = result.blobs_demoted;
    json["blobs_dropped"] = result.blobs_dropped;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << EvictSummary(tier, asked, result) << "\n";
  return absl::OkStatus();
}

absl::Status RunDrain(CommandContext& ctx, const ParsedArgs& args) {
  absl::Duration wait = absl::Seconds(30);
  if (std::optional<std::string> text = args.Value("wait")) {
    STRATA_ASSIGN_OR_RETURN(wait, ParsePositiveDuration("--wait", *text));
  }
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  // The call may take `wait` on the node, plus the usual --timeout for the round trip.
  const absl::Time deadline = absl::Now() + wait + ctx.options().default_timeout;
  absl::Status drained = client->Drain(wait, CallOptions{deadline});
  if (drained.code() == absl::StatusCode::kDeadlineExceeded && absl::Now() < deadline) {
    // The node's own answer (its wait ran out), not a lost connection: the operation failed.
    return absl::FailedPreconditionError(
        absl::StrCat("puts or read leases still in flight after ", absl::FormatDuration(wait),
                     " (the node keeps draining; see strata tiers): ", drained.message()));
  }
  STRATA_RETURN_IF_ERROR(drained);
  if (ctx.json()) {
    Json json;
    json["drained"] = true;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "drained: the node refuses new puts until it restarts; nothing in flight\n";
  return absl::OkStatus();
}

}  // namespace

Command EvictCommand() {
  return {{.name = "evict",
           .summary = "Evict bytes from a tier (dram, ssd) or token records (text).",
           .details = "Calls Admin.Evict (never retried), least recently used first, leaf "
                      "first; pinned and leased blobs never go. dram: blobs move to SSD (when "
                      "the node has one) or drop their bytes and become TEXT (rebuildable: "
                      "strata rebuild); ssd: SSD copies go (blobs without a DRAM copy become "
                      "TEXT); text: TEXT records leave the index. Freeing less than asked is "
                      "not an error. A tier the node lacks is INVALID_ARGUMENT (exit 1). JSON: "
                      "{tier, bytes_requested (null with --all), bytes_freed, pages_evicted, "
                      "blobs_unlinked, blobs_demoted, blobs_dropped}.",
           .flags = {{.name = "tier", .value_name = "TIER", .help = "dram (default), ssd, text"},
                     {.name = "bytes",
                      .value_name = "SIZE",
                      .help = "how much to free at least, e.g. 64MiB or 1000000"},
                     {.name = "all",
                      .takes_value = false,
                      .help = "free everything that can go (instead of --bytes)"}}},
          RunEvict};
}

Command DrainCommand() {
  return {{.name = "drain",
           .summary = "Stop the node accepting puts and wait for work in flight.",
           .details = "Calls Admin.Drain: from now on BeginPut answers UNAVAILABLE (reads keep "
                      "being served) until the node restarts; waits up to --wait for pending "
                      "puts and read leases. Still in flight then: FAILED_PRECONDITION, exit 1 "
                      "(the node keeps draining). JSON: {drained: true}.",
           .flags = {{.name = "wait",
                      .value_name = "DURATION",
                      .help = "how long the node waits for work in flight (default 30s)"}}},
          RunDrain};
}

}  // namespace strata::cli
