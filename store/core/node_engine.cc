// NodeEngine: creation, Match, Tiers, reaping and draining (its options and their checks are
// NodeEngineOptions', node_engine_options.h; the record life cycle is the
// RecordKeeper's, record_keeper.h). The put,
// read and admin calls are in node_engine_put.cc, node_engine_read.cc and
// node_engine_admin.cc.
#include "strata/store/core/node_engine.h"

#include <algorithm>
#include <utility>

#include <malloc.h>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/restorer.h"

namespace strata::store::core {
// ------------------------------------------------------------------------- lifecycle

absl::StatusOr<std::unique_ptr<NodeEngine>> NodeEngine::Create(const NodeEngineOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  tiering::DramArenaOptions arena_options;
  arena_options.capacity_bytes = options.dram_bytes;
  arena_options.name = options.dram_name;
  arena_options.try_hugetlb = options.dram_try_hugetlb;
  arena_options.populate = options.dram_populate;
  arena_options.backing = options.dram_backing;
  arena_options.granule_bytes = options.dram_granule_bytes;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<tiering::DramArena> arena,
                          tiering::DramArena::Create(arena_options));
  Clock* clock = options.clock != nullptr ? options.clock : RealClock::Default();
  Policies policies;
  STRATA_ASSIGN_OR_RETURN(policies.dram, tiering::MakeEvictionPolicy(options.dram_policy));
  STRATA_ASSIGN_OR_RETURN(policies.ssd, tiering::MakeEvictionPolicy(options.ssd_policy));
  STRATA_ASSIGN_OR_RETURN(policies.text, tiering::MakeEvictionPolicy("lru"));
  STRATA_ASSIGN_OR_RETURN(policies.admission, tiering::MakeAdmissionPolicy(options.admission));
  if (options.hbm != nullptr) {
    STRATA_ASSIGN_OR_RETURN(policies.hbm, tiering::MakeEvictionPolicy(options.hbm_policy));
  }
  absl::BitGen gen;
  const uint64_t secret = absl::Uniform<uint64_t>(gen);
  auto engine = std::unique_ptr<NodeEngine>(
      new NodeEngine(options, clock, std::move(arena), std::move(policies), secret));
  STRATA_ASSIGN_OR_RETURN(const RestoreReport restored, engine->RestoreFromMeta());
  if (options.meta != nullptr) {
    LOG(INFO) << "restored " << restored.restored << " blobs from metadata (" << restored.on_ssd
              << " on SSD, " << restored.text << " as TEXT; " << restored.dropped << " dropped, "
              << restored.corrupt << " corrupt) in " << restored.ready_time << " (reading "
              << restored.load_time << ")";
  }
  return engine;
}

// The restart: MetaJournal::Load reads the store, the Restorer (restorer.h) rebuilds the
// index from it.
absl::StatusOr<RestoreReport> NodeEngine::RestoreFromMeta() {
  if (!journal_.enabled()) return RestoreReport();
  const absl::Time started = absl::Now();
  STRATA_ASSIGN_OR_RETURN(MetaJournal::Loaded loaded, journal_.Load());
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  Restorer restorer(Restorer::Deps{.registry = &registry_,
                                   .table = &table_,
                                   .ledger = &ledger_,
                                   .journal = &journal_,
                                   .keeper = &keeper_,
                                   .mover = &mover_,
                                   .ssd = ssd_.get(),
                                   .text_bytes = options_.text_bytes});
  STRATA_ASSIGN_OR_RETURN(RestoreReport report,
                          restorer.Restore(mu_, std::move(loaded), [this] { return ids_.Next(); }));
  report.ready_time = absl::Now() - started;
  restore_ = report;
  return report;
}

LockHoldStats NodeEngine::lock_hold() const { return lock_hold_histogram_.Snapshot(); }

RestoreReport NodeEngine::restored() const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  return restore_;
}

