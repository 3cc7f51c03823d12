#include "strata/radix/token_span.h"

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"

namespace strata::radix {
namespace {

std::vector<TokenId> Iota(size_t n) {
  std::vector<TokenId> v(n);
  std::iota(v.begin(), v.end(), TokenId{100});
  return v;
}

TEST(TokenSpanTest, WholePages) {
  EXPECT_EQ(WholePages(0, 16), 0u);
  EXPECT_EQ(WholePages(15, 16), 0u);
  EXPECT_EQ(WholePages(16, 16), 1u);
  EXPECT_EQ(WholePages(47, 16), 2u);
  EXPECT_EQ(WholePages(1024, 512), 2u);
  EXPECT_EQ(WholePages(100, 0), 0u);
  EXPECT_EQ(WholePages(size_t{1} << 40, 1), std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(PageTokenCount(3, 512), 1536u);
  EXPECT_EQ(PageTokenCount(0xFFFFFFFFu, 65536), uint64_t{0xFFFFFFFF} * 65536);
}

TEST(TokenSpanTest, CheckPageAligned) {
  EXPECT_TRUE(CheckPageAligned(0, 16).ok());
  EXPECT_TRUE(CheckPageAligned(32, 16).ok());
  const absl::Status s = CheckPageAligned(40, 16);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "40 tokens is not a multiple of page_tokens 16 (2 whole pages and 8 tokens left over)");
  EXPECT_EQ(CheckPageAligned(16, 0).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TokenSpanTest, PageTokens) {
  const std::vector<TokenId> tokens = Iota(40);
  absl::Span<const TokenId> p0 = PageTokens(tokens, 0, 16);
  ASSERT_EQ(p0.size(), 16u);
  EXPECT_EQ(p0.data(), tokens.data());
  absl::Span<const TokenId> p1 = PageTokens(tokens, 1, 16);
  ASSERT_EQ(p1.size(), 16u);
  EXPECT_EQ(p1.front(), 116u);
  EXPECT_EQ(p1.back(), 131u);
  EXPECT_TRUE(PageTokens(tokens, 2, 16).empty());  // partial page 32..39
  EXPECT_TRUE(PageTokens(tokens, 3, 16).empty());
  EXPECT_TRUE(PageTokens(tokens, 0, 0).empty());
  EXPECT_TRUE(PageTokens(tokens, std::numeric_limits<uint32_t>::max(), 16).empty());
  EXPECT_TRUE(PageTokens(tokens, std::numeric_limits<uint32_t>::max(), 1).empty());
}

TEST(TokenSpanTest, PageSpanTokens) {
  const std::vector<TokenId> tokens = Iota(64);
  absl::Span<const TokenId> mid = PageSpanTokens(tokens, PageSpan{1, 3}, 16);
  ASSERT_EQ(mid.size(), 32u);
  EXPECT_EQ(mid.front(), 116u);
  EXPECT_EQ(mid.back(), 147u);
  EXPECT_EQ(PageSpanTokens(tokens, PageSpan{0, 4}, 16).size(), 64u);
  EXPECT_TRUE(PageSpanTokens(tokens, PageSpan{2, 2}, 16).empty());
  EXPECT_TRUE(PageSpanTokens(tokens, PageSpan{3, 5}, 16).empty());
  EXPECT_TRUE(PageSpanTokens(tokens, PageSpan{3, 1}, 16).empty());  // broken invariant
  EXPECT_EQ(PageSpan({2, 5}).size(), 3u);
  EXPECT_TRUE(PageSpan({4, 4}).empty());
}

TEST(TokenSpanTest, WholePagePrefix) {
  const std::vector<TokenId> tokens = Iota(40);
  EXPECT_EQ(WholePagePrefix(tokens, 16).size(), 32u);
  EXPECT_EQ(WholePagePrefix(tokens, 8).size(), 40u);
  EXPECT_EQ(WholePagePrefix(tokens, 64).size(), 0u);
  EXPECT_EQ(WholePagePrefix(tokens, 0).size(), 0u);
}

}  // namespace
}  // namespace strata::radix
