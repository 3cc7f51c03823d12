// NodeEngine: creation, record life cycle, Match, Tiers, reaping and draining. The put,
// read and admin calls are in node_engine_put.cc, node_engine_read.cc and
// node_engine_admin.cc.
#include "strata/store/core/node_engine.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"

namespace strata::store::core {
namespace {

// A bijection of 64-bit values (SplitMix64's finalizer): distinct counters give distinct,
// hard-to-guess ids.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

absl::Status ValidateOptions(const NodeEngineOptions& o) {
  if (o.dram_bytes == 0) return absl::InvalidArgumentError("dram_bytes must be > 0");
  if (o.max_blob_bytes == 0 || o.max_blob_bytes > (uint64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_blob_bytes must be in [1, 1 GiB], got ", o.max_blob_bytes));
  }
  if (o.default_lease_ttl <= absl::ZeroDuration() || o.max_lease_ttl < o.default_lease_ttl) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease TTLs must satisfy 0 < default_lease_ttl (",
                     absl::FormatDuration(o.default_lease_ttl), ") <= max_lease_ttl (",
                     absl::FormatDuration(o.max_lease_ttl), ")"));
  }
  if (o.put_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("put_ttl must be > 0");
  }
  if (o.reap_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("reap_interval must be >= 0");
  }
  if (!(o.dram_low_watermark > 0 && o.dram_low_watermark <= o.dram_high_watermark &&
        o.dram_high_watermark <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("DRAM watermarks must satisfy 0 < low (",
                                                   o.dram_low_watermark, ") <= high (",
                                                   o.dram_high_watermark, ") <= 1"));
  }
  if (o.rebuild_task_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rebuild_task_ttl must be > 0");
  }
  if (o.max_rebuild_attempts == 0 || o.max_rebuild_queue == 0) {
    return absl::InvalidArgumentError("max_rebuild_attempts and max_rebuild_queue must be > 0");
  }
  if (o.mrc_curve_points == 0) return absl::InvalidArgumentError("mrc_curve_points must be > 0");
  return absl::OkStatus();
}

}  // namespace

// ------------------------------------------------------------------------- HeldSpan

HeldSpan& HeldSpan::operator=(HeldSpan&& other) noexcept {
  if (this != &other) {
    Reset();
    engine_ = std::exchange(other.engine_, nullptr);
    record_id_ = std::exchange(other.record_id_, 0);
    span_ = std::exchange(other.span_, {});
  }
  return *this;
}

void HeldSpan::Reset() {
  if (engine_ == nullptr) return;
  std::exchange(engine_, nullptr)->DropHold(record_id_);
  record_id_ = 0;
  span_ = {};
}

// ------------------------------------------------------------------------- lifecycle

absl::StatusOr<std::unique_ptr<NodeEngine>> NodeEngine::Create(const NodeEngineOptions& options) {
  STRATA_RETURN_IF_ERROR(ValidateOptions(options));
  tiering::DramArenaOptions arena_options;
  arena_options.capacity_bytes = options.dram_bytes;
  arena_options.name = options.dram_name;
  arena_options.try_hugetlb = options.dram_try_hugetlb;
  arena_options.populate = options.dram_populate;
  arena_options.granule_bytes = options.dram_granule_bytes;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<tiering::DramArena> arena,
                          tiering::DramArena::Create(arena_options));
  Clock* clock = options.clock != nullptr ? options.clock : RealClock::Default();
  Policies policies;
  STRATA_ASSIGN_OR_RETURN(policies.dram, tiering::MakeEvictionPolicy(options.dram_policy));
  STRATA_ASSIGN_OR_RETURN(policies.ssd, tiering::MakeEvictionPolicy(options.ssd_policy));
  STRATA_ASSIGN_OR_RETURN(policies.text, tiering::MakeEvictionPolicy("lru"));
  STRATA_ASSIGN_OR_RETURN(policies.admission, tiering::MakeAdmissionPolicy(options.admission));
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
      id_secret_(id_secret),
      puts_(options.put_ttl),
      lookup_stats_(options.mrc_sampled_keys, options.mrc_curve_points),
      ssd_(options.ssd),
      ledger_(&table_, arena_.get(), options.ssd.get(), std::move(policies), options.text_bytes),
      journal_(options.meta),
      rebuild_(RebuildQueueOptions{.max_queue = options.max_rebuild_queue,
                                   .task_ttl = options.rebuild_task_ttl,
                                   .max_attempts = options.max_rebuild_attempts}),
      lock_hold_(options.measure_lock_hold ? &lock_hold_histogram_ : nullptr),
      mover_(TierMoverOptions{.dram_high_watermark = options.dram_high_watermark,
                              .dram_low_watermark = options.dram_low_watermark,
                              .text_bytes = options.text_bytes},
             TierMover::Deps{.table = &table_,
                             .ledger = &ledger_,
                             .journal = &journal_,
                             .dram = arena_.get(),
                             .ssd = options.ssd.get(),
                             .records = this,
                             .index_mu = &mu_,
                             .lock_hold = lock_hold_}) {
  if (options_.reap_interval > absl::ZeroDuration()) {
    reaper_ = std::thread([this] { ReaperLoop(); });
  }
  if (options_.background_demotion) mover_.Start();
}

