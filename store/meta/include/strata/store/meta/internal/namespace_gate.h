// NamespaceGate (internal: not part of store/meta's API; public only because MemoryMetaStore
// holds one by value): the set of stored namespace hashes, and the check that every blob record
// a batch puts refers to one. Both MetaStores write through it.
//
// Write(batch, write) checks the batch against the set and, if it passes, runs `write`
// (the store's own atomic write of the whole batch):
//   - a batch without namespace ops holds the gate shared, so such batches write
//     concurrently (and RocksDB can group their commits);
//   - a batch that puts or deletes a namespace holds it exclusively, and the set changes
//     only when `write` succeeds.
// A namespace deleted while blob records still refer to it is not detected here (LoadAll
// hands such blobs on; their namespace is simply missing).
//
// Thread-safe. Errors: FAILED_PRECONDITION for a PutBlob whose namespace is neither in the
// set nor put earlier in the batch (write is not run); else write's status.
#pragma once

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/meta_batch.h"

namespace strata::store::meta::internal {

class NamespaceGate {
 public:
  // Adds a stored namespace (the stores call it while opening, before any Write).
  void AddKnown(const radix::PrefixHash& hash) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Status Write(const MetaBatch& batch, absl::FunctionRef<absl::Status()> write)
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<radix::PrefixHash> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::store::meta::internal
