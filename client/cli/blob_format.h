// How the CLI shows and reads the client's records: blob keys, parents, tiers, BlobInfo
// (stat, ls), match segments, tier and index statistics, as table cells / key-value lines
// for people and as JSON members for scripts.
//
// JSON conventions (shared by every command): 128-bit keys and hashes as 32 lowercase hex
// digits (hi first, PrefixHash::ToHex), 64-bit checksums as 16 hex digits, sizes and
// counts as exact integers, times as RFC 3339 UTC strings plus *_unix_ms integers, tiers
// by name ("dram"), layouts both as a spec string (layout_spec.h) and as an object of
// their fields.
//
// Parse* return INVALID_ARGUMENT marked as usage errors (exit_codes.h) naming the
// argument. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "client/cli/json_output.h"
#include "strata/types.h"

namespace strata::cli {

// 32 hex digits (either case). `what` names the argument in the error ("KEY").
absl::StatusOr<BlobKey> ParseBlobKey(const std::string& what, const std::string& text);
// KEY:PAGES, e.g. 3f0c...:4 (`--parent`).
absl::StatusOr<Parent> ParseParent(const std::string& what, const std::string& text);
// "hbm", "dram", "ssd" or "text" (case-insensitive).
absl::StatusOr<Tier> ParseTier(const std::string& what, const std::string& text);

// "dram,ssd"; "-" when empty.
std::string TierList(const std::vector<Tier>& tiers);
// "KEY:PAGES"; "-" when absent.
std::string ParentText(const std::optional<Parent>& parent);

// stat's lines: key, namespace, layout, parent, pages, bytes, checksum, tiers, ... (tokens
// not included).
std::vector<std::pair<std::string, std::string>> BlobInfoLines(const BlobInfo& info);
// One BlobInfo as a JSON object (with "tokens" only when `with_tokens`).
Json BlobInfoJson(const BlobInfo& info, bool with_tokens);
// A layout as {"spec": "...", "num_layers": .., ...}.
Json LayoutJson(const KvLayout& layout);
// One match segment as a JSON object (TEXT segments with their "tokens").
Json SegmentJson(const Segment& segment);
// Tier names as a JSON array (["dram","ssd"]), in the given order.
Json TierNamesJson(const std::vector<Tier>& tiers);
// One tier's statistics as a JSON object, every field of TierStats.
Json TierInfoJson(const TierStats& tier);
Json IndexInfoJson(const IndexStats& index);
Json EngineInfoJson(const EngineStats& engine);
Json MetaStatsJson(const MetaStats& meta);

// RFC 3339 UTC with milliseconds ("2026-11-29T13:37:44.804Z"); "" for the epoch (unset).
std::string Rfc3339(absl::Time time);

}  // namespace strata::cli
