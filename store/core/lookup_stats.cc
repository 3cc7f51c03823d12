// LookupStats (lookup_stats.h): Match's page hits and misses by phase and tier, and the
// live miss-ratio curve fed from every Match's pages.
#include "strata/store/core/lookup_stats.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/radix/token_span.h"
#include "strata/tiering/mrc/page_keys.h"

namespace strata::store::core {
namespace {

// The phase of a lookup its caller did not name, from its answer (node_engine_types.h).
LookupPhase InferPhase(uint32_t queried_pages, const MatchResult& reply) {
  uint32_t readable = 0;
  for (const Segment& s : reply.segments) {
    if (s.tier == Tier::kText) break;
    readable += s.page_count;
  }
  if (readable == 0) return LookupPhase::kPrefill;
  if (readable + 1 >= queried_pages) return LookupPhase::kDecode;
  return LookupPhase::kMidfill;
}

uint64_t LoadCounter(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

// Capacities beyond this (2^61 bytes) are not planned for; keeps the grid arithmetic exact.
constexpr uint64_t kMaxBytes = uint64_t{1} << 61;

}  // namespace

LookupStats::LookupStats(uint32_t mrc_sampled_keys, uint32_t curve_points)
    : mrc_sampled_keys_(mrc_sampled_keys),
      curve_points_(curve_points),
      mrc_(tiering::mrc::ShardsOptions{.max_sampled_keys = std::max(mrc_sampled_keys, 1u)}) {}

void LookupStats::Record(const radix::PrefixHash& h0, const radix::Namespace& ns,
                         absl::Span<const radix::TokenId> tokens, LookupPhase phase,
                         const MatchResult& reply) {
  const uint32_t queried = radix::WholePages(tokens.size(), ns.layout().page_tokens);
  matches_.fetch_add(1, std::memory_order_relaxed);
  matched_pages_.fetch_add(reply.matched_pages, std::memory_order_relaxed);
  queried_pages_.fetch_add(queried, std::memory_order_relaxed);
  Count(phase, queried, reply);
  Sample(h0, ns, tokens);
}

void LookupStats::Count(LookupPhase phase, uint32_t queried_pages, const MatchResult& reply) {
  if (phase == LookupPhase::kUnspecified) phase = InferPhase(queried_pages, reply);
  uint64_t dram = 0;
  uint64_t ssd = 0;
  uint64_t text = 0;
  for (const Segment& s : reply.segments) {
    switch (s.tier) {
      case Tier::kHbm:
      case Tier::kDram:
        dram += s.page_count;
        break;
      case Tier::kSsd:
        ssd += s.page_count;
        break;
      case Tier::kText:
        text += s.page_count;
        break;
    }
  }
  AtomicLookupCounts& c = lookups_[LookupPhaseIndex(phase)];
  c.lookups.fetch_add(1, std::memory_order_relaxed);
  c.queried_pages.fetch_add(queried_pages, std::memory_order_relaxed);
  c.dram_hit_pages.fetch_add(dram, std::memory_order_relaxed);
  c.ssd_hit_pages.fetch_add(ssd, std::memory_order_relaxed);
  c.text_hit_pages.fetch_add(text, std::memory_order_relaxed);
  const uint64_t hits = dram + ssd + text;
  c.miss_pages.fetch_add(queried_pages > hits ? queried_pages - hits : 0,
                         std::memory_order_relaxed);
}

void LookupStats::Sample(const radix::PrefixHash& h0, const radix::Namespace& ns,
                         absl::Span<const radix::TokenId> tokens) {
  if (mrc_sampled_keys_ == 0) return;
  const uint32_t page_tokens = ns.layout().page_tokens;
  const uint32_t pages = radix::WholePages(tokens.size(), page_tokens);
  if (pages == 0) return;
  // One access per page, keyed by its prefix (tiering/mrc/page_keys.h: cheaper than the
  // wire's PrefixHash, and what strata-replay keys its offline curve with). The key
  // buffer is reused by each request thread.
  thread_local std::vector<uint64_t> keys;
  keys.clear();
  tiering::mrc::AppendPrefixPageKeys(h0.lo ^ h0.hi, tokens, page_tokens, &keys);
  const uint64_t page_bytes = ns.layout().BytesPerPage();
  mrc_.AccessMany(keys, page_bytes);
  if (keys.capacity() > (size_t{1} << 16)) keys = std::vector<uint64_t>();  // don't hoard
  mrc_kv_bytes_.fetch_add(page_bytes * pages, std::memory_order_relaxed);
  mrc_token_bytes_.fetch_add(uint64_t{pages} * page_tokens * sizeof(radix::TokenId),
                             std::memory_order_relaxed);
}

void LookupStats::Fill(NodeTiers* tiers) const {
  tiers->engine.matches = LoadCounter(matches_);
  tiers->engine.matched_pages = LoadCounter(matched_pages_);
  tiers->engine.queried_pages = LoadCounter(queried_pages_);
  tiers->lookups.resize(kLookupPhases);
  for (int i = 0; i < kLookupPhases; ++i) {
    const AtomicLookupCounts& c = lookups_[i];
    LookupCounts& out = tiers->lookups[i];
    out.phase = kCountedPhases[i];
    out.lookups = LoadCounter(c.lookups);
    out.queried_pages = LoadCounter(c.queried_pages);
    out.dram_hit_pages = LoadCounter(c.dram_hit_pages);
    out.ssd_hit_pages = LoadCounter(c.ssd_hit_pages);
    out.text_hit_pages = LoadCounter(c.text_hit_pages);
    out.miss_pages = LoadCounter(c.miss_pages);
  }
  if (mrc_sampled_keys_ == 0 || mrc_.accesses() == 0) return;
  const uint64_t kv = LoadCounter(mrc_kv_bytes_);
  const uint64_t token = LoadCounter(mrc_token_bytes_);
  tiers->token_bytes_per_kv_byte = kv == 0 ? 0.0 : static_cast<double>(token) / kv;

  tiering::mrc::TierCapacities capacities;
  const report::TierStats* dram = tiers->Find(Tier::kDram);
  const report::TierStats* ssd = tiers->Find(Tier::kSsd);
  const report::TierStats* hbm = tiers->Find(Tier::kHbm);
  capacities.hbm_bytes = hbm != nullptr ? hbm->capacity_bytes : 0;
  capacities.dram_bytes = dram != nullptr ? dram->capacity_bytes : 0;
  capacities.ssd_bytes = ssd != nullptr ? ssd->capacity_bytes : 0;
  if (tiers->token_bytes_per_kv_byte > 0) {
    // Clamped: an extreme layout (few token bytes per KV byte) must not overflow.
    capacities.text_kv_equivalent = static_cast<uint64_t>(
        std::min(tiers->text.capacity_bytes / tiers->token_bytes_per_kv_byte, 0x1p60));
  }
  // The curve's own grid: fine up to the working set (where a curve rises) and coarser
  // up to twice the larger of the tiers' total and the working set, so a planner sees
  // where it flattens.
  const uint64_t total =
      capacities.dram_bytes + capacities.ssd_bytes + capacities.text_kv_equivalent;
  const uint64_t working_set = mrc_.Curve({}).working_set_bytes;
  const uint64_t top = std::max<uint64_t>(2 * std::min(std::max(total, working_set), kMaxBytes), 1);
  const uint32_t points = std::max<uint32_t>(curve_points_, 1) * 2;
  std::vector<uint64_t> grid = tiering::mrc::CapacityGrid(top, points);
  const std::vector<uint64_t> fine = tiering::mrc::CapacityGrid(working_set, points);
  grid.insert(grid.end(), fine.begin(), fine.end());
  for (const uint64_t c : {capacities.hbm_bytes, capacities.dram_bytes,
                           capacities.dram_bytes + capacities.ssd_bytes, total}) {
    grid.push_back(c);  // the current capacities themselves
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  tiers->mrc = mrc_.Curve(grid);
  tiers->curves = tiering::mrc::PlanTiers(tiers->mrc, capacities, curve_points_);
}

}  // namespace strata::store::core
