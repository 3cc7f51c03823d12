// MemoryMetaStore: a MetaStore held in memory, for unit tests of the node engine.
//
// Same contract as every MetaStore (meta_store.h), checked by the same conformance suite:
// records are kept encoded exactly as RocksMetaStore keeps them, so LoadAll and GetBlob
// decode (and can find corrupt records) the same way. Nothing is durable: `sync` is counted
// and otherwise ignored, and the records live as long as the object.
//
// Fault injection, for tests of callers:
//   FailNextApplies(status, n)   the next n Apply calls return `status` and apply nothing
//   PutRawBlobForTest / PutRawNamespaceForTest   store arbitrary bytes as a record (a torn
//                                 or corrupt value), bypassing encoding and checks
//
// Thread-safe (every method, the test hooks too). Stats().bytes_on_disk is the bytes held
// (keys + values).
#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "strata/store/meta/internal/namespace_gate.h"
#include "strata/store/meta/meta_store.h"

namespace strata::store::meta {

class MemoryMetaStore final : public MetaStore {
 public:
  MemoryMetaStore() = default;
  MemoryMetaStore(const MemoryMetaStore&) = delete;
  MemoryMetaStore& operator=(const MemoryMetaStore&) = delete;

  absl::Status Apply(const MetaBatch& batch) override;
  absl::StatusOr<MetaLoadSummary> LoadAll(const MetaLoadCallbacks& callbacks) override;
  absl::StatusOr<BlobMeta> GetBlob(const radix::BlobKey& key) const override;
  absl::StatusOr<radix::Namespace> GetNamespace(const radix::PrefixHash& hash) const override;
  MetaStoreStats Stats() const override;

  // REQUIRES: !status.ok(), count >= 0. Replaces an earlier injection.
  void FailNextApplies(absl::Status status, int count = 1);
  void PutRawBlobForTest(const radix::BlobKey& key, std::string bytes);
  void PutRawNamespaceForTest(const radix::PrefixHash& hash, std::string bytes);

 private:
  void ApplyOps(const MetaBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  internal::NamespaceGate gate_;  // taken before mu_
  mutable absl::Mutex mu_;
  absl::btree_map<radix::PrefixHash, std::string> namespaces_ ABSL_GUARDED_BY(mu_);
  absl::btree_map<radix::PrefixHash, std::string> blobs_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_held_ ABSL_GUARDED_BY(mu_) = 0;
  MetaStoreStats counters_ ABSL_GUARDED_BY(mu_);  // applies .. corrupt_records
  absl::Status fail_status_ ABSL_GUARDED_BY(mu_);
  int fail_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace strata::store::meta
