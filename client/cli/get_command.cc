// strata get: the whole blob (every page of every layer) into a file.
#include <memory>

#include "absl/strings/str_cat.h"

#include "client/cli/blob_format.h"
#include "client/cli/commands.h"
#include "client/cli/json_output.h"
#include "client/cli/local_files.h"
#include "client/cli/table.h"
#include "strata/base/status_macros.h"

namespace strata::cli {
namespace {

absl::Status RunGet(CommandContext& ctx, const ParsedArgs& args) {
  STRATA_ASSIGN_OR_RETURN(BlobKey key, ParseBlobKey("KEY", args.Positional(0)));
  const std::string output = *args.Value("output");

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
  return {{.name = "get",
           .summary = "Read a whole blob (all pages, all layers) into a file.",
           .details = "Calls Stat (for the namespace and size), then Read of pages [0, pages) of "
                      "every layer; every chunk is checked against the checksum the node "
                      "recorded (DATA_LOSS, exit 1, on a mismatch). The file holds the bytes "
                      "as radix::BlobLayout: layer-major, layer l page p at (l * pages + p) * "
                      "bytes_per_layer_page. A regular file is replaced only once every byte "
                      "arrived. With -o - the bytes go to stdout and nothing else is printed "
                      "there. JSON: {key, file, pages, bytes, layout}.",
           .flags = {{.name = "output",
                      .short_name = 'o',
                      .value_name = "FILE",
                      .help = "where to write the bytes; - for stdout",
                      .required = true}},
           .positionals = {{.name = "KEY", .help = "blob key (32 hex digits)"}}},
          RunGet};
}

}  // namespace strata::cli
