#include "store/meta/rocks_status.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace strata::store::meta {
namespace {

using absl::StatusCode;

TEST(RocksStatusTest, MapsEveryKind) {
  EXPECT_TRUE(FromRocksStatus(rocksdb::Status::OK(), "x").ok());
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::NotFound("k"), "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::Corruption("block checksum mismatch"), "x").code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::IOError("disk"), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::NoSpace("full"), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::Busy(), "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::TimedOut(), "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::TryAgain(), "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::ShutdownInProgress(), "x").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::InvalidArgument("o"), "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::NotSupported("z"), "x").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::Aborted("a"), "x").code(), StatusCode::kAborted);
  EXPECT_EQ(FromRocksStatus(rocksdb::Status::MergeInProgress(), "x").code(), StatusCode::kInternal);
}

TEST(RocksStatusTest, HeldLockIsFailedPreconditionSayingSo) {
  for (const rocksdb::Status& s :
       {rocksdb::Status::IOError("lock hold by current process, acquire time 1",
                                 "/d/LOCK: No locks available"),
        rocksdb::Status::IOError("While lock file: /d/LOCK", "Resource temporarily unavailable")}) {
    const absl::Status status = FromRocksStatus(s, "opening metadata store /d");
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "another strata-node")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "opening metadata store /d")) << status;
  }
}

}  // namespace
}  // namespace strata::store::meta
