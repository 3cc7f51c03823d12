// RadixTree under concurrent use: matcher threads pin and release paths while
// an inserter, a subtree remover and a tail remover change the tree. Checks that a
// pinned path never loses a page while pinned, that match results stay well
// formed, and that the page count adds up at the end. Run it under ASan/TSan.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "strata/radix/radix_tree.h"

namespace strata::radix {
namespace {

constexpr uint32_t kPageTokens = 4;
constexpr int kMatchers = 3;
constexpr int kMatchOps = 3000;
constexpr int kInsertOps = 3000;
constexpr int kRemoveOps = 400;
constexpr int kEvictOps = 800;

struct Sequence {
  PrefixHash root;
  std::vector<TokenId> tokens;
};

// A fixed forest of branching sequences under two roots, shared read-only.
std::vector<Sequence> MakeForest(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Sequence> forest;
  for (int i = 0; i < count; ++i) {
    Sequence s;
    if (forest.empty() || uniform(0, 9) < 3) {
      s.root = PrefixHash{0, static_cast<uint64_t>(uniform(1, 2))};
    } else {
      const Sequence& base = forest[uniform(0, static_cast<int>(forest.size()) - 1)];
      s.root = base.root;
      const size_t pages = base.tokens.size() / kPageTokens;
      s.tokens.assign(base.tokens.begin(),
                      base.tokens.begin() + kPageTokens * uniform(1, static_cast<int>(pages)));
    }
    const int extra = uniform(1, 16) * kPageTokens;
    for (int t = 0; t < extra; ++t) s.tokens.push_back(static_cast<TokenId>(uniform(0, 1 << 20)));
    forest.push_back(std::move(s));
  }
  return forest;
}

// Segments must cover [0, matched_pages) in order.
bool WellFormed(const MatchResult& r) {
  uint32_t next = 0;
  for (const MatchSegment& s : r.segments) {
    if (s.seq_page_begin != next || s.page_count == 0) return false;
    next += s.page_count;
  }
  return next == r.matched_pages;
}

// The first `pages` pages of `r` as (blob, offset) per page.
std::vector<std::pair<BlobKey, uint32_t>> PerPage(const MatchResult& r, uint32_t pages) {
  std::vector<std::pair<BlobKey, uint32_t>> out;
  for (const MatchSegment& s : r.segments) {
    for (uint32_t i = 0; i < s.page_count && out.size() < pages; ++i) {
      out.emplace_back(s.blob, s.blob_page_offset + i);
    }
  }
  return out;
}

TEST(RadixTreeConcurrencyTest, PinnedPathsSurviveConcurrentWriters) {
  const std::vector<Sequence> forest = MakeForest(/*seed=*/42, /*count=*/300);
  RadixTree tree(kPageTokens);
  std::atomic<uint64_t> inserted{0};
  std::atomic<uint64_t> removed{0};
  std::atomic<uint64_t> evicted{0};
  std::atomic<int> violations{0};
  std::atomic<int> insert_ops{0};
  std::atomic<uint64_t> pinned_matches{0};
  uint64_t next_blob = 1;

  // Warm the tree so matchers find something from the start.
  for (size_t i = 0; i < forest.size(); i += 2) {
    auto added =
        tree.Insert(forest[i].root, forest[i].tokens, 0, BlobKey{PrefixHash{0, next_blob++}});
    ASSERT_TRUE(added.ok()) << added.status();
    inserted += *added;
  }

  // Writers keep going while matchers run (up to their op budget), so the two
  // overlap however the scheduler orders thread starts; each writer also does a
  // minimum number of operations, so the test exercises removal and eviction
  // even if the scheduler lets the matchers finish first.
  std::atomic<int> matchers_running{kMatchers};
  std::atomic<bool> go{false};
  const auto wait_for_go = [&go] {
    while (!go.load()) std::this_thread::yield();
  };
  // Yielding between operations interleaves the threads finely even on a
  // machine with fewer cores than threads.
  constexpr int kMinWriterOps = 200;
  const auto writers_continue = [&matchers_running](int op, int budget) {
    std::this_thread::yield();
    return op < kMinWriterOps || (op < budget && matchers_running.load() > 0);
  };

  std::vector<std::thread> threads;
  for (int m = 0; m < kMatchers; ++m) {
    threads.emplace_back([&, m] {
      wait_for_go();
      std::mt19937_64 rng(100 + m);
      struct Held {
        const Sequence* seq;
        MatchResult result;
      };
      std::deque<Held> held;
      for (int op = 0; op < kMatchOps; ++op, std::this_thread::yield()) {
        const Sequence& seq = forest[rng() % forest.size()];
        const bool pin = rng() % 2 == 0;
        MatchResult r = tree.Match(seq.root, seq.tokens, pin);
        if (!WellFormed(r)) ++violations;
        if (r.handle.pinned()) {
          ++pinned_matches;
          held.push_back(Held{&seq, std::move(r)});
        }
        // Every held pin must still be fully matched, with the same blobs.
        for (const Held& h : held) {
          const MatchResult again = tree.Match(h.seq->root, h.seq->tokens, false);
          if (again.matched_pages < h.result.matched_pages ||
              PerPage(again, h.result.matched_pages) != PerPage(h.result, h.result.matched_pages)) {
            ++violations;
          }
        }
        if (held.size() > 4 || (!held.empty() && rng() % 3 == 0)) {
          if (rng() % 2 == 0) held.front().result.handle.Release();
          held.pop_front();  // destruction releases too
        }
      }
      held.clear();
      --matchers_running;
    });
  }
  threads.emplace_back([&] {
    std::mt19937_64 rng(7);
    wait_for_go();
    for (int op = 0; writers_continue(op, kInsertOps); ++op) {
      ++insert_ops;
      const Sequence& seq = forest[rng() % forest.size()];
      const uint32_t pages = static_cast<uint32_t>(seq.tokens.size() / kPageTokens);
      // A continuation from what is cached now (may race with removal), or
      // the whole sequence from page 0.
      uint32_t begin = 0;
      if (rng() % 2 == 0)
        begin = std::min(tree.Match(seq.root, seq.tokens, false).matched_pages, pages - 1);
      auto added = tree.Insert(seq.root, seq.tokens, begin, BlobKey{PrefixHash{0, next_blob++}});
      if (added.ok()) {
        inserted += *added;
      } else if (added.status().code() != absl::StatusCode::kFailedPrecondition) {
        ++violations;
      }
    }
  });
  // Removes pages [k-1, ...) of `seq` and below, adding what went to `*total`.
  const auto remove_checked = [&](const Sequence& seq, size_t k, std::atomic<uint64_t>* total) {
    uint64_t reported = 0;
    auto result =
        tree.RemoveSubtree(seq.root, absl::MakeConstSpan(seq.tokens.data(), k * kPageTokens),
                           [&reported](const EvictedSpan& span) { reported += span.page_count; });
    if (result.ok()) {
      if (*result != reported) ++violations;
      *total += *result;
    } else if (result.status().code() != absl::StatusCode::kNotFound &&
               result.status().code() != absl::StatusCode::kFailedPrecondition) {
      ++violations;
    }
  };
  threads.emplace_back([&] {
    std::mt19937_64 rng(8);
    wait_for_go();
    for (int op = 0; writers_continue(op, kRemoveOps); ++op) {
      const Sequence& seq = forest[rng() % forest.size()];
      const size_t pages = seq.tokens.size() / kPageTokens;
      // Mostly cut near the end of a sequence; now and then a whole trie.
      const size_t k = rng() % 20 == 0 ? 1 : pages - rng() % std::min<size_t>(pages, 4);
      remove_checked(seq, k, &removed);
    }
  });
  // A tail remover: cuts the last page or two of a sequence, as an owner evicting a
  // leaf blob does (the order is the owner's: tiering::LeafFirstIndex).
  threads.emplace_back([&] {
    std::mt19937_64 rng(9);
    wait_for_go();
    for (int op = 0; writers_continue(op, kEvictOps); ++op) {
      const Sequence& seq = forest[rng() % forest.size()];
      const size_t pages = seq.tokens.size() / kPageTokens;
      const size_t k = pages - rng() % std::min<size_t>(pages, 2);
      remove_checked(seq, k, &evicted);
      if (op % 50 == 0) {
        const RadixTreeStats s = tree.Stats();
        if (s.nodes > s.pages || s.leaves > s.nodes) ++violations;
      }
    }
  });
  go = true;
  for (std::thread& t : threads) t.join();

  std::printf(
      "insert ops %d, pinned matches %llu, pages inserted %llu, removed %llu, evicted %llu\n",
      insert_ops.load(), static_cast<unsigned long long>(pinned_matches.load()),
      static_cast<unsigned long long>(inserted.load()),
      static_cast<unsigned long long>(removed.load()),
      static_cast<unsigned long long>(evicted.load()));
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(pinned_matches.load(), 0u);
  EXPECT_GT(removed.load() + evicted.load(), 0u);
  RadixTreeStats s = tree.Stats();
  EXPECT_EQ(s.pinned_nodes, 0u);
  EXPECT_EQ(s.pages, inserted.load() - removed.load() - evicted.load());
  uint64_t rest = 0;
  for (const Sequence& seq : forest) {  // every trie, whole
    auto result = tree.RemoveSubtree(seq.root, absl::MakeConstSpan(seq.tokens.data(), kPageTokens),
                                     [](const EvictedSpan&) {});
    if (result.ok()) rest += *result;
  }
  EXPECT_EQ(rest, s.pages);
  s = tree.Stats();
  EXPECT_EQ(s.pages, 0u);
  EXPECT_EQ(s.nodes, 0u);
  EXPECT_EQ(s.roots, 0u);
}

}  // namespace
}  // namespace strata::radix
