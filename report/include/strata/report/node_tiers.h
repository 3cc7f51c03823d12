// NodeTiers: everything a node reports about its tiers (Admin.Tiers, /v1/tiers, /metrics,
// `strata tiers`, `strata capacity`), and the parts it is made of: TierStats (one byte
// tier), TextTierStats, RebuildQueueStats, IndexStats, EngineStats, MetaStats, LookupCounts
// (lookup.h) and the curves (curve.h).
//
// One set of types for the node's engine (store/core fills them), its adapters
// (store/rpc, store/http), the wire converter (strata/proto/report_convert.h) and the
// client (Client::Tiers): a new reported value is added here, to the proto, to the
// converter and to the formatter that shows it.
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/radix/radix_tree.h"
#include "strata/report/curve.h"
#include "strata/report/lookup.h"
#include "strata/report/tier.h"

namespace strata::report {

// One byte tier (HBM, DRAM, SSD): capacity, occupancy and event counts. A tier
// (tiering::Tier::Stats) fills everything but `pages`, which the engine adds.
struct TierStats {
  Tier tier = Tier::kDram;      // a byte tier: never kText (TextTierStats)
  uint64_t capacity_bytes = 0;  // bytes the tier can hold
  uint64_t used_bytes = 0;      // bytes in live extents (granted, i.e. rounded-up, sizes)
  uint64_t blobs = 0;           // live extents
  uint64_t hits = 0;            // reads served from this tier
  uint64_t misses = 0;          // reads this tier could not serve
  uint64_t evictions = 0;       // blobs whose bytes were dropped from this tier
  uint64_t promotions = 0;      // blobs copied into this tier from a slower one
  uint64_t demotions = 0;       // blobs moved from this tier to a slower one
  uint64_t pages = 0;           // index pages whose bytes this tier holds

  // Bytes not in live extents: capacity - used, 0 if used exceeds it. (Not all of them may
  // be usable by one large request: see tiering::ExtentAllocator's fragmentation measures.)
  uint64_t free_bytes() const {
    return capacity_bytes > used_bytes ? capacity_bytes - used_bytes : 0;
  }
  friend bool operator==(const TierStats&, const TierStats&) = default;
};

// The TEXT tier: records whose KV bytes are gone but whose tokens are kept.
struct TextTierStats {
  uint64_t capacity_bytes = 0;  // the node's TEXT budget; 0: it keeps no text
  uint64_t used_bytes = 0;      // token bytes of TEXT records plus a per-record overhead
  uint64_t blobs = 0;           // linked blobs in the TEXT state
  uint64_t drops = 0;           // blobs whose bytes were dropped to TEXT
  uint64_t deletions = 0;       // TEXT records deleted (TEXT pressure or on request)
  uint64_t rebuilds = 0;        // TEXT blobs filled again by a put (rebuilt)
  uint64_t pages = 0;           // index pages in the TEXT state

  friend bool operator==(const TextTierStats&, const TextTierStats&) = default;
};

// The rebuild queue (RequestRebuild, Prefetch, PullRebuildTasks).
struct RebuildQueueStats {
  uint64_t queued = 0;     // waiting for a worker
  uint64_t in_flight = 0;  // handed to a worker, not yet filled or expired
  uint64_t requested = 0;  // tasks ever queued
  uint64_t completed = 0;  // tasks filled by a put
  uint64_t expired = 0;    // handed out and not filled in time (queued again)
  uint64_t dropped = 0;    // given up after the node's attempts, or their blob went away

  friend bool operator==(const RebuildQueueStats&, const RebuildQueueStats&) = default;
};

// The radix index, summed over the node's trees (radix::RadixTreeStats: roots, nodes,
// leaves, pages, token_bytes, index_bytes, pinned_nodes).
using IndexStats = radix::RadixTreeStats;

// The engine's own counts.
struct EngineStats {
  uint64_t namespaces = 0;         // namespaces known to the node
  uint64_t blobs = 0;              // committed blobs in the index
  uint64_t unlinked_blobs = 0;     // out of the index, bytes still held by leases or spans
  uint64_t token_only_blobs = 0;   // bytes gone, tokens kept for blobs that continue them
  uint64_t segments = 0;           // linked blobs that start a sequence or a cluster segment
                                   // (no parent): the sub-trees of blobs the node holds
  uint64_t replicated_blobs = 0;   // linked blobs this node pushed to other nodes as hot
                                   // replicas (Match's Segment.replicas >= 2)
  uint64_t pending_puts = 0;       // puts begun, not yet committed or aborted
  uint64_t leases = 0;             // read leases held
  uint64_t matches = 0;            // Match calls
  uint64_t matched_pages = 0;      // pages found by them
  uint64_t queried_pages = 0;      // whole pages asked for by them
  uint64_t meta_write_errors = 0;  // metadata writes that failed (those records are not
                                   // durable: a restart does not bring them back)
  bool draining = false;           // Drain was called: reads served, writes refused

