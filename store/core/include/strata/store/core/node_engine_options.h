// NodeEngineOptions: what a NodeEngine (node_engine.h) is created with — the DRAM tier,
// lease and put lifetimes, the SSD tier and metadata store it is handed, policies, the
// TEXT budget, rebuild limits, capacity-planning and diagnostics switches — and their
// checks (Validate: INVALID_ARGUMENT naming the option). A plain value; the shared_ptrs
// and the Clock are handed to the engine, which keeps them for its lifetime.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "strata/store/core/clock.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/meta/meta_store.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/hbm_tier.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

struct NodeEngineOptions {
  // DRAM tier size. REQUIRES: > 0, a multiple of dram_granule_bytes.
  uint64_t dram_bytes = uint64_t{1} << 30;
  // Allocation unit of the arena (a power of two); tests use small ones.
  uint64_t dram_granule_bytes = uint64_t{64} << 10;
  bool dram_try_hugetlb = true;
  bool dram_populate = false;
  // What backs the DRAM arena (tiering/dram_arena.h: DramBacking).
  tiering::DramBacking dram_backing = tiering::DramBacking::kMemfd;
  std::string dram_name = "strata-dram";
  // Largest blob a put may carry. REQUIRES: 0 < max_blob_bytes <= 1 GiB (the arena's
  // largest extent).
  uint64_t max_blob_bytes = uint64_t{1} << 30;
  // Lease TTL when Read is given 0, and the most any Read or RenewLease may ask for
  // (larger values are clamped: LeaseTtl). REQUIRES: 0 < default_lease_ttl <= max_lease_ttl.
  absl::Duration default_lease_ttl = absl::Seconds(30);
  absl::Duration max_lease_ttl = absl::Minutes(10);
  // Leases held at once, in all and by one tenant; past either, Read is RESOURCE_EXHAUSTED
  // (before anything is promoted or pinned). A lease pins its blobs in DRAM until it ends.
  // REQUIRES: both > 0.
  size_t max_leases = 65536;
  size_t max_tenant_leases = 16384;
  // A put with no activity for this long is abandoned and reclaimed. REQUIRES: > 0.
  absl::Duration put_ttl = absl::Seconds(60);
  // What pending puts may hold at once (PutTable::Admit; past a limit BeginPut is
  // RESOURCE_EXHAUSTED before anything is evicted): this many puts; this much heap for their
  // tokens and checksums; these shares of the DRAM tier reserved in all and by one tenant
  // (a tenant's first pending put, and the first of all, may take up to the whole tier).
  // REQUIRES: max_pending_puts > 0, max_pending_metadata_bytes > 0, shares in (0, 1].
  size_t max_pending_puts = 4096;
  uint64_t max_pending_metadata_bytes = uint64_t{256} << 20;
  double max_pending_share = 0.5;
  double max_pending_tenant_share = 0.25;
  // How often the background reaper runs ReapExpired(); 0: no thread (call it yourself).
  absl::Duration reap_interval = absl::Seconds(1);
  // A background thread demotes blobs out of DRAM between the watermarks below (false:
  // only allocation pressure and Evict move bytes; tests use it for determinism).
  bool background_demotion = true;
  // Not owned; must outlive the engine. nullptr: RealClock::Default().
  Clock* clock = nullptr;

  // ---- tiers beyond DRAM, metadata, policies, rebuild
  // The SSD tier (tiering/io's SsdTier, opened by the node); none: DRAM and TEXT only.
  std::shared_ptr<tiering::Tier> ssd;
  // The HBM tier (device memory, opened by the node on its GPU): an inclusive cache of hot
  // DRAM blobs (hbm_cache.h); none: no HBM tier. A blob is copied in at its
  // hbm_admit_reads-th read; hbm_policy orders the copies dropped for room
  // (tiering::MakeEvictionPolicy names). REQUIRES: hbm_admit_reads > 0.
  std::shared_ptr<tiering::HbmTier> hbm;
  uint32_t hbm_admit_reads = 2;
  std::string hbm_policy = "branch-lru";
  // Durable metadata (store/meta's RocksMetaStore, opened by the node). Create reloads
  // the index from it (a restart: SSD blobs come back on SSD, the rest as TEXT) and every
  // change of a blob's durable state is written to it. none: nothing survives a restart.
  std::shared_ptr<meta::MetaStore> meta;
  // Eviction policies of the byte tiers (tiering::MakeEvictionPolicy names).
  std::string dram_policy = "branch-lru";
  std::string ssd_policy = "branch-lru";
  // Admission (tiering::MakeAdmissionPolicy): whether a blob leaving DRAM is worth an SSD
  // write (else it drops to TEXT), and whether an SSD hit keeps a DRAM copy (else the copy
  // made to serve the read is dropped once the read's lease ends).
  std::string admission = "always";
  // Background demotion: when DRAM use passes high, blobs leave DRAM until it is at low.
  // REQUIRES: 0 < low <= high <= 1.
  double dram_high_watermark = 0.95;
  double dram_low_watermark = 0.85;
  // Budget of the TEXT tier (token bytes of blobs whose KV bytes are dropped, plus a
  // per-record overhead); over it, TEXT records are deleted leaf-first (LRU). 0: no TEXT
  // tier (a blob whose bytes are dropped leaves the index at once).
  uint64_t text_bytes = uint64_t{64} << 20;
  // Per tenant label (Namespace.tenant): byte quotas in DRAM and on SSD (TenantQuota). A
  // label's records — committed, pending puts, moves in flight — never hold more than its
  // quota in a tier; at it the label evicts its own blobs first (the mover demotes them
  // from its high watermark of the quota to its low one, as for the tier), and a request
  // larger than the quota is RESOURCE_EXHAUSTED before anything is evicted. Empty: none.
  TenantQuotas tenant_quotas;
  // A rebuild task handed to a worker returns to the queue if no put fills its blob in
  // this time; after max_rebuild_attempts hand-outs it is dropped. REQUIRES: > 0.
  absl::Duration rebuild_task_ttl = absl::Seconds(30);
  uint32_t max_rebuild_attempts = 3;
  // Most tasks queued or in flight. REQUIRES: > 0.
  uint64_t max_rebuild_queue = uint64_t{1} << 20;

  // ---- cluster
  // A blob named by this many Reads is reported, once, by TakeHotBlobs (a cluster node
  // pushes it to the next nodes of its segment's ranking as a hot replica). 0: never.
  uint32_t hot_reads = 0;

  // ---- capacity planning
  // Keys the SHARDS miss-ratio-curve estimator tracks (tiering::mrc::ShardsOptions::
  // max_sampled_keys): more is more accurate and costs memory (~100 B a key) and time on
  // sampled lookups. 0: no curve (Match skips the page hashing it needs).
  uint32_t mrc_sampled_keys = 8192;
  // Points per tier curve in Tiers(). REQUIRES: > 0.
  uint32_t mrc_curve_points = 32;

  // ---- diagnostics
  // Records how long each acquisition holds the engine's index lock (lock_hold()); off,
  // the lock is taken as usual (benchmarks turn it on).
  bool measure_lock_hold = false;

  // OK when every REQUIRES above holds; else INVALID_ARGUMENT naming the option and its
  // value (NodeEngine::Create answers with it).
  absl::Status Validate() const;
  // The lease a Read or RenewLease asking for `ttl` gets: default_lease_ttl for 0, at most
  // max_lease_ttl. REQUIRES: ttl >= 0.
  absl::Duration LeaseTtl(absl::Duration ttl) const;
};

}  // namespace strata::store::core
