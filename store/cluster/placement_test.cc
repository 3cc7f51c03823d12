#include "strata/store/cluster/placement.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace strata::store::cluster {
namespace {

using radix::PrefixHash;

std::vector<PrefixHash> RandomHashes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PrefixHash> hashes(n);
  for (PrefixHash& h : hashes) h = PrefixHash{rng(), rng()};
  return hashes;
}

std::vector<PlacementNode> Nodes(int n, double weight = 1) {
  std::vector<PlacementNode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back({absl::StrFormat("%016x", 0x1000 + i), weight});
  return nodes;
}

// How many of `hashes` each node id owns.
std::map<std::string, int> Shares(const Placement& p, const std::vector<PrefixHash>& hashes) {
  std::map<std::string, int> shares;
  for (const PrefixHash& h : hashes) ++shares[p.nodes()[p.Owner(h)].id];
  return shares;
}

TEST(PlacementTest, EqualNodesShareSegmentsEvenly) {
  const std::vector<PrefixHash> hashes = RandomHashes(40000, 1);
  const Placement p(Nodes(4));
  const std::map<std::string, int> shares = Shares(p, hashes);
  ASSERT_EQ(shares.size(), 4u);
  for (const auto& [id, count] : shares) {
    EXPECT_NEAR(count, 10000, 400) << id;  // ±4 %, about 4.6 standard deviations
  }
}

TEST(PlacementTest, WeightsSetTheShares) {
  std::vector<PlacementNode> nodes = Nodes(3);
  nodes[0].weight = 2;  // twice the capacity of each other node: half the segments
  const std::vector<PrefixHash> hashes = RandomHashes(40000, 2);
  const std::map<std::string, int> shares = Shares(Placement(nodes), hashes);
  EXPECT_NEAR(shares.at(nodes[0].id), 20000, 600);
  EXPECT_NEAR(shares.at(nodes[1].id), 10000, 500);
  // A node without weight gets nothing.
  nodes[2].weight = 0;
  const Placement without(nodes);
  EXPECT_EQ(without.nodes().size(), 2u);
}

TEST(PlacementTest, EveryPartyComputesTheSameOwnersWhateverTheOrder) {
  std::vector<PlacementNode> nodes = Nodes(5);
  const Placement a(nodes);
  std::reverse(nodes.begin(), nodes.end());
  const Placement b(nodes);
  for (const PrefixHash& h : RandomHashes(1000, 3)) {
    EXPECT_EQ(a.nodes()[a.Owner(h)].id, b.nodes()[b.Owner(h)].id);
  }
}

TEST(PlacementTest, AJoinMovesOnlyWhatTheNewNodeWinsAndALeaveOnlyWhatTheLeaverHad) {
  const std::vector<PrefixHash> hashes = RandomHashes(40000, 4);
  const Placement four(Nodes(4));
  const Placement five(Nodes(5));
  const std::string newcomer = Nodes(5)[4].id;
  int moved = 0;
  for (const PrefixHash& h : hashes) {
    const std::string before = four.nodes()[four.Owner(h)].id;
    const std::string after = five.nodes()[five.Owner(h)].id;
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, newcomer);  // nothing moves between old nodes
    }
  }
  EXPECT_NEAR(moved, 8000, 400);  // 1/5 of the segments

  // The leaver's segments go to the node ranked second for them; no other segment moves.
  std::vector<PlacementNode> three_of_four = Nodes(4);
  const std::string leaver = three_of_four[1].id;
  three_of_four.erase(three_of_four.begin() + 1);
  const Placement three(three_of_four);
  for (const PrefixHash& h : hashes) {
    const std::vector<int> ranked = four.Ranked(h, 2);
    const std::string before = four.nodes()[ranked[0]].id;
    const std::string after = three.nodes()[three.Owner(h)].id;
    if (before == leaver) {
      EXPECT_EQ(after, four.nodes()[ranked[1]].id);
    } else {
      EXPECT_EQ(after, before);
    }
  }
}

TEST(PlacementTest, RankedStartsWithTheOwnerAndListsDistinctNodes) {
  const Placement p(Nodes(6));
  for (const PrefixHash& h : RandomHashes(200, 5)) {
    const std::vector<int> ranked = p.Ranked(h, 3);
    ASSERT_EQ(ranked.size(), 3u);
    EXPECT_EQ(ranked[0], p.Owner(h));
    EXPECT_NE(ranked[0], ranked[1]);
    EXPECT_NE(ranked[1], ranked[2]);
    EXPECT_NE(ranked[0], ranked[2]);
  }
  EXPECT_EQ(p.Ranked(PrefixHash{1, 2}, 10).size(), 6u);
  const Placement none({});
  EXPECT_EQ(none.Owner(PrefixHash{1, 2}), -1);
  EXPECT_TRUE(none.Ranked(PrefixHash{1, 2}, 3).empty());
}

TEST(PlacementTest, FromViewTakesServingNodesWeightedByCapacity) {
  std::vector<NodeRecord> view(3);
  for (int i = 0; i < 3; ++i) {
    view[i].id = absl::StrFormat("%016x", 0x2000 + i);
    view[i].state = NodeState::kServing;
    view[i].dram_bytes = uint64_t{4} << 30;
  }
  view[1].ssd_bytes = uint64_t{12} << 30;  // 16 GiB in all
  view[2].state = NodeState::kDraining;
  const Placement p = Placement::FromView(view);
  ASSERT_EQ(p.nodes().size(), 2u);
  EXPECT_DOUBLE_EQ(p.nodes()[0].weight, 4);
  EXPECT_DOUBLE_EQ(p.nodes()[1].weight, 16);
}

TEST(PlacementTest, SegmentStartsAreTheHashesAtMultiplesOfS) {
  const PrefixHash root{7, 7};
  const std::vector<PrefixHash> pages = RandomHashes(10, 6);  // h_1 .. h_10
  const std::vector<PrefixHash> starts = SegmentStarts(root, pages, 4);
  // Segments [0,4) [4,8) [8,10): h_0, h_4, h_8.
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0], root);
  EXPECT_EQ(starts[1], pages[3]);
  EXPECT_EQ(starts[2], pages[7]);
  EXPECT_EQ(SegmentStarts(root, RandomHashes(8, 7), 4).size(), 2u);  // exactly two segments
  EXPECT_EQ(SegmentStarts(root, RandomHashes(1, 8), 4).size(), 1u);
  EXPECT_TRUE(SegmentStarts(root, {}, 4).empty());
}

}  // namespace
}  // namespace strata::store::cluster
