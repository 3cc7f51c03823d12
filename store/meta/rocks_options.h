// RocksDB options for RocksMetaStore, built from RocksMetaStoreOptions (the choices and
// their reasons are in rocks_meta_store.h). Private to store/meta.
//
// Errors: INVALID_ARGUMENT for an empty path, a negative bloom_bits_per_key or
// max_background_jobs < 1, or a compression this RocksDB build lacks. Thread-safe.
#pragma once

#include "absl/status/statusor.h"

#include "rocksdb/options.h"
#include "strata/store/meta/rocks_meta_store.h"

namespace strata::store::meta {

inline constexpr char kBlobsFamily[] = "blobs";
inline constexpr char kNamespacesFamily[] = "namespaces";

struct RocksOptionSet {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions defaults;  // the "default" family: the format marker
  rocksdb::ColumnFamilyOptions namespaces;
  rocksdb::ColumnFamilyOptions blobs;
};

absl::StatusOr<RocksOptionSet> MakeRocksOptions(const RocksMetaStoreOptions& options);

}  // namespace strata::store::meta