NodeEngine::~NodeEngine() {
  stop_reaper_.Notify();
  mover_.Stop();
  if (reaper_.joinable()) reaper_.join();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  DCHECK_EQ(holds_, 0u) << "a HeldSpan outlives its NodeEngine";
}

void NodeEngine::ReaperLoop() {
  while (!stop_reaper_.WaitForNotificationWithTimeout(options_.reap_interval)) {
    const ReapReply reaped = ReapExpired();
    if (reaped.leases_expired + reaped.puts_expired > 0) {
      VLOG(1) << "reaper: " << reaped.leases_expired << " leases expired, " << reaped.puts_expired
              << " puts abandoned";
    }
  }
}

uint64_t NodeEngine::NewId() {
  uint64_t id = 0;
  while (id == 0) id = Mix64(++next_id_ + id_secret_);
  return id;
}

// ------------------------------------------------------------------------- records

uint64_t NodeEngine::MaybeRelease(BlobRecord* record) {
  uint64_t freed = 0;
  while (record != nullptr) {
    if (record->transient_dram && record->leases == 0 && record->holds == 0 && !record->moving) {
      // A copy made only to serve reads from SSD: gone once they are done.
      record->transient_dram = false;
      if (record->state == BlobState::kLinked && record->in_dram() && record->on_ssd() &&
          record->children_in_dram == 0 && record->path_pins == 0 && !record->pinned) {
        freed += record->extent->length;
        ledger_.DetachDram(record);
      }
    }
    if (record->state != BlobState::kUnlinked) break;
    if (record->leases > 0 || record->holds > 0 || record->moving) break;
    if (record->extent.has_value()) {
      arena_->Free(*record->extent);
      freed += record->extent->length;
      record->extent.reset();
    }
    if (record->ssd_extent.has_value()) {
      ssd_->Free(*record->ssd_extent);
      record->ssd_extent.reset();
    }
    // Only the tokens (and what chains them) are needed from now on.
    std::vector<uint64_t>().swap(record->checksums);
    rebuild_.End(record, /*filled=*/false);
    if (record->children > 0) break;
    const tiering::BlobId parent_id = record->parent_id;
    table_.Erase(record->id);
    record = nullptr;
    if (parent_id != 0) {
      BlobRecord* parent = table_.Find(parent_id);
      CHECK(parent != nullptr) << "record " << parent_id << " erased while a child needs it";
      CHECK_GT(parent->children, 0u);
      --parent->children;
      record = parent;
    }
  }
  return freed;
}

void NodeEngine::UnlinkRecord(BlobRecord* record) {
  DCHECK(!record->pinned) << "unlinking a pinned blob";
  record->pinned = false;
  record->pin.Release();
  record->pages_in_index = 0;
  ledger_.Unlinking(*record);
  table_.Unlink(record);
  ledger_.SyncText(record);
  journal_.Forget(record->key);
}