NodeEngine::NodeEngine(const NodeEngineOptions& options, Clock* clock,
                       std::unique_ptr<tiering::DramArena> arena, Policies policies,
                       uint64_t id_secret)
    : options_(options),
      clock_(clock),
      arena_(std::move(arena)),
      ids_(id_secret),
      puts_(options.put_ttl,
            PutLimits{.max_puts = options.max_pending_puts,
                      .max_metadata_bytes = options.max_pending_metadata_bytes,
                      .max_bytes = static_cast<uint64_t>(options.max_pending_share *
                                                         static_cast<double>(arena_->capacity())),
                      .max_tenant_bytes =
                          static_cast<uint64_t>(options.max_pending_tenant_share *
                                                static_cast<double>(arena_->capacity()))}),
      lookup_stats_(options.mrc_sampled_keys, options.mrc_curve_points),
      ssd_(options.ssd),
      hbm_(options.hbm),
      ledger_(&table_, arena_.get(), options.ssd.get(), std::move(policies), options.text_bytes,
              options.tenant_quotas, options.hbm.get()),
      journal_(options.meta),
      rebuild_(RebuildQueueOptions{.max_queue = options.max_rebuild_queue,
                                   .task_ttl = options.rebuild_task_ttl,
                                   .max_attempts = options.max_rebuild_attempts}),
      keeper_(RecordKeeper::Deps{.table = &table_,
                                 .ledger = &ledger_,
                                 .journal = &journal_,
                                 .rebuild = &rebuild_,
                                 .dram = arena_.get(),
                                 .ssd = options.ssd.get(),
                                 .index_mu = &mu_}),
      lock_hold_(options.measure_lock_hold ? &lock_hold_histogram_ : nullptr),
      mover_(TierMoverOptions{.dram_high_watermark = options.dram_high_watermark,
                              .dram_low_watermark = options.dram_low_watermark,
                              .text_bytes = options.text_bytes},
             TierMover::Deps{.table = &table_,
                             .ledger = &ledger_,
                             .journal = &journal_,
                             .dram = arena_.get(),
                             .ssd = options.ssd.get(),
                             .records = &keeper_,
                             .index_mu = &mu_,
                             .lock_hold = lock_hold_}),
      put_keeper_(PutKeeper::Deps{.registry = &registry_,
                                  .table = &table_,
                                  .puts = &puts_,
                                  .ledger = &ledger_,
                                  .journal = &journal_,
                                  .keeper = &keeper_,
                                  .rebuild = &rebuild_,
                                  .mover = &mover_,
                                  .dram = arena_.get(),
                                  .index_mu = &mu_}),
      hbm_cache_(HbmCacheOptions{.admit_reads = options.hbm_admit_reads},
                 HbmCache::Deps{.table = &table_,
                                .ledger = &ledger_,
                                .dram = arena_.get(),
                                .hbm = options.hbm.get(),
                                .records = &keeper_,
                                .index_mu = &mu_,
                                .lock_hold = lock_hold_}) {
  if (options_.reap_interval > absl::ZeroDuration()) {
    reaper_ = std::thread([this] { ReaperLoop(); });
  }
  if (options_.background_demotion) {
    mover_.Start();
    hbm_cache_.Start();
  }
}

NodeEngine::~NodeEngine() {
  stop_reaper_.Notify();
  mover_.Stop();
  hbm_cache_.Stop();
  if (reaper_.joinable()) reaper_.join();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  DCHECK_EQ(keeper_.holds(mu_), 0u) << "a HeldSpan outlives its NodeEngine";
}

void NodeEngine::ReaperLoop() {
  while (!stop_reaper_.WaitForNotificationWithTimeout(options_.reap_interval)) {
    const ReapReply reaped = ReapExpired();
    if (reaped.leases_expired + reaped.puts_expired > 0) {
      VLOG(1) << "reaper: " << reaped.leases_expired << " leases expired, " << reaped.puts_expired
              << " puts abandoned";
    }
    // An abandoned put's tokens and checksums (up to max_pending_metadata_bytes in all) were
    // allocated on gRPC's threads, in glibc arenas that keep freed pages unless trimmed:
    // give them back to the system (issue 12: 1.3 GB stayed after 175 puts expired).
    if (reaped.puts_expired > 0) malloc_trim(0);
  }
}

void NodeEngine::DropHold(uint64_t record_id) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.Find(record_id);
  CHECK(record != nullptr) << "HeldSpan of unknown record " << record_id;
  keeper_.Unhold(mu_, record);
  keeper_.Release(mu_, record);
}

