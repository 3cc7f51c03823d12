// TierLedger: where each linked blob's bytes are, kept in step with everything that counts
// them. Every change of a linked record's extents goes through Attach*/Detach*, which keep
// the parent's children_in_dram / children_with_bytes, the byte tiers' eviction policies
// and the TEXT tier (its budget use and its LRU policy) in agreement with the record. It
// also owns the logical clock the policies and the admission policy read (one tick per put
// or read), the TEXT tier's counters, and what each tenant label's records hold in DRAM
// and on SSD against its quotas (TenantQuota): an extent is charged to its record's label
// when allocated (Charge) and refunded when freed (FreeDramExtent, FreeSsdExtent,
// Detach*), pending puts' extents and moves' targets included.
//
// Ownership: a NodeEngine owns one, with the policies (moved in at construction). The
// BlobTable, the DRAM tier and the SSD tier (nullable) are borrowed and outlive it; Detach
// frees the extent in its tier.
//
// Thread safety: thread-compatible, no lock of its own, on purpose: what it keeps is a
// function of the records' fields, which the index lock guards, and every change to them
// is paired with a change here. REQUIRES: the lock that guards the BlobTable (the
// engine's index lock) held for every call, exclusively for the non-const ones. The
// policies are called under it (no I/O; the tiers' Free takes the tier's own lock).
//
// Errors: none; misuse (attaching a second extent, detaching held bytes) CHECK-fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "strata/store/core/blob_record.h"
#include "strata/store/core/blob_table.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/tiering/admission_policy.h"
#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/tier.h"

namespace strata::store::core {

struct TierPolicies {
  std::unique_ptr<tiering::EvictionPolicy> dram;
  std::unique_ptr<tiering::EvictionPolicy> ssd;
  std::unique_ptr<tiering::EvictionPolicy> text;
  // The HBM tier's copies (only with an HBM tier; null without).
  std::unique_ptr<tiering::EvictionPolicy> hbm;
  std::unique_ptr<tiering::AdmissionPolicy> admission;
};

class TierLedger {
 public:
  // REQUIRES: every policy but hbm set, hbm set when `hbm` is; table and dram not null.
  TierLedger(BlobTable* table, tiering::Tier* dram, tiering::Tier* ssd, TierPolicies policies,
             uint64_t text_capacity_bytes, TenantQuotas quotas = {}, tiering::Tier* hbm = nullptr);
  TierLedger(const TierLedger&) = delete;
  TierLedger& operator=(const TierLedger&) = delete;

  // What the policies know of a blob occupying `bytes` of a tier.
  static tiering::BlobTraits TraitsOf(const BlobRecord& record, uint64_t bytes);
  // What the record costs the TEXT tier: its tokens, checksums and a per-record overhead.
  static uint64_t TextBytes(const BlobRecord& record);
  // Whether the record's DRAM copy may go: linked, in DRAM, unleased, unheld, not moving,
  // unpinned and no child in DRAM (leaf-first).
  static bool DramEvictable(const BlobRecord& record);
  // Whether the record's HBM copy may go: it has one, no lease (a same-host GPU reader
  // copies from it under one), not being filled, and no linked child with one (leaf-first).
  static bool HbmEvictable(const BlobRecord& record);
  // The record's reads as the admission policy sees them, at the current tick.
  tiering::BlobAccessStats AccessStats(const BlobRecord& record) const;

  // Adds the records' counts by tier to `tiers`: pages of linked blobs in DRAM and on SSD
  // (to those of tiers->tiers; a tier not listed there is not counted) and TEXT; unlinked
  // records still holding bytes, and token-only ones; and sets tiers->tenants (what each
  // tenant label's linked blobs hold). O(records).
  void CountRecords(NodeTiers* tiers) const;

