#include "strata/radix/radix_tree.h"

#include <cstdint>
#include <ostream>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::radix {

void PrintTo(const MatchSegment& s, std::ostream* os) {
  *os << "{blob " << s.blob.hash.lo << " @" << s.blob_page_offset << " x" << s.page_count << " seq "
      << s.seq_page_begin << "}";
}
void PrintTo(const EvictedSpan& s, std::ostream* os) {
  *os << "{root " << s.root.lo << " blob " << s.blob.hash.lo << " @" << s.blob_page_offset << " x"
      << s.page_count << " seq " << s.seq_page_begin << "}";
}

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint32_t kPage = 4;
const PrefixHash kRoot{0, 1};
const PrefixHash kOtherRoot{0, 2};

BlobKey Blob(uint64_t id) { return BlobKey{PrefixHash{7, id}}; }

// One page per id: page p is {100p, 100p+1, 100p+2, 100p+3}.
std::vector<TokenId> Pages(std::initializer_list<uint32_t> ids) {
  std::vector<TokenId> tokens;
  for (uint32_t id : ids) {
    for (uint32_t i = 0; i < kPage; ++i) tokens.push_back(id * 100 + i);
  }
  return tokens;
}

MatchSegment Seg(uint64_t blob, uint32_t offset, uint32_t count, uint32_t seq) {
  return MatchSegment{Blob(blob), offset, count, seq};
}

EvictedSpan Gone(const PrefixHash& root, uint64_t blob, uint32_t offset, uint32_t count,
                 uint32_t seq) {
  return EvictedSpan{root, Blob(blob), offset, count, seq};
}

// Collects what RemoveSubtree reports.
struct Collector {
  std::vector<EvictedSpan> spans;
  auto Fn() {
    return [this](const EvictedSpan& s) { spans.push_back(s); };
  }
};

void Ignore(const EvictedSpan&) {}

TEST(RadixTreeTest, InsertThenMatchWholeSequence) {
  RadixTree tree(kPage);
  const auto seq = Pages({1, 2, 3});
  ASSERT_EQ(tree.Insert(kRoot, seq, 0, Blob(1)).value(), 3u);

  const MatchResult r = tree.Match(kRoot, seq, /*pin=*/false);
  EXPECT_EQ(r.matched_pages, 3u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 3, 0)));
  EXPECT_FALSE(r.handle.pinned());

  const RadixTreeStats s = tree.Stats();
  EXPECT_EQ(s.roots, 1u);
  EXPECT_EQ(s.nodes, 1u);
  EXPECT_EQ(s.leaves, 1u);
  EXPECT_EQ(s.pages, 3u);
  EXPECT_EQ(s.token_bytes, 3u * kPage * sizeof(TokenId));
  EXPECT_GT(s.index_bytes, s.token_bytes);
  EXPECT_EQ(s.pinned_nodes, 0u);
}

TEST(RadixTreeTest, InsertRejectsMalformedInput) {
  RadixTree tree(kPage);
  auto seq = Pages({1, 2});
  EXPECT_EQ(tree.Insert(kRoot, {}, 0, Blob(1)).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<TokenId> unaligned(seq.begin(), seq.end() - 1);
  EXPECT_EQ(tree.Insert(kRoot, unaligned, 0, Blob(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Insert(kRoot, seq, 2, Blob(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Insert(kRoot, seq, 9, Blob(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Stats().pages, 0u);
  EXPECT_EQ(tree.Stats().roots, 0u);
}

TEST(RadixTreeTest, ContinuationNeedsItsPrefix) {
  RadixTree tree(kPage);
  // Unknown root.
  EXPECT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 1, Blob(2)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1}), 0, Blob(1)).value(), 1u);
  // Page 1 is missing.
  EXPECT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 2, Blob(2)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Page 0 is present but diverges inside it.
  auto diverged = Pages({1, 2});
  diverged[kPage - 1] = 999;
  EXPECT_EQ(tree.Insert(kRoot, diverged, 1, Blob(2)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tree.Stats().pages, 1u);
  EXPECT_EQ(tree.Stats().nodes, 1u);
}

TEST(RadixTreeTest, ContinuationPointsAtItsBlob) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(1)).value(), 3u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4, 5, 6}), 3, Blob(2)).value(), 3u);
  const MatchResult r = tree.Match(kRoot, Pages({1, 2, 3, 4, 5, 6, 7}), false);
  EXPECT_EQ(r.matched_pages, 6u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 3, 0), Seg(2, 0, 3, 3)));
}

TEST(RadixTreeTest, MatchMergesOnlyContiguousPiecesOfOneBlob) {
  RadixTree tree(kPage);
  // The same key for two spans (a caller bug, but legal): its pieces are not
  // contiguous in the blob, so they stay separate segments.
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2}), 0, Blob(1)).value(), 2u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4}), 2, Blob(1)).value(), 2u);
  EXPECT_THAT(tree.Match(kRoot, Pages({1, 2, 3, 4}), false).segments,
              ElementsAre(Seg(1, 0, 2, 0), Seg(1, 0, 2, 2)));
}

