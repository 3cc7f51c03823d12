#include "client/cli/blob_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "client/cli/exit_codes.h"
#include "client/cli/layout_spec.h"
#include "client/cli/table.h"

namespace strata::cli {

absl::StatusOr<BlobKey> ParseBlobKey(const std::string& what, const std::string& text) {
  BlobKey key;
  if (!PrefixHash::FromHex(text, &key.hash)) {
    return UsageError(absl::StrCat(what, ": \"", text, "\" is not a blob key (32 hex digits)"));
  }
  if (key.hash == PrefixHash{}) {
    return UsageError(absl::StrCat(what, ": the all-zero key is reserved (unset)"));
  }
  return key;
}

absl::StatusOr<Parent> ParseParent(const std::string& what, const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return UsageError(absl::StrCat(what, ": \"", text, "\" is not KEY:PAGES"));
  }
  absl::StatusOr<BlobKey> key = ParseBlobKey(what, text.substr(0, colon));
  if (!key.ok()) return key.status();
  const std::string pages_text = text.substr(colon + 1);
  uint32_t pages = 0;
  if (pages_text.empty() || pages_text.find_first_not_of("0123456789") != std::string::npos ||
      !absl::SimpleAtoi(pages_text, &pages) || pages == 0) {
    return UsageError(absl::StrCat(what, ": \"", pages_text,
                                   "\" is not a page count (an integer in 1..4294967295)"));
  }
  return Parent{*key, pages};
}

absl::StatusOr<Tier> ParseTier(const std::string& what, const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (Tier tier : {Tier::kHbm, Tier::kDram, Tier::kSsd, Tier::kText}) {
    if (lower == TierName(tier)) return tier;
  }
  return UsageError(absl::StrCat(what, ": \"", text, "\" is not a tier (hbm, dram, ssd, text)"));
}

std::string TierList(const std::vector<Tier>& tiers) {
  if (tiers.empty()) return "-";
  return absl::StrJoin(tiers, ",", [](std::string* out, Tier tier) {
    absl::StrAppend(out, std::string(TierName(tier)));
  });
}

std::string ParentText(const std::optional<Parent>& parent) {
  if (!parent.has_value()) return "-";
  return absl::StrCat(parent->key.ToHex(), ":", parent->pages);
}

std::string Rfc3339(absl::Time time) {
  if (time == absl::UnixEpoch() || time == absl::InfinitePast()) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone());
}

std::vector<std::pair<std::string, std::string>> BlobInfoLines(const BlobInfo& info) {
  const uint64_t tokens = uint64_t{info.pages} * info.layout.page_tokens;
  return {
      {"key", info.key.ToHex()},
      {"tenant", info.tenant},
      {"model", info.model},
      {"layout", FormatLayoutSpec(info.layout)},
      {"namespace", info.namespace_hash.ToHex()},
      {"parent", ParentText(info.parent)},
      {"start hash", info.start_hash.ToHex()},
      {"pages", absl::StrCat("[", info.first_page, ", ", info.first_page + info.pages,
                             ") = ", info.pages, " pages, ", tokens, " tokens")},
      {"bytes", absl::StrCat(FormatBytes(info.bytes), " (", info.bytes, ")")},
      {"checksum", absl::StrFormat("%016x", info.checksum)},
      {"tiers", TierList(info.tiers)},
      {"pages indexed", absl::StrCat(info.pages_indexed, " of ", info.pages)},
      {"leases", absl::StrCat(info.leases)},
      {"pinned", info.pinned ? "yes" : "no"},
      {"hits", absl::StrCat(info.hits)},
      {"created", FormatLocalTime(info.created)},
      {"last access", FormatLocalTime(info.last_access)},
  };
}

void WriteLayoutJson(const KvLayout& layout, JsonWriter& json) {
  json.BeginObject();
  json.Key("spec").String(FormatLayoutSpec(layout));
  json.Key("num_layers").Uint(layout.num_layers);
  json.Key("num_kv_heads").Uint(layout.num_kv_heads);
  json.Key("head_dim").Uint(layout.head_dim);
  json.Key("dtype").String(radix::DTypeName(layout.dtype));
  json.Key("page_tokens").Uint(layout.page_tokens);
  json.Key("format").String(radix::KvFormatName(layout.format));
  json.Key("tp_rank").Uint(layout.tp_rank);
  json.Key("tp_world").Uint(layout.tp_world);
  json.EndObject();
}

