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
//   - no block compression by default (MetaCompression::kNone): a record is ~70% random
//     bytes (hashes, chunk checksums) and its tokens are already packed (token_codec.h).
//     Measured with meta_bench BM_Restart --compare_compression: 969.6 disk bytes per
//     record with none, LZ4, ZSTD and LZ4+ZSTD-bottommost alike (default shape: 32-token
//     pages, 1-4 pages, 32 layers); ZSTD saved 19% only with 512-token pages (tokens
//     dominate). Compression would only spend compaction CPU, which belongs to the data
//     path; kZstd is there for token-heavy layouts;
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
//   - Close() flushes the memtables (flush_on_close), so a clean restart replays no WAL;
//   - no fallocate (allow_fallocate = false): RocksDB would otherwise reserve 1.1 x the
//     memtable (~35 MiB at the default 32 MiB) for each WAL up front; an idle node's store
//     takes well under 1 MiB of disk.
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
//          DATA_LOSS corruption found while opening; UNAVAILABLE any other I/O error;
//          RESOURCE_EXHAUSTED the directory's filesystem has less than kMinFreeBytesToOpen
//          free (RocksDB 7.8 aborts the process inside DB::Open on a full disk, so this is
//          checked first).
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

// Free space a store's filesystem needs before Open touches it.
inline constexpr uint64_t kMinFreeBytesToOpen = uint64_t{4} << 20;

enum class MetaCompression : uint8_t {
  kAuto,  // LZ4, and ZSTD on the bottommost level, where built in; else none
  kNone,  // the default (see above)
  kLz4,
  kZstd,
};

struct RocksMetaStoreOptions {
  std::string path;  // the store's directory (created with its parents if missing)
  bool create_if_missing = true;
  size_t block_cache_bytes = size_t{32} << 20;
  size_t write_buffer_bytes = size_t{32} << 20;  // memtable size of the blobs family
  int max_background_jobs = 2;
  MetaCompression compression = MetaCompression::kNone;
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