TEST(RadixTreeTest, ReinsertIsDeduplicatedFirstWriterWins) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(1)).value(), 3u);
  EXPECT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(9)).value(), 0u);
  EXPECT_EQ(tree.Insert(kRoot, Pages({1, 2}), 1, Blob(9)).value(), 0u);
  // A blob starting at page 1 that overlaps cached pages 1..2 and adds 3..4:
  // only the tail is attached, at blob offsets 2..3.
  EXPECT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4, 5}), 1, Blob(3)).value(), 2u);
  const MatchResult r = tree.Match(kRoot, Pages({1, 2, 3, 4, 5}), false);
  EXPECT_EQ(r.matched_pages, 5u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 3, 0), Seg(3, 2, 2, 3)));
  EXPECT_EQ(tree.Stats().pages, 5u);
  EXPECT_EQ(tree.Stats().nodes, 2u);
}

TEST(RadixTreeTest, DivergenceSplitsNodeAndMatchMergesAcrossSplit) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4}), 0, Blob(1)).value(), 4u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 8, 9}), 0, Blob(2)).value(), 2u);
  RadixTreeStats s = tree.Stats();
  EXPECT_EQ(s.nodes, 3u);  // [1 2] -> {[3 4], [8 9]}
  EXPECT_EQ(s.leaves, 2u);
  EXPECT_EQ(s.pages, 6u);

  // Blob 1 is now split over two nodes; the match reports one segment.
  MatchResult r = tree.Match(kRoot, Pages({1, 2, 3, 4}), false);
  EXPECT_EQ(r.matched_pages, 4u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 4, 0)));
  r = tree.Match(kRoot, Pages({1, 2, 8, 9}), false);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 2, 0), Seg(2, 2, 2, 2)));

  // Divergence in the middle of a page splits at the page boundary before it.
  auto mid_page = Pages({1, 2, 3, 4});
  mid_page[kPage + 2] = 777;  // inside page 1
  ASSERT_EQ(tree.Insert(kRoot, mid_page, 0, Blob(3)).value(), 3u);
  r = tree.Match(kRoot, mid_page, false);
  EXPECT_EQ(r.matched_pages, 4u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 1, 0), Seg(3, 1, 3, 1)));
  r = tree.Match(kRoot, Pages({1, 2, 3, 4}), false);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 4, 0)));
  EXPECT_EQ(tree.Stats().nodes, 5u);
  EXPECT_EQ(tree.Stats().pages, 9u);
}

TEST(RadixTreeTest, PartialMatchIgnoresTrailingPageAndDoesNotRestructure) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4}), 0, Blob(1)).value(), 4u);
  const RadixTreeStats before = tree.Stats();

  auto query = Pages({1, 2, 3});
  query.push_back(400);  // first token of page 3, but only a partial page
  MatchResult r = tree.Match(kRoot, query, false);
  EXPECT_EQ(r.matched_pages, 3u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 3, 0)));

  auto diverged = Pages({1, 2, 3, 4});
  diverged[2 * kPage + 3] = 5;  // last token of page 2
  r = tree.Match(kRoot, diverged, false);
  EXPECT_EQ(r.matched_pages, 2u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 2, 0)));

  r = tree.Match(kRoot, Pages({1, 2, 3, 4, 5, 6}), false);
  EXPECT_EQ(r.matched_pages, 4u);

  std::vector<TokenId> short_query(kPage - 1, 100);
  EXPECT_EQ(tree.Match(kRoot, short_query, false).matched_pages, 0u);
  EXPECT_EQ(tree.Match(kRoot, Pages({2}), false).matched_pages, 0u);

  const RadixTreeStats after = tree.Stats();
  EXPECT_EQ(after.nodes, before.nodes);
  EXPECT_EQ(after.index_bytes, before.index_bytes);
}

