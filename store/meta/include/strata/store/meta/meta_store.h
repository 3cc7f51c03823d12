// MetaStore: the node's durable metadata — one record per blob (BlobMeta) and one per
// namespace — behind a narrow interface with two implementations: RocksMetaStore
// (rocks_meta_store.h, on disk) and MemoryMetaStore (memory_meta_store.h, for tests, with
// fault injection). Both pass one conformance suite (meta_store_conformance_test.cc).
//
// What the node does with it: every change of a blob's durable state (committed, moved to
// SSD, deleted, pinned) goes into a MetaBatch and through Apply; at start the node streams
// everything back with LoadAll and rebuilds its index. The store interprets nothing but
// keys and namespace references.
//
// Thread safety: every method is thread-safe. Each Apply is atomic and isolated: readers
// (GetBlob, GetNamespace, LoadAll) see all of a batch or none of it. Concurrent Applies
// are ordered in some serial order; RocksMetaStore lets concurrent blob-only batches share
// one WAL write and fsync (group commit). LoadAll reads one consistent snapshot and runs
// its callbacks on the calling thread without holding a store lock, so a callback may call
// the store (including Apply; LoadAll does not see those changes).
//
// Errors (every implementation):
//   Apply          FAILED_PRECONDITION "blob <key> refers to namespace <h0> that is not
//                  stored" for a PutBlob whose namespace is neither stored nor put earlier
//                  in the batch (nothing applied); UNAVAILABLE when the write failed (I/O;
//                  nothing applied; a retry may help); DATA_LOSS when the store found its
//                  own files corrupt; MemoryMetaStore: any injected status.
//   LoadAll        a callback's non-OK status (LoadAll stops and returns it); UNAVAILABLE or
//                  DATA_LOSS when the store cannot read its files (a damaged SST block: the
//                  node cannot load and must be repaired or wiped). A record that fails to
//                  decode is NOT an error: it is counted, handed to on_corrupt, logged
//                  (WARNING; the first 16 one by one, then a total), and skipped.
//   GetBlob        NOT_FOUND for an unknown key; DATA_LOSS for a record that fails to
//                  decode (blob_meta_codec.h); UNAVAILABLE for an I/O error.
//   GetNamespace   NOT_FOUND; DATA_LOSS for a stored encoding that is not a valid namespace
//                  or whose hash is not its key; UNAVAILABLE.
//   Stats          none (RocksMetaStore lists its WAL directory: a few syscalls).
//   A RocksMetaStore after Close(): FAILED_PRECONDITION from every call.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/blob_meta.h"
#include "strata/store/meta/meta_batch.h"

namespace strata::store::meta {

struct MetaStoreStats {
  uint64_t namespaces = 0;       // stored namespace records (exact)
  uint64_t blobs = 0;            // stored blob records (RocksMetaStore: RocksDB's estimate)
  uint64_t bytes_on_disk = 0;    // approximate: SST files + WAL (MemoryMetaStore: bytes held)
  uint64_t applies = 0;          // successful Apply calls since open
  uint64_t synced_applies = 0;   // ... of which had sync = true
  uint64_t failed_applies = 0;   // Apply calls that returned an error
  uint64_t ops_applied = 0;      // ops in successful batches
  uint64_t bytes_applied = 0;    // MetaBatch::value_bytes() of successful batches
  uint64_t corrupt_records = 0;  // records LoadAll skipped since open (each call counts)
  // Memory held (RocksMetaStore; 0 for MemoryMetaStore, whose records are bytes_on_disk):
  uint64_t memtable_bytes = 0;      // memtables of every family: active, unflushed, pinned
  uint64_t table_reader_bytes = 0;  // index and filter blocks of open SST files
  uint64_t block_cache_bytes = 0;   // the shared block cache's use
};

enum class MetaRecordKind : uint8_t { kNamespace, kBlob };

// A record LoadAll skipped.
struct CorruptMetaRecord {
  MetaRecordKind kind = MetaRecordKind::kBlob;
  std::string raw_key;                   // the stored key bytes
  std::optional<radix::PrefixHash> key;  // the key, when raw_key is a well-formed key
  absl::Status status;                   // DATA_LOSS, naming the key and the problem
};

// LoadAll's callbacks. on_namespace and on_blob are required; on_corrupt is optional.
struct MetaLoadCallbacks {
  std::function<absl::Status(const radix::PrefixHash& hash, radix::Namespace ns)> on_namespace;
  std::function<absl::Status(BlobMeta meta)> on_blob;
  std::function<void(const CorruptMetaRecord& record)> on_corrupt;
};

struct MetaLoadSummary {
  uint64_t namespaces = 0;  // handed to on_namespace
  uint64_t blobs = 0;       // handed to on_blob
  uint64_t corrupt_namespaces = 0;
  uint64_t corrupt_blobs = 0;

  friend bool operator==(const MetaLoadSummary&, const MetaLoadSummary&) = default;
};

class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // Applies `batch` atomically (see MetaBatch). An empty batch is OK and writes nothing.
  virtual absl::Status Apply(const MetaBatch& batch) = 0;

  // Streams every record of one snapshot: first every namespace, in increasing hash order
  // (PrefixHash's operator<=>, hi then lo), then every blob, in increasing key order. Blob
  // order says nothing about parents: a child may come before its parent. Records that
  // fail to decode are skipped as described above. REQUIRES: on_namespace and on_blob set.
  virtual absl::StatusOr<MetaLoadSummary> LoadAll(const MetaLoadCallbacks& callbacks) = 0;

  virtual absl::StatusOr<BlobMeta> GetBlob(const radix::BlobKey& key) const = 0;
  virtual absl::StatusOr<radix::Namespace> GetNamespace(const radix::PrefixHash& hash) const = 0;

  virtual MetaStoreStats Stats() const = 0;
};

}  // namespace strata::store::meta
