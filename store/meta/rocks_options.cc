#include "store/meta/rocks_options.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

namespace strata::store::meta {
namespace {

bool Supported(rocksdb::CompressionType type) {
  const std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  return std::find(supported.begin(), supported.end(), type) != supported.end();
}

struct Compression {
  rocksdb::CompressionType upper = rocksdb::kNoCompression;
  rocksdb::CompressionType bottommost = rocksdb::kNoCompression;
};

absl::StatusOr<Compression> ChooseCompression(MetaCompression wanted) {
  switch (wanted) {
    case MetaCompression::kNone:
      return Compression{};
    case MetaCompression::kAuto: {
      Compression c;
      if (Supported(rocksdb::kLZ4Compression)) c.upper = rocksdb::kLZ4Compression;
      c.bottommost = Supported(rocksdb::kZSTD) ? rocksdb::kZSTD : c.upper;
      return c;
    }
    case MetaCompression::kLz4:
      if (!Supported(rocksdb::kLZ4Compression)) {
        return absl::InvalidArgumentError("this RocksDB build has no LZ4 compression");
      }
      return Compression{rocksdb::kLZ4Compression, rocksdb::kLZ4Compression};
    case MetaCompression::kZstd:
      if (!Supported(rocksdb::kZSTD)) {
        return absl::InvalidArgumentError("this RocksDB build has no ZSTD compression");
      }
      return Compression{rocksdb::kZSTD, rocksdb::kZSTD};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown MetaCompression ", static_cast<int>(wanted)));
}

}  // namespace

absl::StatusOr<RocksOptionSet> MakeRocksOptions(const RocksMetaStoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("metadata store path is empty");
  if (options.bloom_bits_per_key < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bloom_bits_per_key must be >= 0, got ", options.bloom_bits_per_key));
  }
  if (options.max_background_jobs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_background_jobs must be >= 1, got ", options.max_background_jobs));
  }
  absl::StatusOr<Compression> compression = ChooseCompression(options.compression);
  if (!compression.ok()) return compression.status();

  RocksOptionSet set;
  rocksdb::DBOptions& db = set.db;
  db.create_if_missing = options.create_if_missing;
  db.create_missing_column_families = true;
  db.max_background_jobs = options.max_background_jobs;
  db.max_total_wal_size = 4 * static_cast<uint64_t>(options.write_buffer_bytes);
  db.bytes_per_sync = 1 << 20;
  db.wal_bytes_per_sync = 1 << 20;
  db.keep_log_file_num = 4;
  db.max_log_file_size = 8 << 20;
  // No fallocate: RocksDB would reserve 1.1 x the memtable (~35 MiB) for every write-ahead
  // log up front, before the SSD tier is sized, for metadata that is a few KiB on an idle
  // node. The files grow as they are written instead.
  db.allow_fallocate = false;

  rocksdb::BlockBasedTableOptions table;
  table.block_size = 16 << 10;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  if (options.bloom_bits_per_key > 0) {
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options.bloom_bits_per_key));
  }
  std::shared_ptr<rocksdb::TableFactory> factory(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::ColumnFamilyOptions& blobs = set.blobs;
  blobs.table_factory = factory;
  blobs.write_buffer_size = options.write_buffer_bytes;
  blobs.level_compaction_dynamic_level_bytes = true;
  blobs.compression = compression->upper;
  blobs.bottommost_compression = compression->bottommost;

  // Namespaces and the marker: a handful of small records.
  for (rocksdb::ColumnFamilyOptions* small : {&set.namespaces, &set.defaults}) {
    small->table_factory = factory;
    small->write_buffer_size = 1 << 20;
    small->compression = rocksdb::kNoCompression;
    small->bottommost_compression = rocksdb::kNoCompression;
  }
  return set;
}

}  // namespace strata::store::meta