TEST(RadixTreeTest, RootsAreSeparate) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2}), 0, Blob(1)).value(), 2u);
  EXPECT_EQ(tree.Match(kOtherRoot, Pages({1, 2}), false).matched_pages, 0u);
  EXPECT_EQ(tree.Insert(kOtherRoot, Pages({1, 2}), 1, Blob(2)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(tree.Insert(kOtherRoot, Pages({1, 2}), 0, Blob(2)).value(), 2u);
  EXPECT_THAT(tree.Match(kOtherRoot, Pages({1, 2}), false).segments, ElementsAre(Seg(2, 0, 2, 0)));
  EXPECT_THAT(tree.Match(kRoot, Pages({1, 2}), false).segments, ElementsAre(Seg(1, 0, 2, 0)));
  EXPECT_EQ(tree.Stats().roots, 2u);

  Collector removed;
  ASSERT_EQ(tree.RemoveSubtree(kOtherRoot, Pages({1}), removed.Fn()).value(), 2u);
  EXPECT_THAT(removed.spans, ElementsAre(Gone(kOtherRoot, 2, 0, 2, 0)));
  EXPECT_EQ(tree.Stats().roots, 1u);  // the empty root was dropped
  EXPECT_EQ(tree.Match(kRoot, Pages({1, 2}), false).matched_pages, 2u);
}

TEST(RadixTreeTest, RemoveSubtreeSplitsAndRemovesEverythingBelow) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4}), 0, Blob(1)).value(), 4u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4, 5}), 4, Blob(2)).value(), 1u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4, 6}), 4, Blob(3)).value(), 1u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 7}), 1, Blob(4)).value(), 1u);

  // Remove page 2 (inside blob 1's node) and everything below it.
  Collector removed;
  auto result = tree.RemoveSubtree(kRoot, Pages({1, 2, 3}), removed.Fn());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, 4u);
  // Children are reported before their parent.
  ASSERT_EQ(removed.spans.size(), 3u);
  EXPECT_EQ(removed.spans.back(), Gone(kRoot, 1, 2, 2, 2));
  EXPECT_THAT(removed.spans,
              ::testing::UnorderedElementsAre(Gone(kRoot, 1, 2, 2, 2), Gone(kRoot, 2, 0, 1, 4),
                                              Gone(kRoot, 3, 0, 1, 4)));

  MatchResult r = tree.Match(kRoot, Pages({1, 2, 3, 4, 5}), false);
  EXPECT_EQ(r.matched_pages, 2u);
  EXPECT_THAT(r.segments, ElementsAre(Seg(1, 0, 2, 0)));
  EXPECT_EQ(tree.Match(kRoot, Pages({1, 7}), false).matched_pages, 2u);
  EXPECT_EQ(tree.Stats().pages, 3u);

  // Deleting the blob that starts at page 1 of [1 7]: RemoveSubtree(tokens[0, 2P)).
  removed.spans.clear();
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 7}), removed.Fn()).value(), 1u);
  EXPECT_THAT(removed.spans, ElementsAre(Gone(kRoot, 4, 0, 1, 1)));
  EXPECT_EQ(tree.Stats().pages, 2u);
  EXPECT_EQ(tree.Stats().leaves, 1u);

  // Removing from page 0 removes the whole trie and drops the root.
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), 2u);
  const RadixTreeStats s = tree.Stats();
  EXPECT_EQ(s.roots, 0u);
  EXPECT_EQ(s.nodes, 0u);
  EXPECT_EQ(s.pages, 0u);
}

TEST(RadixTreeTest, RemoveSubtreeErrors) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2}), 0, Blob(1)).value(), 2u);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, {}, Ignore).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto unaligned = Pages({1});
  unaligned.pop_back();
  EXPECT_EQ(tree.RemoveSubtree(kRoot, unaligned, Ignore).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2, 3}), Ignore).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({2}), Ignore).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(tree.RemoveSubtree(kOtherRoot, Pages({1}), Ignore).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(tree.Stats().pages, 2u);
}

TEST(RadixTreeTest, PinBlocksRemoveSubtreeUntilReleased) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(1)).value(), 3u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3, 4}), 3, Blob(2)).value(), 1u);
  MatchResult pinned = tree.Match(kRoot, Pages({1, 2, 3, 4}), /*pin=*/true);
  ASSERT_TRUE(pinned.handle.pinned());
  EXPECT_EQ(tree.Stats().pinned_nodes, 2u);

  Collector removed;
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2, 3, 4}), removed.Fn()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A cut inside a pinned node fails too (pins are per node).
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2}), removed.Fn()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(removed.spans, IsEmpty());
  EXPECT_EQ(tree.Stats().nodes, 2u);  // nothing split or removed

  pinned.handle.Release();
  pinned.handle.Release();  // idempotent
  EXPECT_EQ(tree.Stats().pinned_nodes, 0u);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2}), removed.Fn()).value(), 3u);
}

