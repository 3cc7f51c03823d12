// NodeEngine: reads under leases (Read, ReadSource, RenewLease, Release).
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

absl::Status BlobMissing(const radix::BlobKey& key) {
  return absl::NotFoundError(
      absl::StrCat("blob ", key.ToHex(), " is not in this node's index (evicted or deleted)"));
}

}  // namespace

absl::Status NodeEngine::ResolveReadLocked(const radix::Namespace& ns, radix::PrefixHash h0,
                                           absl::Span<const ReadRange> ranges,
                                           const AccessScope& scope,
                                           std::vector<BlobRecord*>* records) {
  const radix::KvLayout& layout = ns.layout();
  // Outside the caller's scope every blob of the namespace is absent.
  const bool allowed = scope.Allows(ns.tenant());
  for (const ReadRange& range : ranges) {
    BlobRecord* record = allowed ? table_.FindLinked(range.blob) : nullptr;
    if (record != nullptr && record->namespace_hash != h0) {
      const radix::Namespace& other = *record->ns;
      if (other.tenant() == ns.tenant() && other.model() == ns.model()) {
        return radix::CheckCompatible(other.layout(), layout);
      }
      record = nullptr;  // another tenant's or model's blob: as if absent
    }
    if (record == nullptr) {
      arena_->counters().RecordMiss();
      return BlobMissing(range.blob);
    }
    if (!record->has_bytes() && !record->moving) {
      arena_->counters().RecordMiss();
      return absl::NotFoundError(absl::StrCat(
          "blob ", range.blob.ToHex(),
          " has no bytes on this node (TEXT: its KV was dropped, its tokens kept; rebuild it)"));
    }
    STRATA_RETURN_IF_ERROR(CheckReadRange(*record, range, layout));
    records->push_back(record);
  }
  return absl::OkStatus();
}

absl::StatusOr<ReadReply> NodeEngine::Read(const radix::Namespace& ns,
                                           absl::Span<const ReadRange> ranges, absl::Duration ttl,
                                           const AccessScope& scope) {
  if (ranges.empty()) return absl::InvalidArgumentError("a read needs at least one range");
  if (ttl < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease ttl must be >= 0, got ", absl::FormatDuration(ttl)));
  }
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  const radix::KvLayout& layout = ns.layout();
  const absl::Time now = clock_->Now();

  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  if (leases_.size() >= options_.max_leases) {
    return absl::ResourceExhaustedError(absl::StrCat(
        leases_.size(), " leases are held, the limit (max_leases); release or let them expire"));
  }
  if (leases_.tenant_count(ns.tenant()) >= options_.max_tenant_leases) {
    return absl::ResourceExhaustedError(absl::StrCat("tenant ", ns.tenant(), " holds ",
                                                     leases_.tenant_count(ns.tenant()),
                                                     " leases, the limit (max_tenant_leases)"));
  }
  // Until every named blob is in DRAM: bytes only on SSD are promoted first (I/O without
  // the lock, so the world may change meanwhile and the ranges are checked again).
  std::vector<BlobRecord*> records;
  records.reserve(ranges.size());
  STRATA_RETURN_IF_ERROR(mover_.PromoteForRead(
      mu_,
      [&](std::vector<BlobRecord*>* resolved) {
        mu_.AssertHeld();
        return ResolveReadLocked(ns, h0, ranges, scope, resolved);
      },
      &records));

  ReadReply reply;
  reply.ranges.reserve(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(ReadRangeReply out, ReadRangeReplyOf(*records[i], ranges[i], layout));
    reply.ranges.push_back(std::move(out));
  }

  Lease lease = keeper_.StartLease(mu_, records, ids_.Next(), now, now + options_.LeaseTtl(ttl));
  lease.tenant = ns.tenant();
  for (BlobRecord* record : records) hbm_cache_.OnRead(mu_, record);
  if (options_.hot_reads > 0) {
    for (const BlobRecord* record : records) {
      if (record->hits != options_.hot_reads) continue;
      // Past kMaxHotBlobs (the replicator is behind) the blob is not replicated.
      if (hot_.size() < kMaxHotBlobs) hot_.push_back(record->key);
    }
  }
  arena_->counters().RecordHit(ranges.size());
  reply.lease_id = lease.id;
  reply.expiry = lease.expiry;
  leases_.Grant(std::move(lease));
  return reply;
}

