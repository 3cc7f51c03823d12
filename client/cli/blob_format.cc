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

Json TierNamesJson(const std::vector<Tier>& tiers) {
  Json names = Json::array();
  for (Tier tier : tiers) names.push_back(std::string(TierName(tier)));
  return names;
}

Json LayoutJson(const KvLayout& layout) {
  Json json;
  json["spec"] = FormatLayoutSpec(layout);
  json["num_layers"] = layout.num_layers;
  json["num_kv_heads"] = layout.num_kv_heads;
  json["head_dim"] = layout.head_dim;
  json["dtype"] = radix::DTypeName(layout.dtype);
  json["page_tokens"] = layout.page_tokens;
  json["format"] = radix::KvFormatName(layout.format);
  json["tp_rank"] = layout.tp_rank;
  json["tp_world"] = layout.tp_world;
  return json;
}

Json BlobInfoJson(const BlobInfo& info, bool with_tokens) {
  Json json;
  json["key"] = info.key.ToHex();
  json["tenant"] = info.tenant;
  json["model"] = info.model;
  json["layout"] = LayoutJson(info.layout);
  json["namespace_hash"] = info.namespace_hash.ToHex();
  json["parent"] = info.parent.has_value()
                       ? Json{{"key", info.parent->key.ToHex()}, {"pages", info.parent->pages}}
                       : Json(nullptr);
  json["start_hash"] = info.start_hash.ToHex();
  json["first_page"] = info.first_page;
  json["pages"] = info.pages;
  json["bytes"] = info.bytes;
  json["checksum"] = absl::StrFormat("%016x", info.checksum);
  json["tiers"] = TierNamesJson(info.tiers);
  json["pages_indexed"] = info.pages_indexed;
  json["leases"] = info.leases;
  json["pinned"] = info.pinned;
  json["hits"] = info.hits;
  json["created"] = Rfc3339(info.created);
  json["created_unix_ms"] = absl::ToUnixMillis(info.created);
  json["last_access"] = Rfc3339(info.last_access);
  json["last_access_unix_ms"] = absl::ToUnixMillis(info.last_access);
  if (with_tokens) {
    json["tokens"] = info.tokens;
  }
  return json;
}

Json SegmentJson(const Segment& segment) {
  Json json;
  json["blob"] = segment.blob.ToHex();
  json["blob_page_offset"] = segment.blob_page_offset;
  json["page_count"] = segment.page_count;
  json["seq_page_begin"] = segment.seq_page_begin;
  json["blob_pages"] = segment.blob_pages;
  json["tier"] = std::string(TierName(segment.tier));
  if (segment.tier == Tier::kText) {
    json["tokens"] = segment.tokens;
  }
  return json;
}

Json TierInfoJson(const TierStats& tier) {
  Json json;
  json["tier"] = std::string(TierName(tier.tier));
  json["capacity_bytes"] = tier.capacity_bytes;
  json["used_bytes"] = tier.used_bytes;
  json["free_bytes"] = tier.free_bytes();
  json["blobs"] = tier.blobs;
  json["hits"] = tier.hits;
  json["misses"] = tier.misses;
  json["evictions"] = tier.evictions;
  json["promotions"] = tier.promotions;
  json["demotions"] = tier.demotions;
  json["pages"] = tier.pages;
  return json;
}

Json IndexInfoJson(const IndexStats& index) {
  Json json;
  json["roots"] = index.roots;
  json["nodes"] = index.nodes;
  json["leaves"] = index.leaves;
  json["pages"] = index.pages;
  json["token_bytes"] = index.token_bytes;
  json["index_bytes"] = index.index_bytes;
  json["pinned_nodes"] = index.pinned_nodes;
  return json;
}

Json EngineInfoJson(const EngineStats& engine) {
  Json json;
  json["namespaces"] = engine.namespaces;
  json["blobs"] = engine.blobs;
  json["unlinked_blobs"] = engine.unlinked_blobs;
  json["token_only_blobs"] = engine.token_only_blobs;
  json["segments"] = engine.segments;
  json["replicated_blobs"] = engine.replicated_blobs;
  json["pending_puts"] = engine.pending_puts;
  json["leases"] = engine.leases;
  json["matches"] = engine.matches;
  json["matched_pages"] = engine.matched_pages;
  json["queried_pages"] = engine.queried_pages;
  json["draining"] = engine.draining;
  return json;
}

Json MetaStatsJson(const MetaStats& meta) {
  Json json;
  json["records"] = meta.records;
  json["disk_bytes"] = meta.disk_bytes;
  json["memtable_bytes"] = meta.memtable_bytes;
  json["table_reader_bytes"] = meta.table_reader_bytes;
  json["block_cache_bytes"] = meta.block_cache_bytes;
  return json;
}

}  // namespace strata::cli