// (Eviction order is not the tree's: tiering::LeafFirstIndex and its policies rank
// victims, tiering/leaf_first_index_test.cc checks leaf-first order, pinned blobs and
// priorities; the owner removes a victim's pages with RemoveSubtree.)
TEST(RadixTreeTest, PinBlocksRemovalOfItsPathOnly) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2}), 0, Blob(1)).value(), 2u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 2, Blob(2)).value(), 1u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({5, 6}), 0, Blob(3)).value(), 2u);
  {
    // Pins only the [1 2] node: its child [3] stays removable.
    MatchResult pinned = tree.Match(kRoot, Pages({1, 2}), /*pin=*/true);
    ASSERT_EQ(pinned.matched_pages, 2u);
    EXPECT_EQ(tree.Stats().pinned_nodes, 1u);
    Collector removed;
    EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2, 3}), removed.Fn()).value(), 1u);
    EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({5}), removed.Fn()).value(), 2u);
    EXPECT_THAT(removed.spans,
                ::testing::UnorderedElementsAre(Gone(kRoot, 2, 0, 1, 2), Gone(kRoot, 3, 0, 2, 0)));
    EXPECT_EQ(tree.Match(kRoot, Pages({1, 2}), false).matched_pages, 2u);
    // Moving the handle keeps the pin.
    MatchHandle moved = std::move(pinned.handle);
    EXPECT_FALSE(pinned.handle.pinned());
    EXPECT_TRUE(moved.pinned());
    EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }  // `moved` unpins here
  EXPECT_EQ(tree.Stats().pinned_nodes, 0u);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), 2u);
  EXPECT_EQ(tree.Stats().roots, 0u);
}

TEST(RadixTreeTest, InsertSplittingPinnedNodeKeepsBothHalvesPinned) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(1)).value(), 3u);
  MatchResult pinned = tree.Match(kRoot, Pages({1, 2}), /*pin=*/true);  // partial match
  ASSERT_EQ(pinned.matched_pages, 2u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 9}), 0, Blob(2)).value(), 1u);  // splits after page 0
  EXPECT_EQ(tree.Stats().pinned_nodes, 2u);
  // Only the new [9] can go: both halves of [1 2 3] are pinned.
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 9}), Ignore).value(), 1u);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2}), Ignore).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tree.Match(kRoot, Pages({1, 2, 3}), false).matched_pages, 3u);
  pinned.handle.Release();
  EXPECT_EQ(tree.Stats().pinned_nodes, 0u);
  EXPECT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), 3u);
}

TEST(RadixTreeTest, LeavesCountChildlessNodesThroughSplitsAndRemovals) {
  RadixTree tree(kPage);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 2, 3}), 0, Blob(1)).value(), 3u);
  EXPECT_EQ(tree.Stats().leaves, 1u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 9}), 0, Blob(2)).value(),
            1u);  // split: [1] -> {[2 3], [9]}
  EXPECT_EQ(tree.Stats().leaves, 2u);
  EXPECT_EQ(tree.Stats().nodes, 3u);
  ASSERT_EQ(tree.Insert(kRoot, Pages({1, 9, 4}), 2, Blob(3)).value(), 1u);  // [9] gets a child
  EXPECT_EQ(tree.Stats().leaves, 2u);
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 9, 4}), Ignore).value(), 1u);  // [9] a leaf again
  EXPECT_EQ(tree.Stats().leaves, 2u);
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2}), Ignore).value(), 2u);
  EXPECT_EQ(tree.Stats().leaves, 1u);  // [9]; [1] keeps a child
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 9}), Ignore).value(), 1u);
  EXPECT_EQ(tree.Stats().leaves, 1u);  // [1]
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), 1u);
  EXPECT_EQ(tree.Stats().leaves, 0u);
  EXPECT_EQ(tree.Stats().nodes, 0u);
}

TEST(RadixTreeTest, IndexBytesReturnToTheSameValueAfterRemovingEverything) {
  RadixTree tree(kPage);
  const auto fill = [&tree] {
    for (uint32_t i = 1; i <= 20; ++i) {
      ASSERT_TRUE(tree.Insert(kRoot, Pages({1, 2, i + 2}), 0, Blob(i)).ok());
      ASSERT_TRUE(tree.Insert(kRoot, Pages({1, 2, i + 2, 50}), 3, Blob(100 + i)).ok());
    }
  };
  fill();
  const RadixTreeStats full = tree.Stats();
  EXPECT_EQ(full.pages, 2u + 20 + 20);
  EXPECT_EQ(full.nodes, 1u + 20 + 20);
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), full.pages);
  const uint64_t empty_bytes = tree.Stats().index_bytes;
  fill();
  EXPECT_EQ(tree.Stats().index_bytes, full.index_bytes);
  // Removed leaf by leaf this time, children before parents, as an evicting owner does.
  for (uint32_t i = 1; i <= 20; ++i) {
    ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2, i + 2, 50}), Ignore).value(), 1u);
    ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1, 2, i + 2}), Ignore).value(), 1u);
  }
  ASSERT_EQ(tree.RemoveSubtree(kRoot, Pages({1}), Ignore).value(), 2u);
  EXPECT_EQ(tree.Stats().pages, 0u);
  EXPECT_EQ(tree.Stats().index_bytes, empty_bytes);
  EXPECT_LT(empty_bytes, full.index_bytes - full.token_bytes);
}

}  // namespace
}  // namespace strata::radix
