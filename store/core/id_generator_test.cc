// IdGenerator on its own.
#include "strata/store/core/id_generator.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "gtest/gtest.h"

namespace strata::store::core {
namespace {

TEST(IdGeneratorTest, IdsAreDistinctNonZeroAndDependOnTheSecret) {
  IdGenerator a(42);
  IdGenerator b(43);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t id = a.Next();
    EXPECT_NE(id, 0u);
    EXPECT_TRUE(seen.insert(id).second) << "duplicate id " << id;
  }
  EXPECT_NE(IdGenerator(42).Next(), b.Next());
  // Not consecutive: neighbouring counters give far-apart ids.
  IdGenerator c(0);
  const uint64_t first = c.Next();
  const uint64_t second = c.Next();
  EXPECT_GT(std::max(first, second) - std::min(first, second), uint64_t{1} << 32);
}

}  // namespace
}  // namespace strata::store::core