// ------------------------------------------------------------------------- Match

absl::StatusOr<MatchResult> NodeEngine::Match(const radix::Namespace& ns,
                                              absl::Span<const radix::TokenId> tokens,
                                              LookupPhase phase, const AccessScope& scope,
                                              const std::optional<SegmentStart>& start) const {
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  const radix::PrefixHash root = start.has_value() ? start->hash : h0;
  MatchResult reply;
  {
    TimedReaderMutexLock lock(&mu_, lock_hold_);
    // Outside the caller's scope a namespace is unknown.
    const NamespaceEntry* entry = scope.Allows(ns.tenant()) ? registry_.Find(h0) : nullptr;
    if (entry == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("namespace ", ns.ToString(), " is not known to this node"));
    }
    const radix::MatchResult match = entry->tree->Match(root, tokens, /*pin=*/false);
    reply.matched_pages = match.matched_pages;
    reply.segments.reserve(match.segments.size());
    for (const radix::MatchSegment& s : match.segments) {
      const BlobRecord* record = table_.FindLinked(s.blob);
      CHECK(record != nullptr) << "the index names blob " << s.blob.ToHex()
                               << ", which is not linked";
      reply.segments.push_back(MatchedSegmentOf(s, *record, ns.layout().page_tokens));
    }
  }
  lookup_stats_.Record(root, ns, tokens, phase, reply);
  return reply;
}

// ------------------------------------------------------------------------- Tiers

NodeTiers NodeEngine::Tiers() const {
  NodeTiers tiers;
  {
    TimedReaderMutexLock lock(&mu_, lock_hold_);
    // Under the lock, so the tier's occupancy agrees with the counts below (extents are
    // allocated and freed only under the exclusive lock).
    if (hbm_ != nullptr) tiers.tiers.push_back(hbm_->Stats());
    tiers.tiers.push_back(arena_->Stats());
    if (ssd_ != nullptr) tiers.tiers.push_back(ssd_->Stats());
    tiers.text = ledger_.text();
    tiers.rebuild = rebuild_.Stats();
    tiers.index = registry_.IndexStats();
    report::EngineStats& engine = tiers.engine;
    engine.namespaces = registry_.size();
    engine.blobs = table_.linked();
    ledger_.CountRecords(&tiers);
    engine.pending_puts = puts_.size();
    engine.leases = leases_.size();
    engine.draining = draining_;
    engine.meta_write_errors = journal_.errors();
  }
  // The curve and the per-tier plans are computed without the engine lock (the estimator
  // has its own), so a scrape never holds up puts and matches for that long.
  lookup_stats_.Fill(&tiers);
  tiers.meta = journal_.StoreStats();  // RocksDB's properties: no engine lock needed
  return tiers;
}

// ------------------------------------------------------------------------- reaping

ReapReply NodeEngine::ReapExpired() {
  ReapReply reply;
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  for (const Lease& lease : leases_.TakeExpired(now)) {
    keeper_.EndLease(mu_, lease);
    ++reply.leases_expired;
  }
  const std::vector<uint64_t> expired = puts_.ExpiredIds(now);
  for (const uint64_t id : expired) put_keeper_.Abort(mu_, id);
  reply.puts_expired = expired.size();
  return reply;
}

bool NodeEngine::QuiescentLocked() const {
  return puts_.empty() && leases_.size() == 0 && keeper_.holds(mu_) == 0;
}

absl::Status NodeEngine::Drain(absl::Duration timeout) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  draining_ = true;
  rebuild_.Stop();  // a long-polling rebuild worker returns at once
  bool quiescent;
  {
    LockHoldPause pause;
    quiescent = mu_.AwaitWithTimeout(absl::Condition(this, &NodeEngine::QuiescentLocked), timeout);
  }
  if (quiescent) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(
      "drain: ", puts_.size(), " puts, ", leases_.size(), " leases and ", keeper_.holds(mu_),
      " transfers still in flight after ", absl::FormatDuration(timeout)));
}

bool NodeEngine::draining() const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  return draining_;
}

}  // namespace strata::store::core