uint64_t NodeEngine::ApplyRemovedSpans(absl::Span<const radix::EvictedSpan> spans,
                                       bool count_evictions, uint64_t* bytes_freed) {
  uint64_t unlinked = 0;
  for (const radix::EvictedSpan& span : spans) {
    BlobRecord* record = table_.FindLinked(span.blob);
    CHECK(record != nullptr) << "the index named blob " << span.blob.ToHex()
                             << ", which is not linked";
    CHECK_GE(record->pages_in_index, span.page_count);
    record->pages_in_index -= span.page_count;
    if (record->pages_in_index > 0) continue;
    UnlinkRecord(record);
    ++unlinked;
    if (count_evictions) arena_->counters().RecordEviction();
    *bytes_freed += MaybeRelease(record);
  }
  return unlinked;
}

// ------------------------------------------------------------------------- TierMover::Records

void NodeEngine::HoldRecord(BlobRecord* record) {
  mu_.AssertHeld();
  ++record->holds;
  ++holds_;
}

void NodeEngine::UnholdRecord(BlobRecord* record) {
  mu_.AssertHeld();
  CHECK_GT(record->holds, 0u);
  --record->holds;
  --holds_;
}

uint64_t NodeEngine::ReleaseRecord(BlobRecord* record) {
  mu_.AssertHeld();
  return MaybeRelease(record);
}

absl::Status NodeEngine::RemoveFromIndex(BlobRecord* record, uint32_t from_page,
                                         DeleteReply* reply) {
  mu_.AssertHeld();
  return RemoveFromIndexLocked(record, from_page, /*count_evictions=*/false, reply);
}

std::vector<radix::TokenId> NodeEngine::SequenceTokens(const BlobRecord& record,
                                                       uint32_t pages) const {
  const uint32_t page_tokens = record.ns->layout().page_tokens;
  // (record, own pages to take), from `record` up to the blob at page 0.
  std::vector<std::pair<const BlobRecord*, uint32_t>> chain;
  const BlobRecord* r = &record;
  uint32_t upto = pages;
  while (upto > 0) {
    CHECK(r != nullptr) << "broken parent chain";
    CHECK(upto > r->first_page && upto <= r->end_page())
        << "page " << upto << " outside (" << r->first_page << ", " << r->end_page() << "]";
    chain.emplace_back(r, upto - r->first_page);
    upto = r->first_page;
    r = r->parent_id != 0 ? table_.Find(r->parent_id) : nullptr;
  }
  std::vector<radix::TokenId> tokens;
  tokens.reserve(size_t{pages} * page_tokens);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const auto& own = it->first->tokens;
    tokens.insert(tokens.end(), own.begin(), own.begin() + size_t{it->second} * page_tokens);
  }
  return tokens;
}

BlobInfo NodeEngine::InfoOf(const BlobRecord& record, bool with_tokens) const {
  BlobInfo info;
  info.key = record.key;
  info.namespace_hash = record.namespace_hash;
  info.tenant = record.ns->tenant();
  info.model = record.ns->model();
  info.layout = record.ns->layout();
  info.parent = record.parent;
  info.start_hash = record.start_hash;
  info.first_page = record.first_page;
  info.pages = record.pages;
  info.bytes = record.bytes;
  info.blob_checksum = BlobChecksum(record.checksums);
  if (record.extent.has_value()) {
    info.tiers.push_back(Tier::kDram);
    info.extent = *record.extent;
  }
  if (record.ssd_extent.has_value()) {
    info.tiers.push_back(Tier::kSsd);
    info.ssd_extent = *record.ssd_extent;
  }
  if (info.tiers.empty()) info.tiers.push_back(Tier::kText);
  info.pages_in_index = record.pages_in_index;
  info.leases = record.leases;
  info.pinned = record.pinned;
  info.created = record.created;
  info.last_access = record.last_access;
  info.hits = record.hits;
  if (with_tokens) info.tokens = record.tokens;
  return info;
}

void NodeEngine::DropHold(uint64_t record_id) {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  BlobRecord* record = table_.Find(record_id);
  CHECK(record != nullptr) << "HeldSpan of unknown record " << record_id;
  CHECK_GT(record->holds, 0u);
  --record->holds;
  --holds_;
  MaybeRelease(record);
}

// ------------------------------------------------------------------------- Match

