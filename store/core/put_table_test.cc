// PutTable on its own: pending puts by id and key, deadlines and expiry.
#include "strata/store/core/put_table.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"

namespace strata::store::core {
namespace {

class PutTableTest : public ::testing::Test {
 protected:
  BlobRecord* Record(tiering::BlobId id) {
    auto r = std::make_unique<BlobRecord>();
    r->id = id;
    r->key = radix::BlobKey{radix::PrefixHash{id, 11}};
    r->bytes = 1024;
    records_.push_back(std::move(r));
    return records_.back().get();
  }

  std::vector<std::unique_ptr<BlobRecord>> records_;
  const absl::Time t0_ = absl::FromUnixSeconds(5000);
};

TEST_F(PutTableTest, AddFindTakeByIdAndKey) {
  PutTable puts(absl::Seconds(60));
  EXPECT_TRUE(puts.empty());
  BlobRecord* a = Record(1);
  BlobRecord* b = Record(2);
  PendingPut& pa = puts.Add(PendingPut(a), t0_);
  EXPECT_EQ(pa.deadline, t0_ + absl::Seconds(60));
  EXPECT_EQ(pa.received.size(), 1024u);
  puts.Add(PendingPut(b), t0_);
  EXPECT_EQ(puts.size(), 2u);
  EXPECT_TRUE(puts.Filling(a->key));
  EXPECT_EQ(puts.Find(1)->record, a);
  EXPECT_EQ(&puts.Get(2), puts.Find(2));
  EXPECT_EQ(puts.Find(3), nullptr);

  const PendingPut taken = puts.Take(1);
  EXPECT_EQ(taken.record, a);
  EXPECT_EQ(puts.Find(1), nullptr);
  EXPECT_FALSE(puts.Filling(a->key));
  EXPECT_TRUE(puts.Filling(b->key));
  EXPECT_EQ(puts.size(), 1u);
}

TEST_F(PutTableTest, TouchMovesTheDeadlineAndCommittingPutsNeverExpire) {
  PutTable puts(absl::Seconds(10));
  for (tiering::BlobId id : {1, 2, 3}) puts.Add(PendingPut(Record(id)), t0_);
  PendingPut& a = puts.Get(1);  // valid until the next Add or Take
  PendingPut& b = puts.Get(2);
  EXPECT_FALSE(PutTable::Expired(a, t0_ + absl::Seconds(9)));
  EXPECT_TRUE(PutTable::Expired(a, t0_ + absl::Seconds(10)));
  puts.Touch(a, t0_ + absl::Seconds(5));
  EXPECT_EQ(a.deadline, t0_ + absl::Seconds(15));
  EXPECT_EQ(puts.Deadline(t0_), t0_ + absl::Seconds(10));
  b.committing = true;
  EXPECT_FALSE(PutTable::Expired(b, t0_ + absl::Hours(1)));
  std::vector<uint64_t> expired = puts.ExpiredIds(t0_ + absl::Seconds(12));
  EXPECT_EQ(expired, std::vector<uint64_t>{3});  // a was touched, b is committing
  expired = puts.ExpiredIds(t0_ + absl::Seconds(15));
  std::sort(expired.begin(), expired.end());
  EXPECT_EQ(expired, (std::vector<uint64_t>{1, 3}));
}

TEST_F(PutTableTest, NotFoundSaysWhy) {
  const absl::Status unknown = PutTable::NotFound(7, /*expired=*/false);
  const absl::Status expired = PutTable::NotFound(7, /*expired=*/true);
  EXPECT_CODE(unknown, absl::StatusCode::kNotFound);
  EXPECT_CODE(expired, absl::StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("not pending"), absl::string_view::npos);
  EXPECT_NE(expired.message().find("expired"), absl::string_view::npos);
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST(PutTableValidateTest, AcceptsAWellFormedPutAndNamesWhatIsWrong) {
  const radix::Namespace ns = testing::SmallNamespace();  // 4 tokens, 256 bytes a page
  const testing::BlobContent blob = testing::MakeBlob(ns, 2, 1);
  PutRequest request;
  request.tokens = blob.tokens;
  request.bytes = blob.bytes.size();
  request.checksums = blob.checksums;
  EXPECT_OK(PutTable::Validate(ns, request, 1 << 20));
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::Validate(ns, request, 256)));  // over the limit
  PutRequest partial = request;
  partial.tokens = request.tokens.first(request.tokens.size() - 1);  // not whole pages
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::Validate(ns, partial, 1 << 20)));
  PutRequest bytes = request;
  bytes.bytes += 1;
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::Validate(ns, bytes, 1 << 20)));
  PutRequest checksums = request;
  checksums.checksums = request.checksums.first(request.checksums.size() - 1);
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::Validate(ns, checksums, 1 << 20)));
  PutRequest empty = request;
  empty.tokens = {};
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::Validate(ns, empty, 1 << 20)));
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST(PutTableCheckParentTest, TheNewBlobStartsInsideOrAtTheEndOfItsParent) {
  BlobRecord parent;  // pages [2, 5) of its sequence
  parent.first_page = 2;
  parent.pages = 3;
  EXPECT_TRUE(PutTable::CheckParent(parent, 3, 1).ok());                         // off the middle
  EXPECT_TRUE(PutTable::CheckParent(parent, 5, 1).ok());                         // at its end
  EXPECT_TRUE(absl::IsFailedPrecondition(PutTable::CheckParent(parent, 2, 1)));  // its start
  EXPECT_TRUE(absl::IsFailedPrecondition(PutTable::CheckParent(parent, 6, 1)));  // past it
  parent.pages = UINT32_MAX - 2;
  EXPECT_TRUE(absl::IsInvalidArgument(PutTable::CheckParent(parent, 10, UINT32_MAX - 9)));
}

