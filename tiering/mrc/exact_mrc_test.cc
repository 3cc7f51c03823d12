#include "strata/tiering/mrc/exact_mrc.h"

#include <cstdint>
#include <list>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace strata::tiering::mrc {
namespace {

// A plain LRU cache of `capacity` bytes: a hit moves the key to the front; a miss inserts
// it and evicts from the back until the contents fit.
class BruteForceLru {
 public:
  explicit BruteForceLru(uint64_t capacity) : capacity_(capacity) {}

  bool Access(uint64_t key, uint64_t bytes) {
    auto it = where_.find(key);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    order_.push_front({key, bytes});
    where_[key] = order_.begin();
    used_ += bytes;
    while (used_ > capacity_) {
      used_ -= order_.back().bytes;
      where_.erase(order_.back().key);
      order_.pop_back();
    }
    return false;
  }

 private:
  struct Entry {
    uint64_t key;
    uint64_t bytes;
  };
  uint64_t capacity_;
  uint64_t used_ = 0;
  std::list<Entry> order_;
  absl::flat_hash_map<uint64_t, std::list<Entry>::iterator> where_;
};

uint64_t Finalize(uint64_t x) {  // splitmix64's finalizer: a well-mixed key per id
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

TEST(ExactMrcTest, StackDistancesOfAHandMadeStream) {
  // a(10) b(20) c(30) a(10) b(20): a's reuse distance is 20 + 30 + 10 = 60, b's is
  // 30 + 10 + 20 = 60; three first accesses miss everywhere.
  ExactMrc exact;
  exact.Access(1, 10);
  exact.Access(2, 20);
  exact.Access(3, 30);
  exact.Access(1, 10);
  exact.Access(2, 20);
  const std::vector<uint64_t> caps = {59, 60, 1000};
  const MissRatioCurve curve = exact.Curve(caps);
  ASSERT_EQ(curve.points.size(), 3u);
  EXPECT_EQ(curve.points[0], (CurvePoint{59, 0.0}));
  EXPECT_EQ(curve.points[1], (CurvePoint{60, 0.4}));
  EXPECT_EQ(curve.points[2], (CurvePoint{1000, 0.4}));
  EXPECT_EQ(curve.accesses, 5u);
  EXPECT_EQ(curve.sampled_accesses, 5u);
  EXPECT_EQ(curve.sample_rate, 1.0);
  EXPECT_EQ(curve.working_set_bytes, 60u);
  EXPECT_EQ(exact.distinct_keys(), 3u);
}

TEST(ExactMrcTest, ARepeatedKeyHitsAtItsOwnSizeAndSizesFollowTheLatestAccess) {
  ExactMrc exact;
  exact.Access(7, 100);
  exact.Access(7, 100);  // distance 100
  exact.Access(8, 50);
  exact.Access(8, 70);   // distance 70 (own latest size)
  exact.Access(7, 100);  // 70 (key 8 now) + 100
  const std::vector<uint64_t> caps = {69, 70, 100, 169, 170};
  const MissRatioCurve curve = exact.Curve(caps);
  EXPECT_DOUBLE_EQ(curve.points[0].hit_ratio, 0.0);
  EXPECT_DOUBLE_EQ(curve.points[1].hit_ratio, 0.2);  // 70
  EXPECT_DOUBLE_EQ(curve.points[2].hit_ratio, 0.4);  // 70 and 100
  EXPECT_DOUBLE_EQ(curve.points[3].hit_ratio, 0.4);
  EXPECT_DOUBLE_EQ(curve.points[4].hit_ratio, 0.6);  // and 170
  EXPECT_EQ(curve.working_set_bytes, 170u);
}

TEST(ExactMrcTest, CurveSortsAndDeduplicatesCapacitiesAndHasADefaultGrid) {
  ExactMrc exact;
  for (int i = 0; i < 10; ++i) exact.Access(Finalize(i % 3), 800);  // reuse distance 2400
  const std::vector<uint64_t> caps = {10000, 800, 10000, 1600};
  const MissRatioCurve curve = exact.Curve(caps);
  ASSERT_EQ(curve.points.size(), 3u);
  EXPECT_EQ(curve.points[0].capacity_bytes, 800u);
  EXPECT_EQ(curve.points[0].hit_ratio, 0.0);
  EXPECT_EQ(curve.points[2].capacity_bytes, 10000u);
  EXPECT_DOUBLE_EQ(curve.points[2].hit_ratio, 0.7);
  const MissRatioCurve whole = exact.Curve({});
  ASSERT_EQ(whole.points.size(), 64u);
  EXPECT_EQ(whole.points.back().capacity_bytes, 2400u);
  EXPECT_DOUBLE_EQ(whole.points.back().hit_ratio, 0.7);
  EXPECT_EQ(whole.points[62].hit_ratio, 0.0);
  EXPECT_EQ(ExactMrc().Curve(caps).points[2].hit_ratio, 0.0);  // no accesses
}

// Random streams over few keys (so reuse is frequent and the time index compacts many
// times), each key with its own size: every capacity's hit count equals a real LRU's.
TEST(ExactMrcTest, MatchesABruteForceLruOnRandomStreams) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    const uint64_t keys = 20 + 40 * seed;
    std::vector<uint64_t> sizes(keys);
    for (uint64_t& s : sizes) s = 1 + rng() % 1000;
    // Skewed popularity: a key is drawn from a random prefix of the key space.
    std::vector<uint64_t> stream(5000);
    for (uint64_t& k : stream) k = rng() % (1 + rng() % keys);

    ExactMrc exact;
    for (uint64_t k : stream) exact.Access(Finalize(k), sizes[k]);
    const std::vector<uint64_t> caps = {1000, 1500, 3000, 7777, 20000, 60000, 1000000};
    const MissRatioCurve curve = exact.Curve(caps);
    ASSERT_EQ(curve.points.size(), caps.size());
    for (size_t i = 0; i < caps.size(); ++i) {
      BruteForceLru lru(caps[i]);
      uint64_t hits = 0;
      for (uint64_t k : stream) hits += lru.Access(Finalize(k), sizes[k]);
      EXPECT_DOUBLE_EQ(curve.points[i].hit_ratio,
                       static_cast<double>(hits) / static_cast<double>(stream.size()))
          << "seed " << seed << " capacity " << caps[i];
      if (i > 0) {
        EXPECT_GE(curve.points[i].hit_ratio, curve.points[i - 1].hit_ratio);
      }
    }
    EXPECT_GT(curve.points.back().hit_ratio, 0.5);  // the test exercises hits
  }
}

TEST(ExactMrcTest, HandlesManyDistinctKeys) {
  // 300k accesses over 100k keys, a cyclic scan: every reuse distance is the whole set.
  ExactMrc exact;
  constexpr uint64_t kKeys = 100000;
  for (uint64_t i = 0; i < 3 * kKeys; ++i) exact.Access(Finalize(i % kKeys), 4);
  const std::vector<uint64_t> caps = {4 * kKeys - 1, 4 * kKeys};
  const MissRatioCurve curve = exact.Curve(caps);
  EXPECT_EQ(curve.points[0].hit_ratio, 0.0);
  EXPECT_NEAR(curve.points[1].hit_ratio, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(exact.distinct_keys(), kKeys);
  EXPECT_EQ(curve.working_set_bytes, 4 * kKeys);
}

}  // namespace
}  // namespace strata::tiering::mrc
