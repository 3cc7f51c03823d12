#include "strata/store/core/lease_table.h"

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::core {
namespace {

radix::BlobKey Key(uint64_t n) { return radix::BlobKey{radix::PrefixHash{n, n * 3}}; }

TEST(LeaseTableTest, GrantFindRenewRemove) {
  LeaseTable table;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  table.Grant(Lease{7, t0 + absl::Seconds(10), {{Key(1), 11}, {Key(2), 12}}});
  EXPECT_EQ(table.size(), 1u);
  ASSERT_OK_AND_ASSIGN(tiering::BlobId id, table.Find(7, Key(2), t0));
  EXPECT_EQ(id, 12u);
  EXPECT_CODE(table.Find(7, Key(3), t0), absl::StatusCode::kPermissionDenied);
  EXPECT_CODE(table.Find(8, Key(1), t0), absl::StatusCode::kNotFound);
  EXPECT_TRUE(table.Live(7, t0 + absl::Seconds(9)));
  EXPECT_FALSE(table.Live(7, t0 + absl::Seconds(10)));
  EXPECT_CODE(table.Find(7, Key(1), t0 + absl::Seconds(10)), absl::StatusCode::kNotFound);

  ASSERT_OK(table.Renew(7, t0 + absl::Seconds(5), t0 + absl::Seconds(20)));
  EXPECT_TRUE(table.Live(7, t0 + absl::Seconds(15)));
  EXPECT_CODE(table.Renew(7, t0 + absl::Seconds(20), t0 + absl::Seconds(30)),
              absl::StatusCode::kNotFound);
  EXPECT_CODE(table.Renew(9, t0, t0), absl::StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(Lease removed, table.Remove(7));
  EXPECT_EQ(removed.blobs.size(), 2u);
  EXPECT_CODE(table.Remove(7), absl::StatusCode::kNotFound);
  EXPECT_EQ(table.size(), 0u);
}

TEST(LeaseTableTest, CountsLeasesPerTenant) {
  LeaseTable table;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  table.Grant(Lease{.id = 1, .expiry = t0 + absl::Seconds(5), .tenant = "a"});
  table.Grant(Lease{.id = 2, .expiry = t0 + absl::Seconds(10), .tenant = "a"});
  table.Grant(Lease{.id = 3, .expiry = t0 + absl::Seconds(10), .tenant = "b"});
  EXPECT_EQ(table.tenant_count("a"), 2u);
  EXPECT_EQ(table.tenant_count("b"), 1u);
  EXPECT_EQ(table.tenant_count("c"), 0u);
  ASSERT_TRUE(table.Remove(3).ok());
  EXPECT_EQ(table.tenant_count("b"), 0u);
  EXPECT_EQ(table.TakeExpired(t0 + absl::Seconds(5)).size(), 1u);
  EXPECT_EQ(table.tenant_count("a"), 1u);
}

TEST(LeaseTableTest, TakeExpiredTakesOnlyExpired) {
  LeaseTable table;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (uint64_t i = 1; i <= 10; ++i) {
    table.Grant(Lease{i, t0 + absl::Seconds(i), {{Key(i), i}}});
  }
  std::vector<Lease> expired = table.TakeExpired(t0 + absl::Seconds(4));
  EXPECT_EQ(expired.size(), 4u);
  for (const Lease& l : expired) EXPECT_LE(l.id, 4u);
  EXPECT_EQ(table.size(), 6u);
  EXPECT_TRUE(table.TakeExpired(t0 + absl::Seconds(4)).empty());
  EXPECT_EQ(table.TakeExpired(t0 + absl::Hours(1)).size(), 6u);
}

}  // namespace
}  // namespace strata::store::core
