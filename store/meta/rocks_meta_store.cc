#include "strata/store/meta/rocks_meta_store.h"

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"

#include "rocksdb/db.h"
#include "rocksdb/snapshot.h"
#include "rocksdb/transaction_log.h"
#include "rocksdb/write_batch.h"
#include "store/meta/meta_records.h"
#include "store/meta/rocks_options.h"
#include "store/meta/rocks_status.h"
#include "strata/base/byte_size.h"
#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"
#include "strata/store/meta/blob_meta_codec.h"
#include "strata/store/meta/internal/namespace_gate.h"

namespace strata::store::meta {

struct RocksMetaStore::Rep {
  RocksMetaStoreOptions options;
  std::unique_ptr<rocksdb::DB> db;
  // Owned by db; destroyed before it.
  rocksdb::ColumnFamilyHandle* defaults = nullptr;
  rocksdb::ColumnFamilyHandle* namespaces = nullptr;
  rocksdb::ColumnFamilyHandle* blobs = nullptr;
  std::atomic<bool> closed{false};
  internal::NamespaceGate gate;

  mutable absl::Mutex stats_mu;
  MetaStoreStats counters ABSL_GUARDED_BY(stats_mu);  // applies .. corrupt_records

  absl::Status CheckOpen() const {
    if (closed.load(std::memory_order_acquire)) {
      return absl::FailedPreconditionError(
          absl::StrCat("metadata store ", options.path, " is closed"));
    }
    return absl::OkStatus();
  }
};

namespace {

// FAILED_PRECONDITION unless the existing database at `path` (if any) has only our families.
absl::Status CheckFamilies(const rocksdb::DBOptions& db_options, const std::string& path) {
  std::vector<std::string> families;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(db_options, path, &families);
  if (!s.ok()) return absl::OkStatus();  // no database yet; Open reports real problems
  for (const std::string& family : families) {
    if (family != rocksdb::kDefaultColumnFamilyName && family != kBlobsFamily &&
        family != kNamespacesFamily) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is not a strata metadata store (column family \"", family, "\")"));
    }
  }
  return absl::OkStatus();
}

// RESOURCE_EXHAUSTED unless the filesystem of `path` has kMinFreeBytesToOpen free.
absl::Status CheckFreeSpace(const std::string& path) {
  struct statvfs fs;
  if (statvfs(path.c_str(), &fs) != 0) {
    return base::ErrnoToStatus(errno, absl::StrCat("statvfs ", path));
  }
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < kMinFreeBytesToOpen) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": its filesystem has ", base::FormatBytes(free_bytes),
                     " free; opening the store needs ", base::FormatBytes(kMinFreeBytesToOpen),
                     " (free space there, or move meta_dir)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RocksMetaStore>> RocksMetaStore::Open(
    const RocksMetaStoreOptions& options) {
  STRATA_ASSIGN_OR_RETURN(RocksOptionSet set, MakeRocksOptions(options));
  const std::string& path = options.path;
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec);
  if (!exists) {
    if (!options.create_if_missing) {
      return absl::NotFoundError(absl::StrCat("no metadata store at ", path));
    }
    std::filesystem::create_directories(path, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot create metadata store directory ", path, ": ", ec.message()));
    }
  }
  STRATA_RETURN_IF_ERROR(CheckFamilies(set.db, path));
  // Opening writes a new manifest, options file and log: on a full disk RocksDB 7.8 aborts
  // inside DB::Open (an assertion in WritableFileWriter) instead of returning an error.
  STRATA_RETURN_IF_ERROR(CheckFreeSpace(path));

  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, set.defaults},
      {kNamespacesFamily, set.namespaces},
      {kBlobsFamily, set.blobs},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  STRATA_RETURN_IF_ERROR(FromRocksStatus(rocksdb::DB::Open(set.db, path, families, &handles, &raw),
                                         absl::StrCat("opening metadata store ", path)));
  auto rep = std::make_unique<Rep>();
  rep->options = options;
  rep->db.reset(raw);
  rep->defaults = handles[0];
  rep->namespaces = handles[1];
  rep->blobs = handles[2];
  // From here on the store's destructor closes the database on any error.
  std::unique_ptr<RocksMetaStore> store(new RocksMetaStore(std::move(rep)));
  Rep& r = *store->rep_;

  std::string format;
  rocksdb::Status s = r.db->Get(rocksdb::ReadOptions(), r.defaults, kFormatKey, &format);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    STRATA_RETURN_IF_ERROR(FromRocksStatus(r.db->Put(sync, r.defaults, kFormatKey, kFormatVersion),
                                           absl::StrCat("writing the format marker of ", path)));
  } else {
    STRATA_RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading the format marker of ", path)));
    if (format != kFormatVersion) {
      return absl::FailedPreconditionError(absl::StrCat("metadata store ", path, " has format \"",
                                                        format, "\"; this build reads \"",
                                                        kFormatVersion, "\""));
    }
  }

  // The namespace hashes, for the gate (keys only; values are checked by LoadAll).
  std::unique_ptr<rocksdb::Iterator> it(r.db->NewIterator(rocksdb::ReadOptions(), r.namespaces));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    radix::PrefixHash hash;
    if (ParseStoredKey(std::string_view(it->key().data(), it->key().size()), &hash)) {
      r.gate.AddKnown(hash);
    }
  }
  STRATA_RETURN_IF_ERROR(
      FromRocksStatus(it->status(), absl::StrCat("reading the namespaces of ", path)));
  return store;
}

