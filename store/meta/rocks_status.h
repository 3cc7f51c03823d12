// The one conversion of RocksDB statuses into absl::Status. Private to store/meta.
//
//   RocksDB                                   absl
//   ----------------------------------------  -------------------------------------------
//   OK                                        OK
//   NotFound                                  NOT_FOUND
//   Corruption                                DATA_LOSS
//   IOError on the LOCK file (held by this    FAILED_PRECONDITION "another strata-node (or
//     or another process)                       process) uses this data dir"
//   IOError (incl. NoSpace, PathNotFound),    UNAVAILABLE (a retry may help)
//     Busy, TimedOut, TryAgain, Incomplete,
//     ShutdownInProgress
//   InvalidArgument                           INVALID_ARGUMENT
//   NotSupported                              FAILED_PRECONDITION
//   Aborted                                   ABORTED
//   anything else                             INTERNAL
//
// Every message reads "<context>: <RocksDB's message>". Pure and thread-safe.
#pragma once

#include <string_view>

#include "absl/status/status.h"

#include "rocksdb/status.h"

namespace strata::store::meta {

absl::Status FromRocksStatus(const rocksdb::Status& status, std::string_view context);

}  // namespace strata::store::meta
