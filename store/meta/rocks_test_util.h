// Helpers for store/meta's tests: a scoped temporary directory, and raw writes into a closed
// RocksMetaStore's database (to plant corrupt or foreign records as a disk would).
#pragma once

#include <string>
#include <string_view>

#include "strata/testing/temp_dir.h"

namespace strata::store::meta {

// A fresh directory, removed with everything in it on destruction (strata::testing's).
using strata::testing::ScopedTempDir;

// Opens the RocksDB at `dir` (every column family it has), puts key -> value in `family`
// ("blobs", "namespaces", "default", or a new one, which is created), syncs and closes.
// CHECK-fails on any RocksDB error. REQUIRES: no store has `dir` open.
void PutRawRocksRecord(const std::string& dir, const std::string& family, std::string_view key,
                       std::string_view value);

}  // namespace strata::store::meta
