// strata rebuild: queue a TEXT blob (and optionally its prefix) for rebuild from its tokens,
// and optionally wait until it has bytes again.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/cli/blob_format.h"
#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "client/cli/table.h"
#include "client/cli/tier_format.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

// How often --wait asks Stat.
constexpr absl::Duration kPollInterval = absl::Milliseconds(100);

absl::Status RunRebuild(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));
  const bool with_prefix = args.Bool("prefix");
  std::optional<absl::Duration> wait;
  if (std::optional<std::string> text = args.Value("wait")) {
    STRATA_ASSIGN_OR_RETURN(wait, ParsePositiveDuration("--wait", *text));
  }
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(RebuildRequestResult result,
                          client->RequestRebuild(key, with_prefix, ctx.Call()));

  // --wait: poll Stat until a byte tier holds the blob, or the wait runs out.
  std::optional<BlobInfo> info;
  absl::Duration waited;
  if (wait.has_value()) {
    const absl::Time start = absl::Now();
    const absl::Time until = start + *wait;
    for (;;) {
      STRATA_ASSIGN_OR_RETURN(BlobInfo stat, client->Stat(key, false, ctx.Call()));
      waited = absl::Now() - start;
      if (HasBytes(stat.tiers)) {
        info = std::move(stat);
        break;
      }
      if (absl::Now() + kPollInterval > until) {
        // The node answered all along: the operation (a rebuild in time) failed.
        return absl::FailedPreconditionError(absl::StrCat(
            key.ToHex(), " is still ", TierList(stat.tiers), " after ", FormatDurationShort(*wait),
            " (the rebuild stays queued; is a rebuild worker running? see strata-worker and "
            "strata tiers)"));
      }
      absl::SleepFor(kPollInterval);
    }
  }

  if (ctx.json()) {
    Json json;
    json["key"] = key.ToHex();
    json["with_prefix"] = with_prefix;
    json["queued"] = result.queued;
    json["already_queued"] = result.already_queued;
    json["resident"] = result.resident;
    if (info.has_value()) {
      json["waited_ms"] = absl::ToInt64Milliseconds(waited);
      json["tiers"] = TierNamesJson(info->tiers);
    }
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << RebuildRequestSummary(key, with_prefix, result) << "\n";
  if (info.has_value()) {
    ctx.out() << "rebuilt: " << key.ToHex() << " is in " << TierList(info->tiers) << " after "
              << FormatDurationShort(waited) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

Command RebuildCommand() {
  return {{.name = "rebuild",
           .summary = "Queue a TEXT blob for rebuild from its tokens.",
           .details = "Calls RequestRebuild: a blob whose KV bytes were dropped (tier text) is "
                      "queued for rebuild workers (strata-worker), which recompute its KV and "
                      "fill it with an ordinary put. Idempotent: a blob already queued counts as "
                      "already queued, one with bytes as resident. NOT_FOUND (exit 1) when the "
                      "key is not in the index. With --wait, polls Stat until the blob has bytes "
                      "again; still TEXT when the wait ends: FAILED_PRECONDITION (exit 1, the "
                      "rebuild stays queued). JSON: {key, with_prefix, queued, already_queued, "
                      "resident[, waited_ms, tiers[]]}.",
           .flags = {{.name = "prefix",
                      .takes_value = false,
                      .help = "also rebuild every TEXT blob on its prefix path (parents first)"},
                     {.name = "wait",
                      .value_name = "DURATION",
                      .help = "wait up to this long until the blob has bytes again"}},
           .positionals = {{.name = "KEY", .help = "blob key (32 hex digits)"}}},
          RunRebuild};
}

}  // namespace strata::cli
