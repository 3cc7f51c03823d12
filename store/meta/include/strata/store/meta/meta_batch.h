// MetaBatch: an atomic group of metadata changes for MetaStore::Apply (meta_store.h).
//
// A batch holds puts and deletes of blob records and namespace records, applied in the
// order they were added: all of them or none become visible, and a later op on the same
// key wins over an earlier one (a put then a delete of one key leaves no record). PutBlob
// encodes the record at once (blob_meta_codec.h), on the caller's thread and outside any
// store lock, so the batch owns its bytes and the BlobMeta may be dropped afterwards.
//
// sync: when true, Apply returns only once the batch is durable (RocksMetaStore: the
// write-ahead log is fsynced; concurrent synced Applies share one fsync). When false, the
// batch survives a crash of the process but not of the machine.
//
// Namespaces: a blob record names its namespace by hash (BlobMeta::namespace_hash); the
// namespace itself is stored once, as its canonical encoding (radix/namespace.h), keyed by
// NamespaceHash(ns). Put it in the same batch as the first blob that needs it: Apply rejects
// a PutBlob whose namespace is neither stored nor put earlier in the batch.
//
// A value type, thread-compatible (one thread builds it; Apply only reads it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/blob_meta.h"

namespace strata::store::meta {

class MetaBatch {
 public:
  enum class OpKind : uint8_t { kPutBlob, kDeleteBlob, kPutNamespace, kDeleteNamespace };

  struct Op {
    OpKind kind = OpKind::kPutBlob;
    // The blob key (blob ops) or the namespace hash h_0 (namespace ops).
    radix::PrefixHash key;
    // kPutBlob only: the blob's namespace_hash.
    radix::PrefixHash namespace_hash;
    // kPutBlob: EncodeBlobMeta(meta); kPutNamespace: ns.CanonicalEncoding(); else empty.
    std::string value;
  };

  MetaBatch() = default;
  explicit MetaBatch(bool sync) : sync_(sync) {}

  void PutBlob(const BlobMeta& meta);
  void DeleteBlob(const radix::BlobKey& key);
  // Stores `ns` under NamespaceHash(ns).
  void PutNamespace(const radix::Namespace& ns);
  void DeleteNamespace(const radix::PrefixHash& namespace_hash);

  void set_sync(bool sync) { sync_ = sync; }
  bool sync() const { return sync_; }

  const std::vector<Op>& ops() const { return ops_; }
  size_t size() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  // True if any op puts or deletes a namespace.
  bool changes_namespaces() const { return namespace_ops_ > 0; }
  // Bytes of the encoded values (what the batch writes, keys not counted).
  size_t value_bytes() const { return value_bytes_; }

  // Removes every op; keeps sync.
  void Clear();

 private:
  std::vector<Op> ops_;
  size_t namespace_ops_ = 0;
  size_t value_bytes_ = 0;
  bool sync_ = false;
};

}  // namespace strata::store::meta
