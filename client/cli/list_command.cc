// strata ls: blob records a page at a time, following page tokens.
#include <algorithm>

#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/namespace_flags.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

constexpr uint64_t kDefaultLimit = 100;
constexpr uint32_t kMaxPerCall = 1000;  // the node clamps List's limit here (docs/api.md)

absl::Status RunList(CommandContext& ctx, const ParsedArgs& args) {
  ListOptions list;
  STRATA_ASSIGN_OR_RETURN(list.ns, NamespaceFromFlags(args));
  if (std::optional<std::string> hash = args.Value("namespace")) {
    if (list.ns.has_value()) {
      return UsageError("--namespace and --tenant/--model/--layout exclude each other");
    }
    PrefixHash h0;
    if (!PrefixHash::FromHex(*hash, &h0)) {
      return UsageError(absl::StrCat("--namespace: \"", *hash,
                                     "\" is not a namespace hash (32 hex digits, as stat shows)"));
    }
    list.namespace_hash = h0;
  }
  uint64_t limit = kDefaultLimit;
  if (std::optional<std::string> text = args.Value("limit")) {
    STRATA_ASSIGN_OR_RETURN(limit, ParseUintValue("--limit", *text));
    if (limit == 0) return UsageError("--limit: must be at least 1 (or use --all)");
  }
  const bool all = args.Bool("all");
  if (all && args.Has("limit")) return UsageError("--all and --limit exclude each other");
  list.page_token = args.ValueOr("page-token", "");

  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  std::vector<BlobInfo> blobs;
  std::string next;
  while (true) {
    const uint64_t wanted =
        all ? kMaxPerCall : std::min<uint64_t>(limit - blobs.size(), kMaxPerCall);
    list.limit = static_cast<uint32_t>(wanted);
    STRATA_ASSIGN_OR_RETURN(ListResult page, client->List(list, ctx.Call()));
    for (BlobInfo& info : page.blobs) blobs.push_back(std::move(info));
    next = page.next_page_token;
    if (next.empty() || (!all && blobs.size() >= limit)) break;
    list.page_token = next;
  }

  if (ctx.json()) {
    Json json;
    Json& blobs_json = json["blobs"] = Json::array();
    for (const BlobInfo& info : blobs) {
      blobs_json.push_back(BlobInfoJson(info, /*with_tokens=*/false));
    }
    json["next_page_token"] = next;
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }

  if (blobs.empty()) {
    ctx.out() << "no blobs\n";
  } else {
    Table table({{"KEY"},
                 {"TENANT"},
                 {"MODEL"},
                 {"PAGES", Align::kRight},
                 {"FIRST", Align::kRight},
                 {"BYTES", Align::kRight},
                 {"TIERS"},
                 {"PINNED"},
                 {"LEASES", Align::kRight},
                 {"HITS", Align::kRight},
                 {"LAST ACCESS"}});
    for (const BlobInfo& info : blobs) {
      table.AddRow({info.key.ToHex(), info.tenant, info.model, absl::StrCat(info.pages),
                    absl::StrCat(info.first_page), FormatBytes(info.bytes), TierList(info.tiers),
                    info.pinned ? "yes" : "no", absl::StrCat(info.leases), absl::StrCat(info.hits),
                    FormatLocalTime(info.last_access)});
    }
    ctx.out() << table.Render();
  }
  if (!next.empty()) {
    ctx.out() << "(more blobs: strata ls --page-token " << next << ", or --all)\n";
  }
  return absl::OkStatus();
}

}  // namespace

Command ListCommand() {
  std::vector<FlagSpec> flags = {
      {.name = "namespace",
       .value_name = "HASH",
       .help = "only blobs of the namespace with this hash (h_0, as stat shows it)"},
  };
  for (FlagSpec& flag : NamespaceFlags(/*required=*/false)) {
    flag.help = "only blobs of this namespace: " + flag.help;
    flags.push_back(std::move(flag));
  }
  flags.push_back({.name = "limit",
                   .value_name = "N",
                   .help = "show at most N blobs (default 100), fetching as many pages as needed"});
  flags.push_back({.name = "all", .takes_value = false, .help = "show every blob"});
  flags.push_back({.name = "page-token",
                   .value_name = "TOKEN",
                   .help = "continue a listing where an earlier one stopped"});
  return {{.name = "ls",
           .summary = "List blob records in ascending key order.",
           .details = "Calls List a page at a time (at most 1000 records per call) and follows "
                      "the page tokens until --limit records (default 100) or, with --all, "
                      "until the end. When more remain, the table ends with the token to "
                      "continue from. JSON: {blobs[], next_page_token} (\"\" at the end).",
           .flags = std::move(flags)},
          RunList};
}

}  // namespace strata::cli