// Usage follows Add and Take; Admit refuses, naming the limit, what can never fit beside the
// pending puts and what would pass a limit, but admits a tenant's first put and the first of
// all whatever their share.
TEST_F(PutTableTest, AdmitAppliesEveryLimitAndUsageFollowsAddAndTake) {
  PutTable puts(absl::Seconds(60), PutLimits{.max_puts = 3,
                                             .max_metadata_bytes = 1 << 20,
                                             .max_bytes = 2048,
                                             .max_tenant_bytes = 1024});
  const uint64_t capacity = 4096;
  const uint64_t meta = PutTable::MetadataBytes(16, 16, 4);
  EXPECT_GT(meta, 16 * 4 * 2 + 4 * 8);
  EXPECT_OK(puts.Admit("t", 4096, meta, capacity));  // the first may take the whole tier
  EXPECT_CODE(puts.Admit("t", 4097, meta, capacity), absl::StatusCode::kResourceExhausted);
  puts.Add(PendingPut(Record(1)), t0_);  // 1024 bytes, tenant ""
  EXPECT_EQ(puts.usage().puts, 1u);
  EXPECT_EQ(puts.usage().bytes, 1024u);
  EXPECT_EQ(puts.tenant_bytes(""), 1024u);
  // Never fits beside the 1024 reserved bytes: refused whatever the shares say.
  absl::Status never = puts.Admit("other", 3073, meta, capacity);
  EXPECT_CODE(never, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(never.message().find("cannot fit the DRAM tier"), absl::string_view::npos) << never;
  // Another tenant's first put: within the total share.
  EXPECT_OK(puts.Admit("other", 1024, meta, capacity));
  // Past the total share (1024 + 1025 > 2048).
  EXPECT_NE(puts.Admit("other", 1025, meta, capacity).message().find("share (2048"),
            absl::string_view::npos);
  // The same tenant past its share (1024 + 1 > 1024).
  EXPECT_NE(puts.Admit("", 1, meta, capacity).message().find("a tenant's share"),
            absl::string_view::npos);
  // Metadata.
  EXPECT_NE(puts.Admit("other", 1, 1 << 20, capacity).message().find("max_pending_metadata_bytes"),
            absl::string_view::npos);
  puts.Add(PendingPut(Record(2)), t0_);
  puts.Add(PendingPut(Record(3)), t0_);
  EXPECT_NE(puts.Admit("other", 1, meta, capacity).message().find("max_pending_puts"),
            absl::string_view::npos);
  for (uint64_t id : {1, 2, 3}) puts.Take(id);
  EXPECT_EQ(puts.usage().puts, 0u);
  EXPECT_EQ(puts.usage().bytes, 0u);
  EXPECT_EQ(puts.usage().metadata_bytes, 0u);
  EXPECT_EQ(puts.tenant_bytes(""), 0u);
}

}  // namespace
}  // namespace strata::store::core