  void AttachDram(BlobRecord* record, const tiering::Extent& extent);
  // Frees the DRAM extent. REQUIRES: no lease or HeldSpan holds the record.
  void DetachDram(BlobRecord* record);
  // The HBM copy (HbmCache): attached beside the DRAM extent, detached (freed) before it
  // goes. DetachDram and Release drop a record's HBM copy first. REQUIRES for Attach: an
  // HBM tier, the record in DRAM without an HBM copy; for Detach: no lease holds it.
  void AttachHbm(BlobRecord* record, const tiering::Extent& extent);
  // `demoted`: dropped for room in HBM, the DRAM copy staying (counted as the tier's
  // demotion); else because the DRAM bytes go too (an eviction).
  void DetachHbm(BlobRecord* record, bool demoted);
  // Frees an HBM extent that is not (or no longer) attached to a linked record.
  void FreeHbmExtent(const tiering::Extent& extent);
  void AttachSsd(BlobRecord* record, const tiering::Extent& extent);
  void DetachSsd(BlobRecord* record);
  // ---- tenant labels and their quotas
  // The label a record is charged to: its namespace's tenant ("" without a namespace).
  static const std::string& LabelOf(const BlobRecord& record);
  // `bytes` of `tier` (kDram or kSsd) were allocated for a record of label `owner`.
  void Charge(const std::string& owner, Tier tier, uint64_t bytes);
  // Frees `extent` in DRAM (SSD) and refunds it to `owner`'s label: every charged extent
  // is freed through these (Detach* call them).
  void FreeDramExtent(const BlobRecord& owner, const tiering::Extent& extent);
  void FreeSsdExtent(const BlobRecord& owner, const tiering::Extent& extent);
  // What `label`'s records hold in `tier`, and its quota there (0: none).
  uint64_t charged(const std::string& label, Tier tier) const;
  uint64_t quota(const std::string& label, Tier tier) const;
  // Labels whose charge in `tier` is above `fraction` of their quota there.
  std::vector<std::string> LabelsAbove(Tier tier, double fraction) const;
  void CountQuotaEvictions(const std::string& label, uint64_t blobs);
  void CountQuotaRefusal(const std::string& label);

  // Adds (+1) or removes (-1) `record`'s bytes from its parent's child counts.
  void CountInParent(const BlobRecord& record, int sign);
  // Starts or stops counting `record` in the TEXT tier to match its state.
  void SyncText(BlobRecord* record);
  // `record` is about to leave the index: out of its parent's counts and the byte
  // policies (SyncText once it is unlinked takes it out of the TEXT tier).
  void Unlinking(const BlobRecord& record);

  // One read of `record`: the next tick, and an access in the byte policies.
  void Accessed(BlobRecord* record);
  // The next tick (a put's insert tick).
  uint64_t NextTick() { return ++tick_; }
  // Admission: whether `record` leaving DRAM is worth an SSD write; whether a read now
  // (counted) of an SSD-only record should keep its DRAM copy.
  bool ShouldDemote(const BlobRecord& record) const;
  bool ShouldPromote(const BlobRecord& record) const;

  tiering::EvictionPolicy& dram_policy() { return *policies_.dram; }
  tiering::EvictionPolicy& ssd_policy() { return *policies_.ssd; }
  tiering::EvictionPolicy& text_policy() { return *policies_.text; }
  // REQUIRES: an HBM tier.
  tiering::EvictionPolicy& hbm_policy() { return *policies_.hbm; }
  tiering::Tier* hbm() const { return hbm_; }

  const TextTierStats& text() const { return text_; }
  void CountTextDrop() { ++text_.drops; }
  void CountTextDeletion() { ++text_.deletions; }
  void CountRebuild() { ++text_.rebuilds; }

 private:
  struct LabelBytes {
    uint64_t dram = 0;
    uint64_t ssd = 0;
    uint64_t quota_evictions = 0;
    uint64_t quota_refusals = 0;
  };
  void Refund(const BlobRecord& owner, Tier tier, uint64_t bytes);

  BlobTable* const table_;
  tiering::Tier* const dram_;
  tiering::Tier* const ssd_;  // null: no SSD tier
  tiering::Tier* const hbm_;  // null: no HBM tier
  TierPolicies policies_;
  uint64_t tick_ = 0;
  TextTierStats text_;
  const TenantQuotas quotas_;
  // Labels with a charge or a count (a label without either is erased).
  absl::flat_hash_map<std::string, LabelBytes> labels_;
};

}  // namespace strata::store::core