void WriteBlobInfoJson(const BlobInfo& info, bool with_tokens, JsonWriter& json) {
  json.BeginObject();
  json.Key("key").String(info.key.ToHex());
  json.Key("tenant").String(info.tenant);
  json.Key("model").String(info.model);
  json.Key("layout");
  WriteLayoutJson(info.layout, json);
  json.Key("namespace_hash").String(info.namespace_hash.ToHex());
  json.Key("parent");
  if (info.parent.has_value()) {
    json.BeginObject();
    json.Key("key").String(info.parent->key.ToHex());
    json.Key("pages").Uint(info.parent->pages);
    json.EndObject();
  } else {
    json.Null();
  }
  json.Key("start_hash").String(info.start_hash.ToHex());
  json.Key("first_page").Uint(info.first_page);
  json.Key("pages").Uint(info.pages);
  json.Key("bytes").Uint(info.bytes);
  json.Key("checksum").String(absl::StrFormat("%016x", info.checksum));
  json.Key("tiers").BeginArray();
  for (Tier tier : info.tiers) json.String(std::string(TierName(tier)));
  json.EndArray();
  json.Key("pages_indexed").Uint(info.pages_indexed);
  json.Key("leases").Uint(info.leases);
  json.Key("pinned").Bool(info.pinned);
  json.Key("hits").Uint(info.hits);
  json.Key("created").String(Rfc3339(info.created));
  json.Key("created_unix_ms").Int(absl::ToUnixMillis(info.created));
  json.Key("last_access").String(Rfc3339(info.last_access));
  json.Key("last_access_unix_ms").Int(absl::ToUnixMillis(info.last_access));
  if (with_tokens) {
    json.Key("tokens").BeginArray();
    for (TokenId token : info.tokens) json.Uint(token);
    json.EndArray();
  }
  json.EndObject();
}

void WriteSegmentJson(const Segment& segment, JsonWriter& json) {
  json.BeginObject();
  json.Key("blob").String(segment.blob.ToHex());
  json.Key("blob_page_offset").Uint(segment.blob_page_offset);
  json.Key("page_count").Uint(segment.page_count);
  json.Key("seq_page_begin").Uint(segment.seq_page_begin);
  json.Key("blob_pages").Uint(segment.blob_pages);
  json.Key("tier").String(std::string(TierName(segment.tier)));
  if (segment.tier == Tier::kText) {
    json.Key("tokens").BeginArray();
    for (TokenId token : segment.tokens) json.Uint(token);
    json.EndArray();
  }
  json.EndObject();
}

void WriteTierInfoJson(const TierInfo& tier, JsonWriter& json) {
  json.BeginObject();
  json.Key("tier").String(std::string(TierName(tier.tier)));
  json.Key("capacity_bytes").Uint(tier.capacity_bytes);
  json.Key("used_bytes").Uint(tier.used_bytes);
  json.Key("free_bytes").Uint(tier.free_bytes);
  json.Key("blobs").Uint(tier.blobs);
  json.Key("hits").Uint(tier.hits);
  json.Key("misses").Uint(tier.misses);
  json.Key("evictions").Uint(tier.evictions);
  json.Key("promotions").Uint(tier.promotions);
  json.Key("demotions").Uint(tier.demotions);
  json.Key("pages").Uint(tier.pages);
  json.EndObject();
}

void WriteIndexInfoJson(const IndexInfo& index, JsonWriter& json) {
  json.BeginObject();
  json.Key("roots").Uint(index.roots);
  json.Key("nodes").Uint(index.nodes);
  json.Key("leaves").Uint(index.leaves);
  json.Key("pages").Uint(index.pages);
  json.Key("token_bytes").Uint(index.token_bytes);
  json.Key("index_bytes").Uint(index.index_bytes);
  json.Key("pinned_nodes").Uint(index.pinned_nodes);
  json.EndObject();
}

void WriteEngineInfoJson(const EngineInfo& engine, JsonWriter& json) {
  json.BeginObject();
  json.Key("namespaces").Uint(engine.namespaces);
  json.Key("blobs").Uint(engine.blobs);
  json.Key("unlinked_blobs").Uint(engine.unlinked_blobs);
  json.Key("token_only_blobs").Uint(engine.token_only_blobs);
  json.Key("pending_puts").Uint(engine.pending_puts);
  json.Key("leases").Uint(engine.leases);
  json.Key("matches").Uint(engine.matches);
  json.Key("matched_pages").Uint(engine.matched_pages);
  json.Key("queried_pages").Uint(engine.queried_pages);
  json.Key("draining").Bool(engine.draining);
  json.EndObject();
}

}  // namespace strata::cli
