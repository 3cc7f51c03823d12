#include "strata/store/meta/internal/namespace_gate.h"

#include "absl/strings/str_cat.h"

namespace strata::store::meta::internal {
namespace {

absl::Status UnknownNamespace(const MetaBatch::Op& op) {
  return absl::FailedPreconditionError(
      absl::StrCat("blob ", op.key.ToHex(), " refers to namespace ", op.namespace_hash.ToHex(),
                   " that is not stored (put the namespace in the same batch, before the blob)"));
}

}  // namespace

void NamespaceGate::AddKnown(const radix::PrefixHash& hash) {
  absl::MutexLock lock(&mu_);
  known_.insert(hash);
}

size_t NamespaceGate::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return known_.size();
}

absl::Status NamespaceGate::Write(const MetaBatch& batch, absl::FunctionRef<absl::Status()> write) {
  using Kind = MetaBatch::OpKind;
  if (!batch.changes_namespaces()) {
    absl::ReaderMutexLock lock(&mu_);
    for (const MetaBatch::Op& op : batch.ops()) {
      if (op.kind == Kind::kPutBlob && !known_.contains(op.namespace_hash)) {
        return UnknownNamespace(op);
      }
    }
    return write();
  }
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<radix::PrefixHash> after = known_;
  for (const MetaBatch::Op& op : batch.ops()) {
    switch (op.kind) {
      case Kind::kPutBlob:
        if (!after.contains(op.namespace_hash)) return UnknownNamespace(op);
        break;
      case Kind::kPutNamespace:
        after.insert(op.key);
        break;
      case Kind::kDeleteNamespace:
        after.erase(op.key);
        break;
      case Kind::kDeleteBlob:
        break;
    }
  }
  absl::Status status = write();
  if (status.ok()) known_ = std::move(after);
  return status;
}

}  // namespace strata::store::meta::internal
