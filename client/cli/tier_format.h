// How the CLI shows tiers and rebuild from text: the per-tier table of `strata tiers` (the
// byte tiers and the TEXT tier), the TEXT tier's and rebuild queue's lines and JSON, and
// the one-line summaries of `strata evict` and `strata rebuild`.
//
// The tiers table (byte tiers as the node lists them, fastest first, then TEXT when the
// node keeps text); EXP.HIT% is the hit rate the node's miss-ratio curve expects through
// the tier at its capacity (NodeTiers::curves; "-" while the node has no curve):
//
//   TIER  CAPACITY  USED     FREE     USED%  BLOBS  PAGES  HITS  MISSES  HIT%   EVICTIONS
//         PROMOTIONS  DEMOTIONS  EXP.HIT%                       (one line; wrapped here)
//   dram  64.0 MiB  1.0 MiB  63.0 MiB  1.6%      2     16     5       1  83.3%  4  0  3  61.0%
//   ssd   1.00 GiB  ...
//   text  64.0 MiB  2.1 KiB  ...                3     12     -       -      -  2  -  -  70.0%
//
// For TEXT, BLOBS and PAGES count TEXT blobs and their pages, EVICTIONS the TEXT records
// deleted; hits, misses, promotions and demotions have no meaning there ("-"): its drops
// and rebuilds are in TextTierLines. Lookups by phase: capacity_format.h.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/cli/json_output.h"
#include "strata/types.h"

namespace strata::cli {

// The table above, header line first, each line ending in '\n'.
std::string RenderTiersTable(const NodeTiers& info);

// "  capacity", "  used", "  blobs", "  drops", "  deletions", "  rebuilds" (a single
// "  none (the node keeps no text)" line when its capacity is 0).
std::vector<std::pair<std::string, std::string>> TextTierLines(const TextTierStats& text);
// "  queued", "  in flight", "  requested", "  completed", "  expired", "  dropped".
std::vector<std::pair<std::string, std::string>> RebuildQueueLines(const RebuildQueueStats& queue);

// Every field as a JSON object (sizes and counts as integers).
Json TextTierJson(const TextTierStats& text);
Json RebuildQueueJson(const RebuildQueueStats& queue);
// Everything Tiers answered, as `strata tiers --json` prints it: "tiers" (TierInfoJson each),
// "text", "rebuild", "index", "engine", "meta", "lookups", "mrc", "curves",
// "token_bytes_per_kv_byte" (the Python module's Client.tiers() returns the same).
Json NodeTiersJson(const NodeTiers& info);

// "evicted 1.00 MiB of 2.00 MiB asked from dram: 3 blobs demoted to ssd, 2 dropped to
// text" (`asked` none: "of all that could go"); SSD: "...from ssd: 2 blobs dropped to
// text"; TEXT: "...from text: 4 TEXT records deleted (12 index pages)".
std::string EvictSummary(Tier tier, std::optional<uint64_t> asked, const EvictResult& result);

// "rebuild of KEY (with its prefix): 3 queued, 0 already queued, 1 resident".
std::string RebuildRequestSummary(const BlobKey& key, bool with_prefix,
                                  const RebuildRequestResult& result);

// True when `tiers` name a byte tier (the blob has bytes again, or never lost them).
bool HasBytes(const std::vector<Tier>& tiers);

}  // namespace strata::cli
