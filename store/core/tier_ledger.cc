// TierLedger (tier_ledger.h).
#include "strata/store/core/tier_ledger.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "glog/logging.h"

namespace strata::store::core {
namespace {

// What a TEXT record costs beyond its tokens and checksums (the record, its table and
// policy entries).
constexpr uint64_t kTextRecordOverhead = 256;

}  // namespace

TierLedger::TierLedger(BlobTable* table, tiering::Tier* dram, tiering::Tier* ssd,
                       TierPolicies policies, uint64_t text_capacity_bytes, TenantQuotas quotas,
                       tiering::Tier* hbm)
    : table_(table),
      dram_(dram),
      ssd_(ssd),
      hbm_(hbm),
      policies_(std::move(policies)),
      quotas_(std::move(quotas)) {
  CHECK(policies_.dram && policies_.ssd && policies_.text && policies_.admission);
  CHECK(hbm_ == nullptr || policies_.hbm != nullptr) << "an HBM tier needs its policy";
  text_.capacity_bytes = text_capacity_bytes;
}

tiering::BlobTraits TierLedger::TraitsOf(const BlobRecord& record, uint64_t bytes) {
  tiering::BlobTraits traits;
  traits.bytes = bytes;
  traits.first_page = record.first_page;
  traits.pages = record.pages;
  traits.page_tokens = record.ns->layout().page_tokens;
  traits.parent = record.parent_id;
  traits.session_hint = record.root_id;
  return traits;
}

uint64_t TierLedger::TextBytes(const BlobRecord& record) {
  return record.tokens.size() * sizeof(radix::TokenId) +
         record.checksums.size() * sizeof(uint64_t) + kTextRecordOverhead;
}

bool TierLedger::DramEvictable(const BlobRecord& r) {
  return r.state == BlobState::kLinked && r.in_dram() && r.leases == 0 && r.holds == 0 &&
         !r.moving && !r.pinned && r.path_pins == 0 && r.children_in_dram == 0;
}

bool TierLedger::HbmEvictable(const BlobRecord& r) {
  return r.in_hbm() && r.leases == 0 && !r.hbm_filling && r.children_in_hbm == 0;
}

tiering::BlobAccessStats TierLedger::AccessStats(const BlobRecord& record) const {
  tiering::BlobAccessStats stats;
  stats.reads = record.hits;
  stats.insert_tick = record.insert_tick;
  stats.previous_read_tick = std::max(record.read_tick, record.insert_tick);
  stats.now_tick = std::max(tick_, stats.previous_read_tick);
  return stats;
}

void TierLedger::CountInParent(const BlobRecord& record, int sign) {
  if (record.parent_id == 0 || record.state != BlobState::kLinked) return;
  BlobRecord* parent = table_->Find(record.parent_id);
  CHECK(parent != nullptr) << "parent record " << record.parent_id << " is gone";
  if (record.in_dram()) parent->children_in_dram += sign;
  if (record.in_hbm()) parent->children_in_hbm += sign;
  if (record.has_bytes()) parent->children_with_bytes += sign;
}

void TierLedger::SyncText(BlobRecord* record) {
  const bool text = record->state == BlobState::kLinked && !record->has_bytes();
  if (text == record->text_tracked) return;
  record->text_tracked = text;
  if (text) {
    text_.used_bytes += TextBytes(*record);
    ++text_.blobs;
    policies_.text->OnInsert(record->id, TraitsOf(*record, TextBytes(*record)));
  } else {
    text_.used_bytes -= TextBytes(*record);
    --text_.blobs;
    policies_.text->OnErase(record->id);
  }
}

void TierLedger::AttachDram(BlobRecord* record, const tiering::Extent& extent) {
  CHECK(!record->in_dram());
  CountInParent(*record, -1);
  record->extent = extent;
  CountInParent(*record, +1);
  if (record->state == BlobState::kLinked) {
    policies_.dram->OnInsert(record->id, TraitsOf(*record, extent.length));
  }
  SyncText(record);
}

void TierLedger::DetachDram(BlobRecord* record) {
  CHECK(record->in_dram());
  CHECK(record->leases == 0 && record->holds == 0) << "dropping held bytes";
  if (record->in_hbm()) DetachHbm(record, /*demoted=*/false);  // inclusive: the HBM copy goes first
  CountInParent(*record, -1);
  FreeDramExtent(*record, *record->extent);
  record->extent.reset();
  CountInParent(*record, +1);
  policies_.dram->OnErase(record->id);
  SyncText(record);
}

void TierLedger::AttachHbm(BlobRecord* record, const tiering::Extent& extent) {
  CHECK(hbm_ != nullptr && record->in_dram() && !record->in_hbm());
  CountInParent(*record, -1);
  record->hbm_extent = extent;
  CountInParent(*record, +1);
  if (record->state == BlobState::kLinked) {
    policies_.hbm->OnInsert(record->id, TraitsOf(*record, extent.length));
  }
}

void TierLedger::DetachHbm(BlobRecord* record, bool demoted) {
  CHECK(record->in_hbm());
  CHECK_EQ(record->leases, 0u) << "dropping the HBM copy of a leased blob";
  CountInParent(*record, -1);
  FreeHbmExtent(*record->hbm_extent);
  record->hbm_extent.reset();
  CountInParent(*record, +1);
  policies_.hbm->OnErase(record->id);
  if (demoted) {
    hbm_->counters().RecordDemotion();
  } else {
    hbm_->counters().RecordEviction();
  }
}

void TierLedger::FreeHbmExtent(const tiering::Extent& extent) {
  CHECK(hbm_ != nullptr);
  hbm_->Free(extent);
}

void TierLedger::AttachSsd(BlobRecord* record, const tiering::Extent& extent) {
  CHECK(!record->on_ssd());
  CountInParent(*record, -1);
  record->ssd_extent = extent;
  CountInParent(*record, +1);
  if (record->state == BlobState::kLinked) {
    policies_.ssd->OnInsert(record->id, TraitsOf(*record, extent.length));
  }
  SyncText(record);
}

void TierLedger::DetachSsd(BlobRecord* record) {
  CHECK(record->on_ssd());
  CountInParent(*record, -1);
  FreeSsdExtent(*record, *record->ssd_extent);
  record->ssd_extent.reset();
  CountInParent(*record, +1);
  policies_.ssd->OnErase(record->id);
  SyncText(record);
}

const std::string& TierLedger::LabelOf(const BlobRecord& record) {
  static const std::string* const none = new std::string();
  return record.ns == nullptr ? *none : record.ns->tenant();
}

void TierLedger::Charge(const std::string& owner, Tier tier, uint64_t bytes) {
  CHECK(tier == Tier::kDram || tier == Tier::kSsd);
  LabelBytes& label = labels_[owner];
  (tier == Tier::kDram ? label.dram : label.ssd) += bytes;
}

void TierLedger::Refund(const BlobRecord& owner, Tier tier, uint64_t bytes) {
  // A refund without its charge is a bug in the accounting (fatal in debug builds); a
  // release build logs it and keeps serving with the charge at 0.
  auto it = labels_.find(LabelOf(owner));
  if (it == labels_.end()) {
    LOG(DFATAL) << "refunding " << bytes << " bytes to label \"" << LabelOf(owner)
                << "\", never charged";
    return;
  }
  LabelBytes& label = it->second;
  uint64_t& charged = tier == Tier::kDram ? label.dram : label.ssd;
  if (charged < bytes) {
    LOG(DFATAL) << "refunding " << bytes << " bytes to label \"" << it->first << "\", charged "
                << charged;
    bytes = charged;
  }
  charged -= bytes;
  if (label.dram == 0 && label.ssd == 0 && label.quota_evictions == 0 &&
      label.quota_refusals == 0) {
    labels_.erase(it);
  }
}

void TierLedger::FreeDramExtent(const BlobRecord& owner, const tiering::Extent& extent) {
  dram_->Free(extent);
  Refund(owner, Tier::kDram, extent.length);
}

void TierLedger::FreeSsdExtent(const BlobRecord& owner, const tiering::Extent& extent) {
  CHECK(ssd_ != nullptr);
  ssd_->Free(extent);
  Refund(owner, Tier::kSsd, extent.length);
}

uint64_t TierLedger::charged(const std::string& label, Tier tier) const {
  auto it = labels_.find(label);
  if (it == labels_.end()) return 0;
  return tier == Tier::kDram ? it->second.dram : tier == Tier::kSsd ? it->second.ssd : 0;
}

uint64_t TierLedger::quota(const std::string& label, Tier tier) const {
  auto it = quotas_.find(label);
  if (it == quotas_.end()) return 0;
  return tier == Tier::kDram  ? it->second.dram_bytes
         : tier == Tier::kSsd ? it->second.ssd_bytes
                              : 0;
}

std::vector<std::string> TierLedger::LabelsAbove(Tier tier, double fraction) const {
  std::vector<std::string> above;
  for (const auto& [label, q] : quotas_) {
    const uint64_t limit = tier == Tier::kDram ? q.dram_bytes : q.ssd_bytes;
    if (limit == 0) continue;
    if (static_cast<double>(charged(label, tier)) > fraction * static_cast<double>(limit)) {
      above.push_back(label);
    }
  }
  return above;
}

void TierLedger::CountQuotaEvictions(const std::string& label, uint64_t blobs) {
  if (blobs > 0) labels_[label].quota_evictions += blobs;
}

void TierLedger::CountQuotaRefusal(const std::string& label) { ++labels_[label].quota_refusals; }

void TierLedger::Unlinking(const BlobRecord& record) {
  CountInParent(record, -1);
  if (record.in_dram()) policies_.dram->OnErase(record.id);
  if (record.on_ssd()) policies_.ssd->OnErase(record.id);
  if (record.in_hbm()) policies_.hbm->OnErase(record.id);
}

void TierLedger::Accessed(BlobRecord* record) {
  record->read_tick = ++tick_;
  policies_.dram->OnAccess(record->id);
  if (record->on_ssd()) policies_.ssd->OnAccess(record->id);
  if (record->in_hbm()) policies_.hbm->OnAccess(record->id);
}

bool TierLedger::ShouldDemote(const BlobRecord& record) const {
  return policies_.admission->ShouldDemote(TraitsOf(record, record.bytes), AccessStats(record));
}

bool TierLedger::ShouldPromote(const BlobRecord& record) const {
  tiering::BlobAccessStats stats = AccessStats(record);
  ++stats.reads;
  stats.now_tick = tick_ + 1;
  return policies_.admission->ShouldPromote(TraitsOf(record, record.bytes), stats);
}

void TierLedger::CountRecords(NodeTiers* tiers) const {
  report::TierStats* dram = nullptr;
  report::TierStats* ssd = nullptr;
  report::TierStats* hbm = nullptr;
  for (report::TierStats& stats : tiers->tiers) {
    if (stats.tier == Tier::kHbm) hbm = &stats;
    if (stats.tier == Tier::kDram) dram = &stats;
    if (stats.tier == Tier::kSsd) ssd = &stats;
  }
  std::map<std::string_view, report::TenantUsage> usage;
  table_->ForEach([&](const BlobRecord& r) {
    if (r.state == BlobState::kLinked) {
      report::TenantUsage& u = usage[r.ns->tenant()];
      ++u.blobs;
      if (r.in_dram()) u.dram_bytes += r.extent->length;
      if (r.on_ssd()) u.ssd_bytes += r.ssd_extent->length;
      if (r.text_tracked) ++u.text_blobs;
    }
    if (r.state == BlobState::kUnlinked) {
      if (r.extent.has_value()) {
        ++tiers->engine.unlinked_blobs;
      } else {
        ++tiers->engine.token_only_blobs;
      }
    } else if (r.state == BlobState::kLinked) {
      if (r.in_dram() && dram != nullptr) dram->pages += r.pages;
      if (r.on_ssd() && ssd != nullptr) ssd->pages += r.pages;
      if (r.in_hbm() && hbm != nullptr) hbm->pages += r.pages;
      if (r.text_tracked) tiers->text.pages += r.pages;
      if (!r.parent.has_value()) ++tiers->engine.segments;
      if (r.replicas >= 2) ++tiers->engine.replicated_blobs;
    }
  });
  for (const auto& [label, bytes] : labels_) {
    if (label.empty()) continue;  // records without a namespace (unit tests)
    report::TenantUsage& u = usage[label];
    u.dram_charged_bytes = bytes.dram;
    u.ssd_charged_bytes = bytes.ssd;
    u.quota_evictions = bytes.quota_evictions;
    u.quota_refusals = bytes.quota_refusals;
  }
  for (const auto& [label, q] : quotas_) {
    report::TenantUsage& u = usage[label];
    u.dram_quota_bytes = q.dram_bytes;
    u.ssd_quota_bytes = q.ssd_bytes;
  }
  tiers->tenants.clear();
  for (const auto& [label, u] : usage) {
    if (tiers->tenants.size() >= report::kMaxReportedTenants) {
      if (tiers->tenants.back().tenant != report::kOtherTenants) {
        tiers->tenants.push_back({.tenant = std::string(report::kOtherTenants)});
      }
      report::TenantUsage& other = tiers->tenants.back();
      other.blobs += u.blobs;
      other.dram_bytes += u.dram_bytes;
      other.ssd_bytes += u.ssd_bytes;
      other.text_blobs += u.text_blobs;
      other.dram_charged_bytes += u.dram_charged_bytes;
      other.ssd_charged_bytes += u.ssd_charged_bytes;
      other.dram_quota_bytes += u.dram_quota_bytes;
      other.ssd_quota_bytes += u.ssd_quota_bytes;
      other.quota_evictions += u.quota_evictions;
      other.quota_refusals += u.quota_refusals;
      continue;
    }
    tiers->tenants.push_back(u);
    tiers->tenants.back().tenant = std::string(label);
  }
}

}  // namespace strata::store::core