absl::StatusOr<MatchResult> NodeEngine::Match(const radix::Namespace& ns,
                                              absl::Span<const radix::TokenId> tokens,
                                              LookupPhase phase) const {
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  MatchResult reply;
  {
    TimedReaderMutexLock lock(&mu_, lock_hold_);
    const NamespaceEntry* entry = registry_.Find(h0);
    if (entry == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("namespace ", ns.ToString(), " is not known to this node"));
    }
    const radix::MatchResult match = entry->tree->Match(h0, tokens, /*pin=*/false);
    reply.matched_pages = match.matched_pages;
    reply.segments.reserve(match.segments.size());
    for (const radix::MatchSegment& s : match.segments) {
      const BlobRecord* record = table_.FindLinked(s.blob);
      CHECK(record != nullptr) << "the index names blob " << s.blob.ToHex()
                               << ", which is not linked";
      Segment segment{
          s.blob, s.blob_page_offset, s.page_count, s.seq_page_begin, record->pages, Tier::kDram,
          {}};
      if (!record->in_dram()) {
        if (record->on_ssd()) {
          segment.tier = Tier::kSsd;
        } else {
          segment.tier = Tier::kText;
          const size_t page_tokens = ns.layout().page_tokens;
          const auto own =
              absl::MakeConstSpan(record->tokens)
                  .subspan(s.blob_page_offset * page_tokens, s.page_count * page_tokens);
          segment.tokens.assign(own.begin(), own.end());
        }
      }
      reply.segments.push_back(std::move(segment));
    }
  }
  lookup_stats_.Record(h0, ns, tokens, phase, reply);
  return reply;
}

// ------------------------------------------------------------------------- Tiers

NodeTiers NodeEngine::Tiers() const {
  NodeTiers tiers;
  {
    TimedReaderMutexLock lock(&mu_, lock_hold_);
    // Under the lock, so the tier's occupancy agrees with the counts below (extents are
    // allocated and freed only under the exclusive lock).
    report::TierStats dram = arena_->Stats();
    std::optional<report::TierStats> ssd;
    if (ssd_ != nullptr) ssd = ssd_->Stats();
    tiers.text = ledger_.text();
    tiers.rebuild = rebuild_.Stats();
    tiers.index = registry_.IndexStats();
    report::EngineStats& engine = tiers.engine;
    engine.namespaces = registry_.size();
    engine.blobs = table_.linked();
    table_.ForEach([&](const BlobRecord& r) {
      if (r.state == BlobState::kUnlinked) {
        if (r.extent.has_value()) {
          ++engine.unlinked_blobs;
        } else {
          ++engine.token_only_blobs;
        }
      } else if (r.state == BlobState::kLinked) {
        if (r.in_dram()) dram.pages += r.pages;
        if (r.on_ssd() && ssd.has_value()) ssd->pages += r.pages;
        if (r.text_tracked) tiers.text.pages += r.pages;
      }
    });
    engine.pending_puts = puts_.size();
    engine.leases = leases_.size();
    engine.draining = draining_;
    engine.meta_write_errors = journal_.errors();
    tiers.tiers.push_back(dram);
    if (ssd.has_value()) tiers.tiers.push_back(*ssd);
  }
  // The curve and the per-tier plans are computed without the engine lock (the estimator
  // has its own), so a scrape never holds up puts and matches for that long.
  lookup_stats_.Fill(&tiers);
  return tiers;
}

// ------------------------------------------------------------------------- reaping

ReapReply NodeEngine::ReapExpired() {
  ReapReply reply;
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  for (const Lease& lease : leases_.TakeExpired(now)) {
    ReleaseLeaseLocked(lease);
    ++reply.leases_expired;
  }
  const std::vector<uint64_t> expired = puts_.ExpiredIds(now);
  for (const uint64_t id : expired) AbortPutLocked(id);
  reply.puts_expired = expired.size();
  return reply;
}

bool NodeEngine::QuiescentLocked() const {
  return puts_.empty() && leases_.size() == 0 && holds_ == 0;
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
  return absl::DeadlineExceededError(
      absl::StrCat("drain: ", puts_.size(), " puts, ", leases_.size(), " leases and ", holds_,
                   " transfers still in flight after ", absl::FormatDuration(timeout)));
}

bool NodeEngine::draining() const {
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  return draining_;
}

}  // namespace strata::store::core
