// strata match: the longest cached prefix of a token sequence.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/cluster_connect.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/namespace_flags.h"
#include "client/cli/table.h"
#include "client/cli/token_file.h"
#include "strata/base/status_macros.h"
#include "strata/cluster_client.h"

namespace strata::cli {
namespace {

// --phase: "prefill", "midfill", "decode" (case-insensitive); absent: kUnspecified.
absl::StatusOr<LookupPhase> PhaseFromFlag(const ParsedArgs& args) {
  const std::optional<std::string> text = args.Value("phase");
  if (!text.has_value()) return LookupPhase::kUnspecified;
  const std::string lower = absl::AsciiStrToLower(*text);
  for (LookupPhase phase : {LookupPhase::kPrefill, LookupPhase::kMidfill, LookupPhase::kDecode}) {
    if (lower == LookupPhaseName(phase)) return phase;
  }
  return UsageError(
      absl::StrCat("--phase: \"", *text, "\" is not a phase (prefill, midfill, decode)"));
}

// With --cluster (or $STRATA_CLUSTER): the cluster's answer (strata/cluster_client.h) and the
// node holding each segment; else the node's.
absl::StatusOr<MatchResult> Lookup(CommandContext& ctx, const ParsedArgs& args, const Namespace& ns,
                                   const std::vector<TokenId>& tokens, LookupPhase phase,
                                   std::vector<std::string>* owners) {
  if (ctx.cluster_url().empty()) {
    STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
    return client->Match(ns, tokens, phase, ctx.Call());
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> cluster, ConnectCluster(ctx, args));
  STRATA_ASSIGN_OR_RETURN(ClusterMatch match, cluster->Match(ns, tokens, phase, ctx.Call()));
  *owners = std::move(match.owners);
  return std::move(match.match);
}

absl::Status RunMatch(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(const LookupPhase phase, PhaseFromFlag(args));
  STRATA_ASSIGN_OR_RETURN(std::optional<Namespace> ns, NamespaceFromFlags(args));
  const uint32_t page_tokens = ns->layout().page_tokens;
  const std::string tokens_path = args.ValueOr("tokens", "-");
  STRATA_ASSIGN_OR_RETURN(const std::vector<TokenId> tokens, ReadTokenFile(tokens_path, ctx.in()));
  std::vector<std::string> owners;  // with --cluster: the node of each segment
  STRATA_ASSIGN_OR_RETURN(MatchResult match, Lookup(ctx, args, *ns, tokens, phase, &owners));

  const uint32_t query_pages = radix::WholePages(tokens.size(), page_tokens);
  const uint64_t matched_tokens = radix::PageTokenCount(match.matched_pages, page_tokens);
  if (ctx.json()) {
    Json json;
    json["matched_pages"] = match.matched_pages;
    json["matched_tokens"] = matched_tokens;
    json["query_pages"] = query_pages;
    json["query_tokens"] = tokens.size();
    json["readable_pages"] = match.ReadablePages();
    json["truncated"] = match.truncated;
    Json& segments = json["segments"] = Json::array();
    for (size_t i = 0; i < match.segments.size(); ++i) {
      Json segment = SegmentJson(match.segments[i]);
      if (!owners.empty()) segment["node"] = owners[i];
      segments.push_back(std::move(segment));
    }
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }

  ctx.out() << "matched " << match.matched_pages << " of " << query_pages << " pages ("
            << matched_tokens << " of " << tokens.size() << " tokens)"
            << (match.truncated ? "; truncated: more pages may be cached" : "") << "\n";
  if (match.ReadablePages() < match.matched_pages) {
    ctx.out() << "readable: the first " << match.ReadablePages()
              << " pages; the rest hold text only (KV bytes dropped, tokens kept): strata "
                 "rebuild --prefix "
              << match.TextSegments().back().blob.ToHex() << "\n";
  }
  if (match.segments.empty()) return absl::OkStatus();
  std::vector<Column> columns = {{"SEQ PAGES"},  {"PAGES", Align::kRight}, {"BLOB"},
                                 {"BLOB PAGES"}, {"OF", Align::kRight},    {"TIER"}};
  if (!owners.empty()) columns.push_back({"NODE"});
  Table table(std::move(columns));
  for (size_t i = 0; i < match.segments.size(); ++i) {
    const Segment& s = match.segments[i];
    std::vector<std::string> row = {
        absl::StrCat("[", s.seq_page_begin, ", ", s.seq_page_begin + s.page_count, ")"),
        absl::StrCat(s.page_count),
        s.blob.ToHex(),
        absl::StrCat("[", s.blob_page_offset, ", ", s.blob_page_offset + s.page_count, ")"),
        absl::StrCat(s.blob_pages),
        std::string(TierName(s.tier))};
    if (!owners.empty()) row.push_back(owners[i]);
    table.AddRow(std::move(row));
  }
  ctx.out() << "\n" << table.Render();
  return absl::OkStatus();
}

}  // namespace

Command MatchCommand() {
  std::vector<FlagSpec> flags = NamespaceFlags(/*required=*/true);
  flags.push_back({.name = "tokens",
                   .value_name = "FILE",
                   .help = "the query's token ids from sequence page 0 (default: - = stdin)"});
  flags.push_back(SegmentPagesFlag());
  flags.push_back({.name = "phase",
                   .value_name = "PHASE",
                   .help = "the lookup's phase for the node's statistics: prefill, midfill or "
                           "decode (default: the node infers it)"});
  return {
      {.name = "match",
       .summary = "Show the longest cached prefix of a token sequence.",
       .details = "Calls Match: whole pages from sequence page 0 (a trailing partial page is "
                  "ignored). Prints matched pages and tokens, then one line per segment: the "
                  "sequence pages it covers, the blob holding them, which pages of that blob, and "
                  "the tier. Pages of tier text are matched (their tokens are kept) but have "
                  "no KV bytes: only the pages before the first of them are readable. A miss "
                  "is exit 0 with 0 pages matched; a namespace the node has never seen is "
                  "NOT_FOUND (exit 1). --phase only changes which phase the node counts the "
                  "lookup in (strata tiers). With --cluster (or $STRATA_CLUSTER) the lookup "
                  "asks every segment's owner in the cluster at once and each segment names "
                  "its node. JSON: {matched_pages, matched_tokens, query_pages, "
                  "query_tokens, readable_pages, truncated, segments[] (text segments with "
                  "their tokens[]; with --cluster each has its node)}.",
       .flags = std::move(flags)},
      RunMatch};
}

}  // namespace strata::cli
