// strata stat, rm, pin, unpin: one blob by key.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "client/cli/blob_format.h"
#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

const PositionalSpec kKeyArgument = {.name = "KEY", .help = "blob key (32 hex digits)"};

absl::Status RunStat(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));
  const bool with_tokens = args.Bool("tokens");
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(BlobInfo info, client->Stat(key, with_tokens, ctx.Call()));
  if (ctx.json()) {
    ctx.out() << DumpJson(BlobInfoJson(info, with_tokens)) << "\n";
    return absl::OkStatus();
  }
  std::vector<std::pair<std::string, std::string>> lines = BlobInfoLines(info);
  if (with_tokens) lines.emplace_back("tokens", absl::StrJoin(info.tokens, " "));
  ctx.out() << RenderKeyValues(lines);
  return absl::OkStatus();
}

absl::Status RunRemove(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(DeleteResult result, client->Delete(key, ctx.Call()));
  if (ctx.json()) {
    Json json;
    json["key"] = key.ToHex();
    json["pages_removed"] = result.pages_removed;
    json["blobs_unlinked"] = result.blobs_unlinked;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "removed " << key.ToHex() << ": " << result.pages_removed << " index pages, "
            << result.blobs_unlinked << " blobs unlinked\n";
  return absl::OkStatus();
}

absl::Status RunPinOrUnpin(CommandContext& ctx, const ParsedArgs& args, bool pin) {
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_RETURN_IF_ERROR(pin ? client->Pin(key, ctx.Call()) : client->Unpin(key, ctx.Call()));
  if (ctx.json()) {
    Json json;
    json["key"] = key.ToHex();
    json["pinned"] = pin;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << (pin ? "pinned " : "unpinned ") << key.ToHex() << "\n";
  return absl::OkStatus();
}

absl::Status RunPin(CommandContext& ctx, const ParsedArgs& args) {
  return RunPinOrUnpin(ctx, args, /*pin=*/true);
}
absl::Status RunUnpin(CommandContext& ctx, const ParsedArgs& args) {
  return RunPinOrUnpin(ctx, args, /*pin=*/false);
}

}  // namespace

Command StatCommand() {
  return {{.name = "stat",
           .summary = "Show the node's record of one blob.",
           .details = "Calls Stat. NOT_FOUND (exit 1) when the key is not in the node's index. "
                      "JSON: the record as ls --json shows it, plus tokens[] with --tokens.",
           .flags = {{.name = "tokens",
                      .takes_value = false,
                      .help = "also show the blob's own token ids"}},
           .positionals = {kKeyArgument}},
          RunStat};
}

Command RemoveCommand() {
  return {{.name = "rm",
           .summary = "Delete a blob and everything cached below it.",
           .details = "Calls Delete (never retried). NOT_FOUND (exit 1) when the key is not in "
                      "the index; FAILED_PRECONDITION when it or a blob below it is pinned. "
                      "JSON: {key, pages_removed, blobs_unlinked}.",
           .positionals = {kKeyArgument}},
          RunRemove};
}

Command PinCommand() {
  return {{.name = "pin",
           .summary = "Pin a blob's whole prefix path against eviction and delete.",
           .details = "Calls Pin (idempotent). NOT_FOUND (exit 1) when the key is not in the "
                      "index. JSON: {key, pinned: true}.",
           .positionals = {kKeyArgument}},
          RunPin};
}

Command UnpinCommand() {
  return {{.name = "unpin",
           .summary = "Lift a blob's pin.",
           .details = "Calls Unpin (idempotent). NOT_FOUND (exit 1) when the key is not in the "
                      "index. JSON: {key, pinned: false}.",
           .positionals = {kKeyArgument}},
          RunUnpin};
}

}  // namespace strata::cli
