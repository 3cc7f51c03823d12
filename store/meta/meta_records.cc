#include "store/meta/meta_records.h"

#include <utility>

#include "absl/base/internal/endian.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/store/meta/blob_meta_codec.h"

namespace strata::store::meta {

std::string StoredKey(const radix::PrefixHash& hash) {
  std::string key(kStoredKeySize, '\0');
  absl::big_endian::Store64(key.data(), hash.hi);
  absl::big_endian::Store64(key.data() + 8, hash.lo);
  return key;
}

bool ParseStoredKey(std::string_view bytes, radix::PrefixHash* hash) {
  if (bytes.size() != kStoredKeySize) return false;
  hash->hi = absl::big_endian::Load64(bytes.data());
  hash->lo = absl::big_endian::Load64(bytes.data() + 8);
  return true;
}

absl::StatusOr<radix::Namespace> DecodeNamespaceRecord(const radix::PrefixHash& hash,
                                                       std::string_view bytes) {
  absl::StatusOr<radix::Namespace> ns = radix::Namespace::FromCanonicalEncoding(bytes);
  if (!ns.ok()) {
    return absl::DataLossError(absl::StrCat(
        "namespace ", hash.ToHex(), ": not a canonical encoding (", ns.status().message(), ")"));
  }
  const radix::PrefixHash actual = radix::NamespaceHash(*ns);
  if (actual != hash) {
    return absl::DataLossError(absl::StrCat("namespace ", hash.ToHex(),
                                            ": record holds a namespace of hash ", actual.ToHex(),
                                            " (", ns->ToString(), ")"));
  }
  return ns;
}

RecordLoader::RecordLoader(const MetaLoadCallbacks& callbacks) : callbacks_(callbacks) {
  CHECK(callbacks_.on_namespace) << "MetaLoadCallbacks::on_namespace is required";
  CHECK(callbacks_.on_blob) << "MetaLoadCallbacks::on_blob is required";
}

RecordLoader::~RecordLoader() {
  const uint64_t skipped = summary_.corrupt_namespaces + summary_.corrupt_blobs;
  if (skipped > 0) {
    LOG(WARNING) << "metadata: skipped " << summary_.corrupt_namespaces << " namespace and "
                 << summary_.corrupt_blobs << " blob records that do not decode";
  }
}

absl::Status RecordLoader::Namespace(std::string_view raw_key, std::string_view value) {
  radix::PrefixHash hash;
  if (!ParseStoredKey(raw_key, &hash)) {
    Skip(MetaRecordKind::kNamespace, raw_key, false, hash,
         absl::DataLossError(
             absl::StrCat("namespace record with a malformed key of ", raw_key.size(), " bytes")));
    return absl::OkStatus();
  }
  absl::StatusOr<radix::Namespace> ns = DecodeNamespaceRecord(hash, value);
  if (!ns.ok()) {
    Skip(MetaRecordKind::kNamespace, raw_key, true, hash, ns.status());
    return absl::OkStatus();
  }
  ++summary_.namespaces;
  return callbacks_.on_namespace(hash, *std::move(ns));
}

absl::Status RecordLoader::Blob(std::string_view raw_key, std::string_view value) {
  radix::PrefixHash hash;
  if (!ParseStoredKey(raw_key, &hash)) {
    Skip(MetaRecordKind::kBlob, raw_key, false, hash,
         absl::DataLossError(
             absl::StrCat("blob record with a malformed key of ", raw_key.size(), " bytes")));
    return absl::OkStatus();
  }
  absl::StatusOr<BlobMeta> meta = DecodeBlobMeta(value, radix::BlobKey{hash});
  if (!meta.ok()) {
    Skip(MetaRecordKind::kBlob, raw_key, true, hash, meta.status());
    return absl::OkStatus();
  }
  ++summary_.blobs;
  return callbacks_.on_blob(*std::move(meta));
}

void RecordLoader::Skip(MetaRecordKind kind, std::string_view raw_key, bool key_ok,
                        const radix::PrefixHash& key, absl::Status status) {
  if (kind == MetaRecordKind::kNamespace) {
    ++summary_.corrupt_namespaces;
  } else {
    ++summary_.corrupt_blobs;
  }
  const uint64_t skipped = summary_.corrupt_namespaces + summary_.corrupt_blobs;
  if (skipped <= kLoggedCorruptRecords) {
    LOG(WARNING) << "metadata: skipping a record that does not decode (key "
                 << absl::BytesToHexString(absl::string_view(raw_key.data(), raw_key.size()))
                 << "): " << status
                 << (skipped == kLoggedCorruptRecords ? " (further ones are only counted)" : "");
  }
  if (!callbacks_.on_corrupt) return;
  CorruptMetaRecord record{.kind = kind, .raw_key = std::string(raw_key), .status = status};
  if (key_ok) record.key = key;
  callbacks_.on_corrupt(record);
}

}  // namespace strata::store::meta
