// PrefixPageKeys: chained, prefix-sensitive, stable.
#include "strata/tiering/mrc/page_keys.h"

#include <vector>

#include "gtest/gtest.h"

namespace strata::tiering::mrc {
namespace {

TEST(PageKeysTest, KeysChainOverThePrefix) {
  const std::vector<uint32_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<uint64_t> keys;
  AppendPrefixPageKeys(42, a, 4, &keys);
  ASSERT_EQ(keys.size(), 2u);  // the partial third page is ignored
  EXPECT_EQ(keys[0], NextPageKey(42, {1, 2, 3, 4}));
  EXPECT_EQ(keys[1], NextPageKey(keys[0], {5, 6, 7, 8}));
  // The same page after another prefix, or under another root, is another key.
  std::vector<uint64_t> other;
  AppendPrefixPageKeys(42, std::vector<uint32_t>{9, 9, 9, 9, 5, 6, 7, 8}, 4, &other);
  EXPECT_NE(other[1], keys[1]);
  std::vector<uint64_t> rooted;
  AppendPrefixPageKeys(43, a, 4, &rooted);
  EXPECT_NE(rooted[0], keys[0]);
  // Appends.
  AppendPrefixPageKeys(42, a, 4, &keys);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[2], keys[0]);
}

TEST(PageKeysTest, TokenOrderMatters) {
  const uint64_t key = NextPageKey(0, {1, 2, 3, 4});
  EXPECT_EQ(key, NextPageKey(0, {1, 2, 3, 4}));
  EXPECT_NE(key, NextPageKey(0, {1, 2, 4, 3}));
  EXPECT_NE(Mix64(1), Mix64(2));
}

}  // namespace
}  // namespace strata::tiering::mrc
