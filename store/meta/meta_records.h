// How both MetaStores key, decode and report their records. Private to store/meta.
//
// Keys: a blob record's key is its BlobKey, a namespace record's key its hash h_0, each
// stored as 16 bytes: u64 hi big-endian, then u64 lo big-endian, so that the byte order of
// stored keys is PrefixHash's operator<=> order (the order LoadAll promises).
//
// RecordLoader turns stored (key, value) pairs into LoadAll callbacks: it decodes each,
// hands good records on, and counts and reports (on_corrupt) bad ones, logging the first
// kLoggedCorruptRecords of them one by one (WARNING) and, at destruction, how many it
// skipped in all. It is single-use and thread-compatible (one LoadAll call owns it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/meta/meta_store.h"

namespace strata::store::meta {

inline constexpr size_t kStoredKeySize = 16;
inline constexpr uint64_t kLoggedCorruptRecords = 16;

std::string StoredKey(const radix::PrefixHash& hash);
// False unless `bytes` is exactly kStoredKeySize bytes.
bool ParseStoredKey(std::string_view bytes, radix::PrefixHash* hash);

// The namespace stored under `hash`: DATA_LOSS when `bytes` is not a canonical encoding
// (Namespace::FromCanonicalEncoding) or encodes a namespace of another hash.
absl::StatusOr<radix::Namespace> DecodeNamespaceRecord(const radix::PrefixHash& hash,
                                                       std::string_view bytes);

class RecordLoader {
 public:
  // REQUIRES: callbacks.on_namespace and callbacks.on_blob set; `callbacks` outlives this.
  explicit RecordLoader(const MetaLoadCallbacks& callbacks);
  ~RecordLoader();
  RecordLoader(const RecordLoader&) = delete;
  RecordLoader& operator=(const RecordLoader&) = delete;

  // OK or the callback's error; a record that fails to decode is skipped (OK).
  absl::Status Namespace(std::string_view raw_key, std::string_view value);
  absl::Status Blob(std::string_view raw_key, std::string_view value);

  const MetaLoadSummary& summary() const { return summary_; }

 private:
  void Skip(MetaRecordKind kind, std::string_view raw_key, bool key_ok,
            const radix::PrefixHash& key, absl::Status status);

  const MetaLoadCallbacks& callbacks_;
  MetaLoadSummary summary_;
};

}  // namespace strata::store::meta