  friend bool operator==(const EngineStats&, const EngineStats&) = default;
};

// The metadata store (RocksDB under the data dir): its size on disk and the memory it holds
// outside the tiers. All 0 for a node without one.
struct MetaStats {
  uint64_t records = 0;             // stored blob records (RocksDB's estimate)
  uint64_t disk_bytes = 0;          // SST files plus write-ahead logs
  uint64_t memtable_bytes = 0;      // memtables: active, waiting to flush, pinned
  uint64_t table_reader_bytes = 0;  // index and filter blocks of open SST files
  uint64_t block_cache_bytes = 0;   // the block cache's use (its capacity is configured)

  friend bool operator==(const MetaStats&, const MetaStats&) = default;
};

// What the committed blobs of one tenant label (radix::Namespace::tenant()) hold.
struct TenantUsage {
  std::string tenant;
  uint64_t blobs = 0;       // committed blobs in the index
  uint64_t dram_bytes = 0;  // extent bytes of those in DRAM
  uint64_t ssd_bytes = 0;   // extent bytes of those on SSD
  uint64_t text_blobs = 0;  // those in the TEXT state (bytes dropped, tokens kept)
  // What counts against the label's quotas: the extent bytes of all its records in the
  // tier (committed, pending puts, moves in flight, unlinked ones still read).
  uint64_t dram_charged_bytes = 0;
  uint64_t ssd_charged_bytes = 0;
  // The label's quotas (the tenants file); 0: none.
  uint64_t dram_quota_bytes = 0;
  uint64_t ssd_quota_bytes = 0;
  // Blobs of the label that left a tier to make room under its own quota, and allocations
  // refused because its quota was full of what may not go (or could never hold them).
  uint64_t quota_evictions = 0;
  uint64_t quota_refusals = 0;

  friend bool operator==(const TenantUsage&, const TenantUsage&) = default;
};

// Tenant labels NodeTiers::tenants lists one by one; the rest are summed under
// kOtherTenants (an open node's clients may make any number of labels).
inline constexpr size_t kMaxReportedTenants = 256;
inline constexpr std::string_view kOtherTenants = "(other)";

struct NodeTiers {
  std::vector<TierStats> tiers;  // the byte tiers, fastest first: DRAM, then SSD if any
  TextTierStats text;
  RebuildQueueStats rebuild;
  IndexStats index;
  EngineStats engine;
  MetaStats meta;
  // Match's hits and misses by phase: prefill, midfill, decode as the node sends them
  // (a client leaves out phases it does not know).
  std::vector<LookupCounts> lookups;
  // The live miss-ratio curve of page lookups (SHARDS over every Match's pages, weighted
  // by KV bytes; an LRU estimate; empty before the first lookup) and each tier's view of
  // it (empty while there is no curve).
  MissRatioCurve mrc;
  std::vector<TierCurve> curves;
  // Token bytes per KV byte of the pages looked up (converts the TEXT budget to the
  // curve's KV-byte capacities); 0: unknown.
  double token_bytes_per_kv_byte = 0;
  // Per tenant label, sorted by label: the first kMaxReportedTenants labels, then
  // kOtherTenants summing the rest (only when there are more).
  std::vector<TenantUsage> tenants;

  // The stats of byte tier `tier`, the view of `tier`, the counts of `phase`; nullptr when
  // the node reported none.
  const TierStats* Find(Tier tier) const;
  const TierCurve* CurveFor(Tier tier) const;
  const LookupCounts* LookupsFor(LookupPhase phase) const;
};

}  // namespace strata::report
