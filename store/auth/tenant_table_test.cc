#include "strata/store/auth/tenant_table.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::auth {
namespace {

const std::string kAcmeToken = "acme-token-0123456789abcdef0123456789";
const std::string kOpsToken = "ops-token-fedcba9876543210fedcba98765";

std::string File(const std::string& acme_extra = "") {
  return absl::StrCat(R"({"tenants": [
    {"name": "acme", "role": "worker", "token_sha256": ")",
                      HashHex(Sha256(kAcmeToken)), R"(", "namespaces": ["acme", "shared"])",
                      acme_extra, R"(},
    {"name": "ops", "role": "admin", "token_sha256": ")",
                      absl::AsciiStrToUpper(HashHex(Sha256(kOpsToken))), R"("}]})");
}

TEST(TenantTableTest, AuthenticatesEachTenantByItsTokenOnly) {
  ASSERT_OK_AND_ASSIGN(const TenantTable table, TenantTable::Parse(File(), "tenants.json"));
  ASSERT_EQ(table.tenants().size(), 2u);
  const Tenant* acme = table.Authenticate(kAcmeToken);
  ASSERT_NE(acme, nullptr);
  EXPECT_EQ(acme->name, "acme");
  EXPECT_EQ(acme->role, Role::kWorker);
  EXPECT_THAT(acme->namespaces, ::testing::ElementsAre("acme", "shared"));
  const Tenant* ops = table.Authenticate(kOpsToken);  // its hash was given in uppercase
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->role, Role::kAdmin);
  EXPECT_THAT(ops->namespaces, ::testing::ElementsAre("ops"));  // the default
  EXPECT_EQ(table.Authenticate(""), nullptr);
  EXPECT_EQ(table.Authenticate(kAcmeToken + "x"), nullptr);
  EXPECT_EQ(table.Authenticate(kAcmeToken.substr(1)), nullptr);
  EXPECT_EQ(table.Authenticate(HashHex(Sha256(kAcmeToken))), nullptr);  // the hash is no token
  EXPECT_EQ(table.Find("ops"), ops);
  EXPECT_EQ(table.Find("nobody"), nullptr);
}

TEST(TenantTableTest, ATokenShorterThanTheMinimumNeverAuthenticates) {
  const std::string short_token = "0123456789abcde";  // 15 bytes
  ASSERT_OK_AND_ASSIGN(
      const TenantTable table,
      TenantTable::Parse(absl::StrCat(R"({"tenants":[{"name":"a","role":"worker","token_sha256":")",
                                      HashHex(Sha256(short_token)), R"("}]})"),
                         "t"));
  EXPECT_EQ(table.Authenticate(short_token), nullptr);
}

TEST(TenantTableTest, RefusesEveryMalformedFileNamingTheEntry) {
  const std::string good_hash = HashHex(Sha256("x"));
  auto one = [&](const std::string& fields) {
    return absl::StrCat(R"({"tenants":[{)", fields, "}]}");
  };
  const std::string base_fields =
      absl::StrCat(R"("name":"a","role":"worker","token_sha256":")", good_hash, R"(")");
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not valid JSON"},
      {"[]", "expected {\"tenants\""},
      {R"({"tenants":[],"x":1})", "expected {\"tenants\""},
      {R"({"tenants":[]})", "empty"},
      {R"({"tenants":[1]})", "tenants[0]: not an object"},
      {one(absl::StrReplaceAll(base_fields, {{"\"a\"", "\"a b\""}})), "name must be"},
      {one(absl::StrReplaceAll(base_fields, {{"\"a\"", "\"\""}})), "name must be"},
      {one(absl::StrReplaceAll(base_fields, {{"worker", "root"}})), "role must be"},
      {one(absl::StrReplaceAll(base_fields, {{good_hash, good_hash.substr(2)}})), "64 hex"},
      {one(absl::StrReplaceAll(base_fields, {{good_hash, "zz" + good_hash.substr(2)}})), "64 hex"},
      {one(absl::StrCat(base_fields, R"(,"namespaces":[])")), "namespaces must be"},
      {one(absl::StrCat(base_fields, R"(,"namespaces":[""])")), "namespaces must hold"},
      {one(absl::StrCat(base_fields, R"(,"quota":1)")), "quota must be an object"},
      {one(absl::StrCat(base_fields, R"(,"quota":{})")), "quota must be an object"},
      {one(absl::StrCat(base_fields, R"(,"quota":{"hbm":"1GiB"})")), "unknown tier \"hbm\""},
      {one(absl::StrCat(base_fields, R"(,"quota":{"dram":0})")), "quota.dram must be"},
      {one(absl::StrCat(base_fields, R"(,"quota":{"ssd":"lots"})")), "quota.ssd must be"},
      {one(absl::StrCat(base_fields, R"(,"quota":{"dram":-5})")), "quota.dram must be"},
      {one(absl::StrCat(base_fields, R"(,"owner":1)")), "unknown key \"owner\""},
      {one(R"("name":"a","role":"worker")"), "required"},
      {absl::StrCat(R"({"tenants":[{)", base_fields, "},{", base_fields, "}]}"),
       "tenants[1]: tenant \"a\" given twice"},
      {absl::StrCat(R"({"tenants":[{)", base_fields, "},{",
                    absl::StrReplaceAll(base_fields, {{"\"a\"", "\"b\""}}), "}]}"),
       "tenants[1]: token_sha256 is another tenant's too"},
  };
  for (const auto& [text, why] : cases) {
    const absl::StatusOr<TenantTable> table = TenantTable::Parse(text, "tenants.json");
    ASSERT_FALSE(table.ok()) << text;
    EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(table.status().message()), ::testing::StartsWith("tenants.json: "))
        << text;
    EXPECT_THAT(std::string(table.status().message()), ::testing::HasSubstr(why)) << text;
  }
}

TEST(TenantTableTest, QuotasAreByteSizesPerTier) {
  ASSERT_OK_AND_ASSIGN(
      const TenantTable table,
      TenantTable::Parse(File(R"(, "quota": {"dram": "8GiB", "ssd": 1048576})"), "tenants.json"));
  const Tenant* acme = table.Find("acme");
  ASSERT_NE(acme, nullptr);
  EXPECT_EQ(acme->dram_quota_bytes, uint64_t{8} << 30);
  EXPECT_EQ(acme->ssd_quota_bytes, uint64_t{1} << 20);
  const Tenant* ops = table.Find("ops");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->dram_quota_bytes, 0u);  // none
  EXPECT_EQ(ops->ssd_quota_bytes, 0u);
}

TEST(TenantTableTest, LoadNamesAMissingFile) {
  const absl::StatusOr<TenantTable> table = TenantTable::Load("/nonexistent/tenants.json");
  EXPECT_EQ(table.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(table.status().message()), ::testing::HasSubstr("/nonexistent"));
}

TEST(BearerTokenTest, TakesTheTokenOfABearerHeaderOnly) {
  ASSERT_OK_AND_ASSIGN(std::string_view token, BearerToken("Bearer abc"));
  EXPECT_EQ(token, "abc");
  ASSERT_OK_AND_ASSIGN(token, BearerToken("bearer abc"));
  EXPECT_EQ(token, "abc");
  for (std::string_view bad : {"", "Bearer", "Bearer ", "Basic abc", "abc"}) {
    EXPECT_EQ(BearerToken(bad).status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
}

TEST(Sha256Test, MatchesTheStandardVector) {
  EXPECT_EQ(HashHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace strata::store::auth
