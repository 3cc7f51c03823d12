#include "strata/store/auth/data_plane_credential.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::auth {
namespace {

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(DataPlaneCredentialsTest, AValidCredentialNamesItsTenantUntilItExpires) {
  ASSERT_OK_AND_ASSIGN(const DataPlaneCredentials issuer,
                       DataPlaneCredentials::Create(absl::Minutes(5)));
  const std::string credential = issuer.Issue("acme", kNow);
  ASSERT_OK_AND_ASSIGN(const std::string tenant, issuer.Verify(Bytes(credential), kNow));
  EXPECT_EQ(tenant, "acme");
  EXPECT_OK(issuer.Verify(Bytes(credential), kNow + absl::Minutes(5) - absl::Milliseconds(1)));
  const absl::StatusOr<std::string> late =
      issuer.Verify(Bytes(credential), kNow + absl::Minutes(5));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(late.status().message()), ::testing::HasSubstr("expired"));
  // An open node's credential has no tenant.
  ASSERT_OK_AND_ASSIGN(const std::string none, issuer.Verify(Bytes(issuer.Issue("", kNow)), kNow));
  EXPECT_EQ(none, "");
  // Two credentials differ (the nonce).
  EXPECT_NE(issuer.Issue("acme", kNow), credential);
}

TEST(DataPlaneCredentialsTest, AnyChangedBitOrAnotherKeyIsRefused) {
  const DataPlaneCredentials issuer(DataPlaneCredentials::Key{1, 2, 3}, absl::Minutes(5));
  const DataPlaneCredentials other(DataPlaneCredentials::Key{1, 2, 4}, absl::Minutes(5));
  const std::string credential = issuer.Issue("acme", kNow);
  EXPECT_EQ(other.Verify(Bytes(credential), kNow).status().code(),
            absl::StatusCode::kUnauthenticated);
  for (size_t byte = 0; byte < credential.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = credential;
      flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
      EXPECT_EQ(issuer.Verify(Bytes(flipped), kNow).status().code(),
                absl::StatusCode::kUnauthenticated)
          << "byte " << byte << " bit " << bit;
    }
  }
  // Truncated, extended, empty, and a tenant made longer in its length byte.
  for (size_t size = 0; size < credential.size(); ++size) {
    EXPECT_FALSE(issuer.Verify(Bytes(credential.substr(0, size)), kNow).ok()) << size;
  }
  EXPECT_FALSE(issuer.Verify(Bytes(credential + "x"), kNow).ok());
  const std::vector<uint8_t> garbage(kMaxCredentialBytes * 4, 0xFF);
  EXPECT_FALSE(issuer.Verify(garbage, kNow).ok());
}

}  // namespace
}  // namespace strata::store::auth