absl::StatusOr<HeldSpan> NodeEngine::ReadSource(uint64_t lease_id, const radix::BlobKey& blob,
                                                uint64_t offset, uint64_t length,
                                                const AccessScope& scope) {
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  if (!leases_.Visible(lease_id, scope)) return LeaseTable::Unknown(lease_id);
  absl::StatusOr<tiering::BlobId> record_id = leases_.Find(lease_id, blob, now);
  if (!record_id.ok()) {
    if (absl::IsNotFound(record_id.status())) {
      // Expired but not reaped yet: reclaim it now.
      absl::StatusOr<Lease> expired = leases_.Remove(lease_id);
      if (expired.ok()) keeper_.EndLease(mu_, *expired);
    }
    return record_id.status();
  }
  BlobRecord* record = table_.Find(*record_id);
  CHECK(record != nullptr && record->extent.has_value()) << "leased bytes are gone";
  if (offset > record->bytes || length > record->bytes - offset) {
    return absl::OutOfRangeError(absl::StrCat("bytes [", offset, ", +", length, ") of blob ",
                                              blob.ToHex(), " are outside its ", record->bytes,
                                              " bytes"));
  }
  keeper_.Hold(mu_, record);
  return HeldSpan(this, record->id, arena_->Data(*record->extent).subspan(offset, length));
}

absl::Status NodeEngine::CheckLease(uint64_t lease_id, const AccessScope& scope) const {
  const absl::Time now = clock_->Now();
  TimedReaderMutexLock lock(&mu_, lock_hold_);
  if (!leases_.Visible(lease_id, scope) || !leases_.Live(lease_id, now)) {
    return absl::NotFoundError(absl::StrCat("lease ", lease_id, " is not live (expired?)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Time> NodeEngine::RenewLease(uint64_t lease_id, absl::Duration ttl,
                                                  const AccessScope& scope) {
  if (ttl < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("lease ttl must be >= 0, got ", absl::FormatDuration(ttl)));
  }
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  if (!leases_.Visible(lease_id, scope)) return LeaseTable::Unknown(lease_id);
  absl::StatusOr<absl::Time> expiry = leases_.Renew(lease_id, now, now + options_.LeaseTtl(ttl));
  if (!expiry.ok()) {
    absl::StatusOr<Lease> expired = leases_.Remove(lease_id);
    if (expired.ok()) keeper_.EndLease(mu_, *expired);
  }
  return expiry;
}

absl::Status NodeEngine::Release(uint64_t lease_id, const AccessScope& scope) {
  const absl::Time now = clock_->Now();
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  if (!leases_.Visible(lease_id, scope)) return LeaseTable::Unknown(lease_id);
  STRATA_ASSIGN_OR_RETURN(const Lease lease, leases_.Remove(lease_id));
  keeper_.EndLease(mu_, lease);
  if (now >= lease.expiry) {
    return absl::NotFoundError(absl::StrCat("lease ", lease_id, " had expired"));
  }
  return absl::OkStatus();
}

uint64_t NodeEngine::AdmitToHbm() {
  const MetaJournal::FlushOnExit flush(&journal_);  // after the lock below
  TimedMutexLock lock(&mu_, lock_hold_);
  return hbm_cache_.AdmitQueued(mu_);
}

std::vector<radix::BlobKey> NodeEngine::TakeHotBlobs() {
  TimedMutexLock lock(&mu_, lock_hold_);
  return std::exchange(hot_, {});
}

void NodeEngine::MarkReplicated(const radix::BlobKey& key, uint32_t copies) {
  TimedMutexLock lock(&mu_, lock_hold_);
  if (BlobRecord* record = table_.FindLinked(key); record != nullptr) {
    record->replicas = std::max(record->replicas, copies);
  }
}

}  // namespace strata::store::core