RocksMetaStore::RocksMetaStore(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}

RocksMetaStore::~RocksMetaStore() {
  absl::Status status = Close();
  if (!status.ok()) LOG(ERROR) << "closing metadata store: " << status;
}

const std::string& RocksMetaStore::path() const { return rep_->options.path; }

absl::Status RocksMetaStore::Close() {
  Rep& r = *rep_;
  if (r.closed.exchange(true, std::memory_order_acq_rel) || r.db == nullptr) {
    return absl::OkStatus();
  }
  absl::Status status;
  if (r.options.flush_on_close) {
    status =
        FromRocksStatus(r.db->Flush(rocksdb::FlushOptions(), {r.defaults, r.namespaces, r.blobs}),
                        absl::StrCat("flushing metadata store ", r.options.path));
  }
  for (rocksdb::ColumnFamilyHandle* handle : {r.defaults, r.namespaces, r.blobs}) {
    r.db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }
  absl::Status closed =
      FromRocksStatus(r.db->Close(), absl::StrCat("closing metadata store ", r.options.path));
  r.db.reset();
  return status.ok() ? closed : status;
}

absl::Status RocksMetaStore::Apply(const MetaBatch& batch) {
  Rep& r = *rep_;
  STRATA_RETURN_IF_ERROR(r.CheckOpen());
  using Kind = MetaBatch::OpKind;
  rocksdb::WriteBatch write_batch(batch.value_bytes() + batch.size() * (kStoredKeySize + 16));
  absl::Status status;
  for (const MetaBatch::Op& op : batch.ops()) {
    const std::string key = StoredKey(op.key);
    rocksdb::Status s;
    switch (op.kind) {
      case Kind::kPutBlob:
        s = write_batch.Put(r.blobs, key, op.value);
        break;
      case Kind::kDeleteBlob:
        s = write_batch.Delete(r.blobs, key);
        break;
      case Kind::kPutNamespace:
        s = write_batch.Put(r.namespaces, key, op.value);
        break;
      case Kind::kDeleteNamespace:
        s = write_batch.Delete(r.namespaces, key);
        break;
    }
    status = FromRocksStatus(s, "building a metadata batch");
    if (!status.ok()) break;
  }
  if (status.ok() && !batch.empty()) {
    rocksdb::WriteOptions write_options;
    write_options.sync = batch.sync();
    status = r.gate.Write(batch, [&] {
      return FromRocksStatus(r.db->Write(write_options, &write_batch),
                             absl::StrCat("writing metadata store ", r.options.path));
    });
  }
  absl::MutexLock lock(&r.stats_mu);
  if (!status.ok()) {
    ++r.counters.failed_applies;
    return status;
  }
  ++r.counters.applies;
  if (batch.sync()) ++r.counters.synced_applies;
  r.counters.ops_applied += batch.size();
  r.counters.bytes_applied += batch.value_bytes();
  return absl::OkStatus();
}

