#include "strata/store/meta/meta_batch.h"

#include <utility>

#include "strata/store/meta/blob_meta_codec.h"

namespace strata::store::meta {

void MetaBatch::PutBlob(const BlobMeta& meta) {
  Op op{.kind = OpKind::kPutBlob, .key = meta.key.hash, .namespace_hash = meta.namespace_hash};
  AppendBlobMeta(meta, &op.value);
  value_bytes_ += op.value.size();
  ops_.push_back(std::move(op));
}

void MetaBatch::DeleteBlob(const radix::BlobKey& key) {
  ops_.push_back(Op{.kind = OpKind::kDeleteBlob, .key = key.hash});
}

void MetaBatch::PutNamespace(const radix::Namespace& ns) {
  Op op{.kind = OpKind::kPutNamespace, .key = radix::NamespaceHash(ns)};
  op.value = ns.CanonicalEncoding();
  value_bytes_ += op.value.size();
  ops_.push_back(std::move(op));
  ++namespace_ops_;
}

void MetaBatch::DeleteNamespace(const radix::PrefixHash& namespace_hash) {
  ops_.push_back(Op{.kind = OpKind::kDeleteNamespace, .key = namespace_hash});
  ++namespace_ops_;
}

void MetaBatch::Clear() {
  ops_.clear();
  namespace_ops_ = 0;
  value_bytes_ = 0;
}

}  // namespace strata::store::meta
