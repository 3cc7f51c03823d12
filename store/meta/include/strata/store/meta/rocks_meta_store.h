// RocksMetaStore: the node's MetaStore on RocksDB, in a directory of its own.
//
// Layout: three column families — "blobs" (BlobKey -> BlobMeta record, blob_meta_codec.h),
// "namespaces" (h_0 -> Namespace canonical encoding) and "default", which holds only the
// format marker "strata.meta.format" -> "1". Keys are 16 bytes, hi then lo big-endian, so
// RocksDB's byte order is BlobKey order. One WriteBatch per MetaBatch, across the column
// families, so a batch is atomic through the write-ahead log (no atomic_flush needed).
//
// Tuning, for this workload — batched writes (a commit, a demotion batch), rare point
// lookups (the node keeps its index in memory), one full scan at start:
//   - level compaction with dynamic level sizes: bounded space amplification, and a full
//     scan reads mostly one sorted run;
//   - compression kAuto = LZ4 on upper levels, ZSTD on the bottommost where this RocksDB was
//     built with them (Debian's is). Records are mostly hashes and checksums, which do not
//     compress; the gain is the tokens and repeated namespace hashes (measured in
//     meta_bench: BM_Restart's bytes_per_record per compression);
//   - 16 KiB blocks (records are ~0.3-2 KiB: fewer index entries, better compression and
//     faster scans; a point lookup reads one block);
//   - a whole-key bloom filter (10 bits/key, ~1.2 MiB per million blobs) so a GetBlob miss
//     costs no block read; keys are random hashes, so there is no prefix to filter on;
//   - one shared LRU block cache (block_cache_bytes); the start-up scan bypasses it
//     (fill_cache = false) with 2 MiB readahead, so it neither evicts hot blocks nor pays
//     cache inserts;
//   - max_background_jobs small (2): the machine's cores belong to the data path;
//   - max_total_wal_size = 4 x write_buffer_bytes: with several column families a WAL file
//     lives until every family with data in it flushes, and the namespaces family is
//     written rarely; the cap forces its flush so WAL files (and the replay at restart) stay
//     bounded;
//   - WAL recovery: RocksDB's default point-in-time recovery — after a crash the store holds
//     every batch up to the first torn one in the log, never part of a batch;
//   - Close() flushes the memtables (flush_on_close), so a clean restart replays no WAL.
//
// Durability: Apply with sync = true returns after the WAL is fsynced (concurrent writers
// share the fsync: RocksDB's group commit); sync = false survives a process crash only.
//
// Thread safety: every MetaStore method is thread-safe (rocksdb::DB is). Close() and the
// destructor REQUIRE that no other call is in progress; after Close every method returns
// FAILED_PRECONDITION "metadata store <path> is closed".
//
// Errors (RocksDB statuses are converted in one place, rocks_status.cc):
//   Open   INVALID_ARGUMENT empty path or a compression this RocksDB build lacks;
//          NOT_FOUND no store at path and !create_if_missing;
//          FAILED_PRECONDITION "another strata-node (or process) uses this data dir" when
//          RocksDB's LOCK file is held (by this or another process); FAILED_PRECONDITION when
//          the directory is a RocksDB that is not a strata metadata store (other column
//          families) or holds a newer format;
//          DATA_LOSS corruption found while opening; UNAVAILABLE any other I/O error.
//   Apply / LoadAll / GetBlob / GetNamespace: as MetaStore (meta_store.h): RocksDB IOError
//          -> UNAVAILABLE, Corruption -> DATA_LOSS, NotFound -> NOT_FOUND.
//   Close  UNAVAILABLE / DATA_LOSS when the flush or the close failed (the store is closed
//          regardless).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/store/meta/meta_store.h"

namespace strata::store::meta {

enum class MetaCompression : uint8_t {
  kAuto,  // LZ4, ZSTD bottommost, where built in; else none
  kNone,
  kLz4,
  kZstd,
};

struct RocksMetaStoreOptions {
  std::string path;  // the store's directory (created with its parents if missing)
  bool create_if_missing = true;
  size_t block_cache_bytes = size_t{32} << 20;
  size_t write_buffer_bytes = size_t{32} << 20;  // memtable size of the blobs family
  int max_background_jobs = 2;
  MetaCompression compression = MetaCompression::kAuto;
  int bloom_bits_per_key = 10;  // 0: no filter
  bool flush_on_close = true;
};

class RocksMetaStore final : public MetaStore {
 public:
  inline static constexpr char kFormatKey[] = "strata.meta.format";
  inline static constexpr char kFormatVersion[] = "1";

  static absl::StatusOr<std::unique_ptr<RocksMetaStore>> Open(const RocksMetaStoreOptions& options);

  RocksMetaStore(const RocksMetaStore&) = delete;
  RocksMetaStore& operator=(const RocksMetaStore&) = delete;
  // Close() unless closed, logging its error.
  ~RocksMetaStore() override;

  absl::Status Apply(const MetaBatch& batch) override;
  absl::StatusOr<MetaLoadSummary> LoadAll(const MetaLoadCallbacks& callbacks) override;
  absl::StatusOr<BlobMeta> GetBlob(const radix::BlobKey& key) const override;
  absl::StatusOr<radix::Namespace> GetNamespace(const radix::PrefixHash& hash) const override;
  MetaStoreStats Stats() const override;

  // Flushes (when options.flush_on_close) and closes the database. Idempotent.
  absl::Status Close();

  const std::string& path() const;

 private:
  struct Rep;
  explicit RocksMetaStore(std::unique_ptr<Rep> rep);

  std::unique_ptr<Rep> rep_;
};

}  // namespace strata::store::meta
