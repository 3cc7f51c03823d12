// strata put: one blob from a file (two-phase put through the client library).
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/cluster_connect.h"
#include "client/cli/commands.h"
#include "client/cli/exit_codes.h"
#include "client/cli/json_output.h"
#include "client/cli/local_files.h"
#include "client/cli/namespace_flags.h"
#include "client/cli/table.h"
#include "client/cli/token_file.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

absl::Status RunPut(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(std::optional<Namespace> ns, NamespaceFromFlags(args));
  const KvLayout& layout = ns->layout();
  const bool cluster = !ctx.cluster_url().empty();
  std::optional<Parent> parent;
  if (std::optional<std::string> text = args.Value("parent")) {
    if (cluster) return UsageError("with --cluster, put finds the parent itself: no --parent");
    STRATA_ASSIGN_OR_RETURN(parent, ParseParent("--parent", *text));
  }
  uint32_t from_page = 0;
  if (std::optional<std::string> text = args.Value("from-page")) {
    if (!cluster) return UsageError("--from-page goes with --cluster");
    STRATA_ASSIGN_OR_RETURN(const uint64_t v, ParseUintValue("--from-page", *text, UINT32_MAX));
    from_page = static_cast<uint32_t>(v);
  }
  const std::string tokens_path = *args.Value("tokens");
  const std::string input_path = *args.Value("input");
  if (tokens_path == "-" && input_path == "-") {
    return UsageError("--tokens and -i cannot both read stdin");
  }

  // Local files: I/O failures are exit 1, content that does not fit is a usage error.
  STRATA_ASSIGN_OR_RETURN(const std::vector<TokenId> tokens, ReadTokenFile(tokens_path, ctx.in()));
  if (tokens.empty()) return UsageError(absl::StrCat("token file ", tokens_path, ": no tokens"));
  if (tokens.size() % layout.page_tokens != 0) {
    return UsageError(absl::StrCat("token file ", tokens_path, ": ", tokens.size(),
                                   " tokens are not whole pages of page_tokens ",
                                   layout.page_tokens));
  }
  const uint32_t all_pages = static_cast<uint32_t>(tokens.size() / layout.page_tokens);
  if (from_page >= all_pages) {
    return UsageError(
        absl::StrCat("--from-page ", from_page, ": the sequence has ", all_pages, " pages"));
  }
  const uint32_t pages = all_pages - from_page;
  const uint64_t expected_bytes = PagesBytes(layout, pages);
  STRATA_ASSIGN_OR_RETURN(std::string input, ReadLocalFile(input_path, ctx.in()));
  if (input.size() != expected_bytes) {
    return UsageError(absl::StrCat("input ", input_path, " has ", input.size(),
                                   " bytes; the layout needs ", pages, " pages x ",
                                   layout.BytesPerPage(), " = ", expected_bytes, " bytes"));
  }

  if (cluster) {
    // The whole sequence from page 0 (the segment hashes need it); pages [from_page, end)
    // go to their segments' owners.
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> nodes, ConnectCluster(ctx, args));
    STRATA_ASSIGN_OR_RETURN(
        const ClusterWriteResult written,
        nodes->Write(*ns, tokens, from_page, MemoryDescriptor::Host(input.data(), input.size()),
                     std::nullopt, ctx.Call()));
    uint32_t existed = 0, indexed = 0;
    for (const WriteResult& piece : written.pieces) {
      existed += piece.existed;
      indexed += piece.indexed_pages;
    }
    if (ctx.json()) {
      Json json;
      json["pieces"] = Json::array();
      for (size_t i = 0; i < written.pieces.size(); ++i) {
        json["pieces"].push_back({{"key", written.pieces[i].key.ToHex()},
                                  {"node", written.owners[i]},
                                  {"first_page", written.first_pages[i]},
                                  {"existed", written.pieces[i].existed},
                                  {"indexed_pages", written.pieces[i].indexed_pages}});
      }
      json["pages"] = pages;
      json["from_page"] = from_page;
      json["bytes"] = expected_bytes;
      json["text_replicas"] = written.text_replicas;
      ctx.out() << DumpJson(json) << "\n";
      return absl::OkStatus();
    }
    ctx.out() << "wrote pages [" << from_page << ", " << all_pages << ") as "
              << written.pieces.size() << " piece(s) on "
              << std::set<std::string>(written.owners.begin(), written.owners.end()).size()
              << " node(s): " << indexed << " pages indexed, " << existed
              << " piece(s) there already; " << written.text_replicas << " TEXT replica(s)\n";
    return absl::OkStatus();
  }
  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(
      WriteResult result,
      client->Write(*ns, parent, tokens, MemoryDescriptor::Host(input.data(), input.size()),
                    ctx.Call()));

  if (ctx.json()) {
    Json json;
    json["key"] = result.key.ToHex();
    json["existed"] = result.existed;
    json["indexed_pages"] = result.indexed_pages;
    json["pages"] = pages;
    json["tokens"] = tokens.size();
    json["bytes"] = expected_bytes;
    json["parent"] = parent.has_value()
                         ? Json{{"key", parent->key.ToHex()}, {"pages", parent->pages}}
                         : Json(nullptr);
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << RenderKeyValues({
      {"key", result.key.ToHex()},
      {"existed", result.existed ? "yes (nothing sent)" : "no"},
      {"pages", absl::StrCat(pages, " (", tokens.size(), " tokens)")},
      {"bytes", absl::StrCat(FormatBytes(expected_bytes), " (", expected_bytes, ")")},
      {"indexed pages", absl::StrCat(result.indexed_pages)},
      {"parent", ParentText(parent)},
  });
  return absl::OkStatus();
}

}  // namespace

Command PutCommand() {
  std::vector<FlagSpec> flags = NamespaceFlags(/*required=*/true);
  flags.push_back({.name = "tokens",
                   .value_name = "FILE",
                   .help = "the blob's own token ids (whole pages); - for stdin",
                   .required = true});
  flags.push_back({.name = "parent",
                   .value_name = "KEY:PAGES",
                   .help = "continue the first PAGES pages of the sequence ending in blob KEY"});
  flags.push_back({.name = "from-page",
                   .value_name = "N",
                   .help = "with --cluster: --tokens is the whole sequence from page 0 and the "
                           "file holds its pages [N, end) (default 0)"});
  flags.push_back(SegmentPagesFlag());
  flags.push_back({.name = "input",
                   .short_name = 'i',
                   .value_name = "FILE",
                   .help = "the blob's KV bytes (radix::BlobLayout); - for stdin",
                   .required = true});
  return {
      {.name = "put",
       .summary = "Write one blob from a file.",
       .details = "Writes the KV bytes of FILE as one blob of the namespace (--tenant, --model, "
                  "--layout), holding the tokens of --tokens (a token file: integers separated by "
                  "blanks, newlines or commas, or a JSON array), continuing --parent or from "
                  "sequence page 0. FILE must hold exactly pages x bytes_per_page bytes, "
                  "layer-major (as get writes them). Nothing is sent when the key exists already. "
                  "Prints the key and whether it existed. JSON: {key, existed, indexed_pages, "
                  "pages, tokens, bytes, parent}. With --cluster (or $STRATA_CLUSTER): --tokens "
                  "is the whole sequence from page 0, FILE its pages [--from-page, end), written "
                  "in pieces split at segment boundaries to their owners (the parent found by "
                  "the cluster), token text to the next node too. JSON: {pieces[] {key, node, "
                  "first_page, existed, indexed_pages}, pages, from_page, bytes, "
                  "text_replicas}.",
       .flags = std::move(flags)},
      RunPut};
}

}  // namespace strata::cli
