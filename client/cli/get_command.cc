// strata get: the whole blob (every page of every layer) into a file; with --cluster, a
// sequence's readable cached prefix from every node holding part of it.
#include <algorithm>
#include <memory>
#include <optional>
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

// --cluster: the readable cached prefix of a token sequence, from every node holding part of
// it, into the file.
absl::Status RunClusterGet(CommandContext& ctx, const ParsedArgs& args, const std::string& output) {
  if (!args.Positional(0).empty()) {
    return UsageError("with --cluster, get takes --tokens and the namespace, not a KEY");
  }
  STRATA_ASSIGN_OR_RETURN(std::optional<Namespace> ns, NamespaceFromFlags(args));
  if (!ns.has_value() || !args.Has("tokens")) {
    return UsageError("with --cluster, get needs --tenant, --model, --layout and --tokens");
  }
  STRATA_ASSIGN_OR_RETURN(const std::vector<TokenId> tokens,
                          ReadTokenFile(*args.Value("tokens"), ctx.in()));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> cluster, ConnectCluster(ctx, args));
  STRATA_ASSIGN_OR_RETURN(const ClusterMatch match,
                          cluster->Match(*ns, tokens, LookupPhase::kUnspecified, ctx.Call()));
  const uint32_t pages = match.match.ReadablePages();
  const uint64_t bytes = PagesBytes(ns->layout(), pages);
  auto buffer = std::make_unique_for_overwrite<char[]>(std::max<uint64_t>(bytes, 1));
  STRATA_RETURN_IF_ERROR(
      cluster->Read(*ns, match, pages, MemoryDescriptor::Host(buffer.get(), bytes), ctx.Call()));
  STRATA_RETURN_IF_ERROR(WriteLocalFile(output, {buffer.get(), bytes}, ctx.out()));
  if (output == "-") return absl::OkStatus();
  std::set<std::string> nodes;
  for (size_t i = 0; i < match.owners.size(); ++i) {
    if (match.match.segments[i].seq_page_begin < pages) nodes.insert(match.owners[i]);
  }
  if (ctx.json()) {
    Json json;
    json["file"] = output;
    json["pages"] = pages;
    json["matched_pages"] = match.match.matched_pages;
    json["bytes"] = bytes;
    json["nodes"] = nodes;
    json["layout"] = LayoutJson(ns->layout());
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "wrote " << FormatBytes(bytes) << " (" << bytes << " bytes, " << pages
            << " readable pages of " << match.match.matched_pages << " matched) from "
            << nodes.size() << " node(s) to " << output << "\n";
  return absl::OkStatus();
}

absl::Status RunGet(CommandContext& ctx, const ParsedArgs& args) {
  const std::string output = *args.Value("output");
  if (!ctx.cluster_url().empty()) return RunClusterGet(ctx, args, output);
  if (args.Positional(0).empty()) return UsageError("get: give the blob's KEY");
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));

  STRATA_ASSIGN_OR_RETURN(Client * client, ctx.client());
  STRATA_ASSIGN_OR_RETURN(BlobInfo info, client->Stat(key, /*include_tokens=*/false, ctx.Call()));
  STRATA_ASSIGN_OR_RETURN(Namespace ns, Namespace::Create(info.tenant, info.model, info.layout));
  const uint64_t bytes = PagesBytes(info.layout, info.pages);
  // Read fails (or the blob is gone) before the output file is touched.
  auto buffer = std::make_unique_for_overwrite<char[]>(bytes);
  const ReadRange range{key, 0, info.pages};
  const MemoryDescriptor destination = MemoryDescriptor::Host(buffer.get(), bytes);
  STRATA_RETURN_IF_ERROR(client->Read(ns, {&range, 1}, {&destination, 1}, ctx.Call()));
  STRATA_RETURN_IF_ERROR(WriteLocalFile(output, {buffer.get(), bytes}, ctx.out()));

  if (output == "-") return absl::OkStatus();  // stdout carries the bytes only
  if (ctx.json()) {
    Json json;
    json["key"] = key.ToHex();
    json["file"] = output;
    json["pages"] = info.pages;
    json["bytes"] = bytes;
    json["layout"] = LayoutJson(info.layout);
    ctx.out() << DumpJson(json) << "\n";
    return absl::OkStatus();
  }
  ctx.out() << "wrote " << FormatBytes(bytes) << " (" << bytes << " bytes, " << info.pages
            << " pages) of " << key.ToHex() << " to " << output << "\n";
  return absl::OkStatus();
}

}  // namespace

Command GetCommand() {
  std::vector<FlagSpec> flags = {{.name = "output",
                                  .short_name = 'o',
                                  .value_name = "FILE",
                                  .help = "where to write the bytes; - for stdout",
                                  .required = true}};
  for (FlagSpec& f : NamespaceFlags(/*required=*/false)) flags.push_back(std::move(f));
  flags.push_back({.name = "tokens",
                   .value_name = "FILE",
                   .help = "with --cluster: the sequence's token ids from page 0; - for stdin"});
  flags.push_back(SegmentPagesFlag());
  return {{.name = "get",
           .summary = "Read a whole blob (or, with --cluster, a sequence's cached prefix) into a "
                      "file.",
           .details = "Calls Stat (for the namespace and size), then Read of pages [0, pages) of "
                      "every layer; every chunk is checked against the checksum the node "
                      "recorded (DATA_LOSS, exit 1, on a mismatch). The file holds the bytes "
                      "as radix::BlobLayout: layer-major, layer l page p at (l * pages + p) * "
                      "bytes_per_layer_page. A regular file is replaced only once every byte "
                      "arrived. With -o - the bytes go to stdout and nothing else is printed "
                      "there. JSON: {key, file, pages, bytes, layout}. With --cluster (or "
                      "$STRATA_CLUSTER) there is no KEY: --tokens names a sequence of the "
                      "namespace (--tenant, --model, --layout), the cluster looks it up and its "
                      "readable cached prefix is read from every node holding part of it, "
                      "straight into place. JSON: {file, pages, matched_pages, bytes, nodes, "
                      "layout}.",
           .flags = std::move(flags),
           .positionals = {{.name = "KEY",
                            .help = "blob key (32 hex digits); not with --cluster",
                            .required = false}}},
          RunGet};
}

}  // namespace strata::cli
