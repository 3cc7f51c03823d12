#include "strata/store/meta/memory_meta_store.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "store/meta/meta_records.h"
#include "strata/store/meta/blob_meta_codec.h"

namespace strata::store::meta {
namespace {

using Records = absl::btree_map<radix::PrefixHash, std::string>;

// Puts or erases one record, keeping *bytes_held = sum of key + value sizes.
void PutRecord(Records* records, const radix::PrefixHash& key, std::string value,
               uint64_t* bytes_held) {
  auto [it, inserted] = records->try_emplace(key);
  if (inserted) {
    *bytes_held += kStoredKeySize;
  } else {
    *bytes_held -= it->second.size();
  }
  *bytes_held += value.size();
  it->second = std::move(value);
}

void EraseRecord(Records* records, const radix::PrefixHash& key, uint64_t* bytes_held) {
  auto it = records->find(key);
  if (it == records->end()) return;
  *bytes_held -= kStoredKeySize + it->second.size();
  records->erase(it);
}

}  // namespace

absl::Status MemoryMetaStore::Apply(const MetaBatch& batch) {
  {
    absl::MutexLock lock(&mu_);
    if (fail_count_ > 0) {
      --fail_count_;
      ++counters_.failed_applies;
      return fail_status_;
    }
  }
  absl::Status status = gate_.Write(batch, [&] {
    absl::MutexLock lock(&mu_);
    ApplyOps(batch);
    ++counters_.applies;
    if (batch.sync()) ++counters_.synced_applies;
    counters_.ops_applied += batch.size();
    counters_.bytes_applied += batch.value_bytes();
    return absl::OkStatus();
  });
  if (!status.ok()) {
    absl::MutexLock lock(&mu_);
    ++counters_.failed_applies;
  }
  return status;
}

void MemoryMetaStore::ApplyOps(const MetaBatch& batch) {
  using Kind = MetaBatch::OpKind;
  for (const MetaBatch::Op& op : batch.ops()) {
    switch (op.kind) {
      case Kind::kPutBlob:
        PutRecord(&blobs_, op.key, op.value, &bytes_held_);
        break;
      case Kind::kDeleteBlob:
        EraseRecord(&blobs_, op.key, &bytes_held_);
        break;
      case Kind::kPutNamespace:
        PutRecord(&namespaces_, op.key, op.value, &bytes_held_);
        break;
      case Kind::kDeleteNamespace:
        EraseRecord(&namespaces_, op.key, &bytes_held_);
        break;
    }
  }
}

absl::StatusOr<MetaLoadSummary> MemoryMetaStore::LoadAll(const MetaLoadCallbacks& callbacks) {
  // The snapshot: a copy, so that callbacks run without the lock.
  Records namespaces, blobs;
  {
    absl::MutexLock lock(&mu_);
    namespaces = namespaces_;
    blobs = blobs_;
  }
  RecordLoader loader(callbacks);
  absl::Status status;
  for (const auto& [key, value] : namespaces) {
    status = loader.Namespace(StoredKey(key), value);
    if (!status.ok()) break;
  }
  if (status.ok()) {
    for (const auto& [key, value] : blobs) {
      status = loader.Blob(StoredKey(key), value);
      if (!status.ok()) break;
    }
  }
  {
    absl::MutexLock lock(&mu_);
    counters_.corrupt_records +=
        loader.summary().corrupt_namespaces + loader.summary().corrupt_blobs;
  }
  if (!status.ok()) return status;
  return loader.summary();
}

absl::StatusOr<BlobMeta> MemoryMetaStore::GetBlob(const radix::BlobKey& key) const {
  std::string value;
  {
    absl::MutexLock lock(&mu_);
    auto it = blobs_.find(key.hash);
    if (it == blobs_.end()) {
      return absl::NotFoundError(absl::StrCat("no metadata for blob ", key.ToHex()));
    }
    value = it->second;
  }
  return DecodeBlobMeta(value, key);
}

absl::StatusOr<radix::Namespace> MemoryMetaStore::GetNamespace(
    const radix::PrefixHash& hash) const {
  std::string value;
  {
    absl::MutexLock lock(&mu_);
    auto it = namespaces_.find(hash);
    if (it == namespaces_.end()) {
      return absl::NotFoundError(absl::StrCat("no namespace ", hash.ToHex()));
    }
    value = it->second;
  }
  return DecodeNamespaceRecord(hash, value);
}

MetaStoreStats MemoryMetaStore::Stats() const {
  absl::MutexLock lock(&mu_);
  MetaStoreStats stats = counters_;
  stats.namespaces = namespaces_.size();
  stats.blobs = blobs_.size();
  stats.bytes_on_disk = bytes_held_;
  return stats;
}

void MemoryMetaStore::FailNextApplies(absl::Status status, int count) {
  CHECK(!status.ok()) << "FailNextApplies needs an error status";
  CHECK_GE(count, 0);
  absl::MutexLock lock(&mu_);
  fail_status_ = std::move(status);
  fail_count_ = count;
}

void MemoryMetaStore::PutRawBlobForTest(const radix::BlobKey& key, std::string bytes) {
  absl::MutexLock lock(&mu_);
  PutRecord(&blobs_, key.hash, std::move(bytes), &bytes_held_);
}

void MemoryMetaStore::PutRawNamespaceForTest(const radix::PrefixHash& hash, std::string bytes) {
  gate_.AddKnown(hash);
  absl::MutexLock lock(&mu_);
  PutRecord(&namespaces_, hash, std::move(bytes), &bytes_held_);
}

}  // namespace strata::store::meta