absl::StatusOr<MetaLoadSummary> RocksMetaStore::LoadAll(const MetaLoadCallbacks& callbacks) {
  Rep& r = *rep_;
  STRATA_RETURN_IF_ERROR(r.CheckOpen());
  RecordLoader loader(callbacks);
  rocksdb::ManagedSnapshot snapshot(r.db.get());
  rocksdb::ReadOptions read;
  read.snapshot = snapshot.snapshot();
  read.fill_cache = false;
  read.readahead_size = 2 << 20;
  absl::Status status;
  for (rocksdb::ColumnFamilyHandle* family : {r.namespaces, r.blobs}) {
    const bool is_blobs = family == r.blobs;
    std::unique_ptr<rocksdb::Iterator> it(r.db->NewIterator(read, family));
    for (it->SeekToFirst(); it->Valid() && status.ok(); it->Next()) {
      const std::string_view key(it->key().data(), it->key().size());
      const std::string_view value(it->value().data(), it->value().size());
      status = is_blobs ? loader.Blob(key, value) : loader.Namespace(key, value);
    }
    if (status.ok()) {
      status =
          FromRocksStatus(it->status(), absl::StrCat("scanning metadata store ", r.options.path));
    }
    if (!status.ok()) break;
  }
  {
    absl::MutexLock lock(&r.stats_mu);
    r.counters.corrupt_records +=
        loader.summary().corrupt_namespaces + loader.summary().corrupt_blobs;
  }
  if (!status.ok()) return status;
  return loader.summary();
}

absl::StatusOr<BlobMeta> RocksMetaStore::GetBlob(const radix::BlobKey& key) const {
  const Rep& r = *rep_;
  STRATA_RETURN_IF_ERROR(r.CheckOpen());
  rocksdb::PinnableSlice value;
  rocksdb::Status s = r.db->Get(rocksdb::ReadOptions(), r.blobs, StoredKey(key.hash), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("no metadata for blob ", key.ToHex()));
  }
  STRATA_RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading blob ", key.ToHex())));
  return DecodeBlobMeta(std::string_view(value.data(), value.size()), key);
}

absl::StatusOr<radix::Namespace> RocksMetaStore::GetNamespace(const radix::PrefixHash& hash) const {
  const Rep& r = *rep_;
  STRATA_RETURN_IF_ERROR(r.CheckOpen());
  rocksdb::PinnableSlice value;
  rocksdb::Status s = r.db->Get(rocksdb::ReadOptions(), r.namespaces, StoredKey(hash), &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no namespace ", hash.ToHex()));
  STRATA_RETURN_IF_ERROR(FromRocksStatus(s, absl::StrCat("reading namespace ", hash.ToHex())));
  return DecodeNamespaceRecord(hash, std::string_view(value.data(), value.size()));
}

MetaStoreStats RocksMetaStore::Stats() const {
  const Rep& r = *rep_;
  MetaStoreStats stats;
  {
    absl::MutexLock lock(&r.stats_mu);
    stats = r.counters;
  }
  if (!r.CheckOpen().ok()) return stats;
  stats.namespaces = r.gate.size();
  uint64_t value = 0;
  if (r.db->GetIntProperty(r.blobs, "rocksdb.estimate-num-keys", &value)) stats.blobs = value;
  for (rocksdb::ColumnFamilyHandle* family : {r.defaults, r.namespaces, r.blobs}) {
    if (r.db->GetIntProperty(family, "rocksdb.total-sst-files-size", &value)) {
      stats.bytes_on_disk += value;
    }
  }
  if (r.db->GetAggregatedIntProperty("rocksdb.size-all-mem-tables", &value)) {
    stats.memtable_bytes = value;
  }
  if (r.db->GetAggregatedIntProperty("rocksdb.estimate-table-readers-mem", &value)) {
    stats.table_reader_bytes = value;
  }
  // One cache shared by every family: read it once.
  if (r.db->GetIntProperty(r.blobs, "rocksdb.block-cache-usage", &value)) {
    stats.block_cache_bytes = value;
  }
  rocksdb::VectorLogPtr wal_files;
  if (r.db->GetSortedWalFiles(wal_files).ok()) {
    for (const auto& file : wal_files) stats.bytes_on_disk += file->SizeFileBytes();
  }
  return stats;
}

}  // namespace strata::store::meta
