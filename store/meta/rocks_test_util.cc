#include "store/meta/rocks_test_util.h"

#include <vector>

#include "glog/logging.h"

#include "rocksdb/db.h"

namespace strata::store::meta {

void PutRawRocksRecord(const std::string& dir, const std::string& family, std::string_view key,
                       std::string_view value) {
  rocksdb::DBOptions options;
  options.create_missing_column_families = true;
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, dir, &names);
  CHECK(s.ok()) << s.ToString();
  bool found = false;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    found = found || name == family;
  }
  if (!found) families.emplace_back(family, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  s = rocksdb::DB::Open(options, dir, families, &handles, &db);
  CHECK(s.ok()) << s.ToString();
  rocksdb::ColumnFamilyHandle* target = nullptr;
  for (size_t i = 0; i < families.size(); ++i) {
    if (families[i].name == family) target = handles[i];
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  s = db->Put(sync, target, rocksdb::Slice(key.data(), key.size()),
              rocksdb::Slice(value.data(), value.size()));
  CHECK(s.ok()) << s.ToString();
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    CHECK(db->DestroyColumnFamilyHandle(handle).ok());
  }
  CHECK(db->Close().ok());
  delete db;
}

}  // namespace strata::store::meta
