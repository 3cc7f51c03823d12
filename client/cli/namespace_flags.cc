#include "client/cli/namespace_flags.h"

#include "absl/strings/str_cat.h"

#include "client/cli/exit_codes.h"
#include "client/cli/layout_spec.h"

namespace strata::cli {

std::vector<FlagSpec> NamespaceFlags(bool required) {
  return {
      {.name = "tenant",
       .value_name = "T",
       .help = "tenant of the namespace",
       .required = required},
      {.name = "model", .value_name = "M", .help = "model of the namespace", .required = required},
      {.name = "layout",
       .value_name = "SPEC",
       .help = "KV layout: layers=N,kv_heads=N,head_dim=N,dtype=D,page_tokens=N and optionally "
               "format=kv|mla (default kv), tp=RANK/WORLD (default 0/1); dtype: bf16, fp16, fp32, "
               "fp8_e4m3, fp8_e5m2, int8, uint8",
       .required = required},
  };
}

absl::StatusOr<std::optional<Namespace>> NamespaceFromFlags(const ParsedArgs& args) {
  const bool any = args.Has("tenant") || args.Has("model") || args.Has("layout");
  if (!any) return std::optional<Namespace>();
  for (const char* flag : {"tenant", "model", "layout"}) {
    if (!args.Has(flag)) {
      return UsageError(
          absl::StrCat("--tenant, --model and --layout go together: missing --", flag));
    }
  }
  absl::StatusOr<KvLayout> layout = ParseLayoutSpec(*args.Value("layout"));
  if (!layout.ok()) return AsUsageError(layout.status());
  absl::StatusOr<Namespace> ns =
      Namespace::Create(*args.Value("tenant"), *args.Value("model"), *layout);
  if (!ns.ok()) return AsUsageError(ns.status());
  return std::optional<Namespace>(*std::move(ns));
}

}  // namespace strata::cli
