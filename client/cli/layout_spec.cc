#include "client/cli/layout_spec.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace strata::cli {
namespace {

constexpr const char* kKeys[] = {"layers",      "kv_heads", "head_dim", "dtype",
                                 "page_tokens", "format",   "tp"};

bool KnownKey(const std::string& key) {
  for (const char* known : kKeys) {
    if (key == known) return true;
  }
  return false;
}

absl::StatusOr<uint32_t> ParseU32(const std::string& key, const std::string& value) {
  uint32_t parsed = 0;
  bool digits = !value.empty();
  for (char c : value) digits = digits && c >= '0' && c <= '9';
  if (!digits || !absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout ", key, ": \"", value, "\" is not an integer in 0..4294967295"));
  }
  return parsed;
}

absl::StatusOr<radix::KvFormat> ParseFormat(const std::string& value) {
  if (value == "kv" || value == "key_value") return radix::KvFormat::kKeyValue;
  if (value == "mla" || value == "mla_latent") return radix::KvFormat::kMlaLatent;
  return absl::InvalidArgumentError(
      absl::StrCat("layout format: \"", value, "\" is not kv, key_value, mla or mla_latent"));
}

}  // namespace

absl::StatusOr<radix::KvLayout> ParseLayoutSpec(const std::string& spec) {
  std::map<std::string, std::string> values;
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout: empty entry in \"", spec, "\" (expected key=value,...)"));
    }
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("layout: \"", part, "\" is not key=value"));
    }
    const std::string key(absl::StripAsciiWhitespace(part.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(part.substr(eq + 1)));
    if (!KnownKey(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout: unknown key \"", key,
                       "\" (keys: layers, kv_heads, head_dim, dtype, page_tokens, format, tp)"));
    }
    if (!values.emplace(key, value).second) {
      return absl::InvalidArgumentError(absl::StrCat("layout: key ", key, " given twice"));
    }
  }
  for (const char* required : {"layers", "kv_heads", "head_dim", "dtype", "page_tokens"}) {
    if (values.count(required) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("layout: missing key ", required));
    }
  }

  radix::KvLayout layout;
  absl::StatusOr<uint32_t> number = ParseU32("layers", values["layers"]);
  if (!number.ok()) return number.status();
  layout.num_layers = *number;
  number = ParseU32("kv_heads", values["kv_heads"]);
  if (!number.ok()) return number.status();
  layout.num_kv_heads = *number;
  number = ParseU32("head_dim", values["head_dim"]);
  if (!number.ok()) return number.status();
  layout.head_dim = *number;
  number = ParseU32("page_tokens", values["page_tokens"]);
  if (!number.ok()) return number.status();
  layout.page_tokens = *number;

  absl::StatusOr<radix::DType> dtype = radix::ParseDType(values["dtype"]);
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("layout dtype: ", dtype.status().message()));
  }
  layout.dtype = *dtype;

  layout.format = radix::KvFormat::kKeyValue;
  if (values.count("format") != 0) {
    absl::StatusOr<radix::KvFormat> format = ParseFormat(values["format"]);
    if (!format.ok()) return format.status();
    layout.format = *format;
  }

  layout.tp_rank = 0;
  layout.tp_world = 1;
  if (values.count("tp") != 0) {
    const std::string& tp = values["tp"];
    const size_t slash = tp.find('/');
    if (slash == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout tp: \"", tp, "\" is not RANK/WORLD (e.g. 0/1)"));
    }
    number = ParseU32("tp rank", tp.substr(0, slash));
    if (!number.ok()) return number.status();
    layout.tp_rank = *number;
    number = ParseU32("tp world", tp.substr(slash + 1));
    if (!number.ok()) return number.status();
    layout.tp_world = *number;
  }

  if (absl::Status valid = layout.Validate(); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("layout: ", valid.message()));
  }
  return layout;
}

std::string FormatLayoutSpec(const radix::KvLayout& layout) {
  const char* format = layout.format == radix::KvFormat::kKeyValue    ? "kv"
                       : layout.format == radix::KvFormat::kMlaLatent ? "mla"
                                                                      : nullptr;
  return absl::StrCat("layers=", layout.num_layers, ",kv_heads=", layout.num_kv_heads,
                      ",head_dim=", layout.head_dim, ",dtype=", radix::DTypeName(layout.dtype),
                      ",page_tokens=", layout.page_tokens, ",format=",
                      format != nullptr ? std::string(format) : radix::KvFormatName(layout.format),
                      ",tp=", layout.tp_rank, "/", layout.tp_world);
}

}  // namespace strata::cli
