// Randomized differential test: RadixTree against a naive reference that maps
// every cached page prefix (root, tokens of pages [0..i]) to (blob, blob page
// offset). Fixed seeds; every operation is checked against the reference, and
// a random known sequence is re-matched after every operation.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

#include "strata/base/sanitizers.h"
#include "strata/radix/radix_tree.h"

namespace strata::radix {
namespace {

constexpr uint32_t kRoots = 3;
constexpr uint32_t kMaxSequencePages = 40;
constexpr uint64_t kSoftPageCap = 2500;  // evict harder above this many cached pages

PrefixHash RootHash(uint32_t root) { return PrefixHash{0xabc, root}; }
BlobKey BlobOf(uint64_t id) { return BlobKey{PrefixHash{0, id}}; }

using Tokens = std::vector<TokenId>;
using Key = std::pair<uint32_t, Tokens>;  // (root, tokens of pages [0..i])

struct Entry {
  uint64_t blob = 0;
  uint32_t offset = 0;
  uint32_t children = 0;  // cached one-page extensions
};

class Reference {
 public:
  explicit Reference(uint32_t page_tokens) : page_tokens_(page_tokens) {}

  const Entry* Find(const Key& key) const {
    auto it = pages_.find(key);
    return it == pages_.end() ? nullptr : &it->second;
  }
  const Key* KeyOf(uint64_t blob, uint32_t offset) const {
    auto it = by_blob_.find({blob, offset});
    return it == by_blob_.end() ? nullptr : &it->second;
  }
  static Key Prefix(uint32_t root, const Tokens& tokens, size_t n) {
    return Key{root, Tokens(tokens.begin(), tokens.begin() + n)};
  }

  // Number of leading whole pages of `tokens` cached under `root`.
  uint32_t CachedPages(uint32_t root, const Tokens& tokens) const {
    uint32_t pages = 0;
    while (size_t{pages + 1} * page_tokens_ <= tokens.size() &&
           Find(Prefix(root, tokens, size_t{pages + 1} * page_tokens_)) != nullptr) {
      ++pages;
    }
    return pages;
  }

  void Add(const Key& key, uint64_t blob, uint32_t offset) {
    ASSERT_TRUE(pages_.emplace(key, Entry{blob, offset, 0}).second);
    by_blob_[{blob, offset}] = key;
    if (key.second.size() > page_tokens_) ++Parent(key).children;
    roots_[key.first]++;
  }

  void Remove(const Key& key) {
    auto it = pages_.find(key);
    ASSERT_NE(it, pages_.end());
    ASSERT_EQ(it->second.children, 0u);
    by_blob_.erase({it->second.blob, it->second.offset});
    if (key.second.size() > page_tokens_) --Parent(key).children;
    pages_.erase(it);
    if (--roots_[key.first] == 0) roots_.erase(key.first);
  }

  // Keys starting with `key` (itself included), parents before children.
  std::vector<Key> Subtree(const Key& key) const {
    std::vector<Key> out;
    for (auto it = pages_.lower_bound(key); it != pages_.end(); ++it) {
      const Key& k = it->first;
      if (k.first != key.first || k.second.size() < key.second.size() ||
          !std::equal(key.second.begin(), key.second.end(), k.second.begin())) {
        break;
      }
      out.push_back(k);
    }
    return out;
  }

  // Cached page prefixes without a cached child.
  std::vector<Key> Leaves() const {
    std::vector<Key> out;
    for (const auto& [key, entry] : pages_) {
      if (entry.children == 0) out.push_back(key);
    }
    return out;
  }

  uint64_t size() const { return pages_.size(); }
  uint64_t roots() const { return roots_.size(); }

 private:
  Entry& Parent(const Key& key) {
    Key parent{key.first, Tokens(key.second.begin(), key.second.end() - page_tokens_)};
    auto it = pages_.find(parent);
    if (it == pages_.end()) {
      ADD_FAILURE() << "reference lost prefix closure";
      static Entry dummy;
      return dummy;
    }
    return it->second;
  }

  const uint32_t page_tokens_;
  std::map<Key, Entry> pages_;
  std::map<std::pair<uint64_t, uint32_t>, Key> by_blob_;
  std::map<uint32_t, uint64_t> roots_;
};

struct Pin {
  MatchHandle handle;
  std::vector<Key> keys;  // the matched page prefixes
};

class DifferentialRun {
 public:
  DifferentialRun(uint32_t page_tokens, uint64_t seed)
      : page_tokens_(page_tokens), rng_(seed), tree_(page_tokens), ref_(page_tokens) {}

  ~DifferentialRun() { pins_.clear(); }  // handles before the tree

  void Run(int ops) {
    for (op_ = 0; op_ < ops && !::testing::Test::HasFatalFailure(); ++op_) {
      const int dice = Uniform(0, 99);
      if (dice < 35) {
        DoInsert();
      } else if (dice < 65) {
        DoMatch();
      } else if (dice < 75) {
        ReleaseSomePin();
      } else if (dice < 85 || ref_.size() > kSoftPageCap) {
        DoEvict();
      } else {
        DoRemoveSubtree();
      }
      if (!known_.empty()) {
        const auto& [root, tokens] = Pick(known_);
        CheckMatch(root, tokens, /*pin=*/false);
      }
      if (op_ % 50 == 0) CheckStats();
    }
    pins_.clear();
    pinned_.clear();
    CheckStats();
    EXPECT_EQ(tree_.Stats().pinned_nodes, 0u);
    // Empty the tree: everything can go now.
    uint64_t before = ref_.size();
    EXPECT_EQ(EvictChecked(~uint64_t{0}), before);
    EXPECT_EQ(ref_.size(), 0u);
    std::printf(
        "page_tokens %u: inserts %d (%d new pages, %d duplicates, %d missing prefix), "
        "matches %d (%d pages, %d pinned), evicted spans %d, subtree removals %d ok / %d "
        "pinned / %d not found, peak %llu pages\n",
        page_tokens_, counts_.insert_ok, counts_.insert_new_pages, counts_.insert_dup,
        counts_.insert_missing_prefix, counts_.matches, counts_.match_pages, counts_.pins,
        counts_.evicted_spans, counts_.removes_ok, counts_.removes_pinned, counts_.removes_missing,
        static_cast<unsigned long long>(counts_.max_pages));
    const RadixTreeStats end = tree_.Stats();
    EXPECT_EQ(end.pages, 0u);
    EXPECT_EQ(end.nodes, 0u);
    EXPECT_EQ(end.roots, 0u);
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(0, static_cast<int>(v.size()) - 1)];
  }
  Tokens RandomTokens(size_t n) {
    // A small alphabet now and then so that unrelated sequences collide.
    const int alphabet = Uniform(0, 3) == 0 ? 3 : 1000;
    Tokens t(n);
    for (auto& x : t) x = static_cast<TokenId>(Uniform(0, alphabet - 1));
    return t;
  }
  std::string Where() const { return "op " + std::to_string(op_); }

  // A sequence for an insert or a query, built from the known ones.
  std::pair<uint32_t, Tokens> MakeSequence() {
    const int kind = known_.empty() ? 0 : Uniform(0, 99);
    const size_t page = page_tokens_;
    if (kind < 15) {  // brand new
      return {static_cast<uint32_t>(Uniform(0, kRoots - 1)),
              RandomTokens(page * Uniform(1, kMaxSequencePages / 2))};
    }
    auto [root, base] = Pick(known_);
    const size_t pages = base.size() / page;
    if (kind < 50) {  // branch off at a random token (mid-page or on a page boundary)
      const size_t cut = Uniform(0, static_cast<int>(base.size()) - 1);
      Tokens t(base.begin(), base.begin() + cut);
      Tokens tail = RandomTokens(page * Uniform(1, 8) - cut % page);
      t.insert(t.end(), tail.begin(), tail.end());
      // Make sure the token at `cut` differs, so the branch diverges there.
      t[cut] = base[cut] + 1 + Uniform(0, 5);
      return {root, std::move(t)};
    }
    if (kind < 80 && pages < kMaxSequencePages) {  // extension
      Tokens tail = RandomTokens(page * Uniform(1, kMaxSequencePages - pages));
      base.insert(base.end(), tail.begin(), tail.end());
      return {root, std::move(base)};
    }
    // Duplicate: the sequence itself or one of its page prefixes.
    base.resize(page * Uniform(1, static_cast<int>(pages)));
    return {root, std::move(base)};
  }

  void DoInsert() {
    auto [root, tokens] = MakeSequence();
    const uint32_t pages = static_cast<uint32_t>(tokens.size() / page_tokens_);
    const uint32_t cached = ref_.CachedPages(root, tokens);
    uint32_t begin = 0;
    const int how = Uniform(0, 99);
    if (how < 60) {
      begin = std::min(cached, pages - 1);
    } else if (how < 80) {
      begin = static_cast<uint32_t>(Uniform(0, pages - 1));
    }
    if (how >= 97 && page_tokens_ > 1) {  // malformed: unaligned
      tokens.pop_back();
      EXPECT_EQ(tree_.Insert(RootHash(root), tokens, 0, BlobOf(next_blob_)).status().code(),
                absl::StatusCode::kInvalidArgument)
          << Where();
      return;
    }
    const uint64_t blob = next_blob_++;
    auto result = tree_.Insert(RootHash(root), tokens, begin, BlobOf(blob));
    if (cached < begin) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << Where();
      ++counts_.insert_missing_prefix;
      return;
    }
    ASSERT_TRUE(result.ok()) << Where() << ": " << result.status();
    EXPECT_EQ(*result, pages - cached) << Where();
    ++counts_.insert_ok;
    counts_.insert_new_pages += pages - cached;
    counts_.insert_dup += cached == pages;
    for (uint32_t i = cached; i < pages; ++i) {
      ref_.Add(Reference::Prefix(root, tokens, size_t{i + 1} * page_tokens_), blob, i - begin);
    }
    counts_.max_pages = std::max(counts_.max_pages, ref_.size());
    known_.emplace_back(root, std::move(tokens));
    if (known_.size() > 400) known_.erase(known_.begin() + Uniform(0, 399));
  }

  // Matches and compares against the reference; returns the matched keys.
  std::vector<Key> CheckMatch(uint32_t root, const Tokens& query, bool pin,
                              MatchHandle* handle = nullptr) {
    MatchResult r = tree_.Match(RootHash(root), query, pin);
    std::vector<Key> keys;
    std::vector<MatchSegment> want;
    for (size_t end = page_tokens_; end <= query.size(); end += page_tokens_) {
      Key key = Reference::Prefix(root, query, end);
      const Entry* e = ref_.Find(key);
      if (e == nullptr) break;
      const auto seq = static_cast<uint32_t>(keys.size());
      if (!want.empty() && want.back().blob == BlobOf(e->blob) &&
          want.back().blob_page_offset + want.back().page_count == e->offset) {
        ++want.back().page_count;
      } else {
        want.push_back(MatchSegment{BlobOf(e->blob), e->offset, 1, seq});
      }
      keys.push_back(std::move(key));
    }
    EXPECT_EQ(r.matched_pages, keys.size()) << Where();
    ++counts_.matches;
    counts_.match_pages += r.matched_pages;
    counts_.pins += r.handle.pinned();
    EXPECT_TRUE(r.segments == want) << Where() << ": segments differ";
    EXPECT_EQ(r.handle.pinned(), pin && !keys.empty()) << Where();
    if (handle != nullptr) *handle = std::move(r.handle);
    return keys;
  }

  void DoMatch() {
    auto [root, query] = MakeSequence();
    if (Uniform(0, 3) == 0) query.resize(query.size() - Uniform(0, page_tokens_ - 1));
    if (Uniform(0, 9) == 0) root = (root + 1) % kRoots;  // wrong root
    const bool pin = Uniform(0, 9) < 3;
    Pin held;
    held.keys = CheckMatch(root, query, pin, &held.handle);
    if (held.handle.pinned()) {
      for (const Key& k : held.keys) pinned_.insert(k);
      pins_.push_back(std::move(held));
    }
  }

  void ReleaseSomePin() {
    if (pins_.empty()) return;
    const size_t i = Uniform(0, static_cast<int>(pins_.size()) - 1);
    for (const Key& k : pins_[i].keys) pinned_.erase(pinned_.find(k));
    if (Uniform(0, 1) == 0) pins_[i].handle.Release();
    pins_.erase(pins_.begin() + i);  // destroying the handle releases it too
  }

  // Checks one reported span against the reference and drops its pages.
  void Consume(const EvictedSpan& span, bool must_be_leaf) {
    ASSERT_EQ(span.root.hi, 0xabcu);
    const uint32_t root = static_cast<uint32_t>(span.root.lo);
    ASSERT_GT(span.page_count, 0u);
    std::vector<Key> keys;
    for (uint32_t j = 0; j < span.page_count; ++j) {
      const Key* key = ref_.KeyOf(span.blob.hash.lo, span.blob_page_offset + j);
      ASSERT_NE(key, nullptr) << Where() << ": removed a page the reference does not hold";
      ASSERT_EQ(key->first, root) << Where();
      ASSERT_EQ(key->second.size(), size_t{span.seq_page_begin + j + 1} * page_tokens_) << Where();
      ASSERT_EQ(pinned_.count(*key), 0u) << Where() << ": removed a pinned page";
      keys.push_back(*key);
    }
    ++counts_.evicted_spans;
    if (must_be_leaf) {
      ASSERT_EQ(ref_.Find(keys.back())->children, 0u) << Where() << ": evicted a non-leaf";
    }
    for (auto it = keys.rbegin(); it != keys.rend(); ++it) ref_.Remove(*it);
  }

  // Removes leaf pages (no cached child, not pinned) with RemoveSubtree, as an owner that
  // evicts leaf-first does (the order is the owner's, tiering::LeafFirstIndex; here random),
  // in rounds so that parents left childless go too, until `pages` are gone or no leaf can
  // go. Checks each removal against the reference.
  uint64_t EvictChecked(uint64_t pages) {
    uint64_t removed = 0;
    while (removed < pages && !::testing::Test::HasFailure()) {
      std::vector<Key> leaves = ref_.Leaves();
      std::shuffle(leaves.begin(), leaves.end(), rng_);
      uint64_t round = 0;
      for (const Key& key : leaves) {
        if (removed >= pages) break;
        if (pinned_.count(key) > 0) continue;
        uint64_t reported = 0;
        auto result =
            tree_.RemoveSubtree(RootHash(key.first), key.second, [&](const EvictedSpan& span) {
              reported += span.page_count;
              Consume(span, /*must_be_leaf=*/true);
            });
        if (!result.ok()) {
          // Pins are per node: a pin on earlier pages of the leaf's node blocks the cut.
          EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << Where();
          bool ancestor_pinned = false;
          for (size_t end = page_tokens_; end < key.second.size(); end += page_tokens_) {
            ancestor_pinned |= pinned_.count(Reference::Prefix(key.first, key.second, end)) > 0;
          }
          EXPECT_TRUE(ancestor_pinned) << Where() << ": spurious FAILED_PRECONDITION";
          continue;
        }
        EXPECT_EQ(*result, 1u) << Where();
        EXPECT_EQ(reported, 1u) << Where();
        ++removed;
        ++round;
      }
      if (round == 0) break;
    }
    if (removed < pages && pins_.empty()) {
      EXPECT_EQ(ref_.size(), 0u) << Where();
    }
    return removed;
  }

  void DoEvict() {
    const uint64_t want = ref_.size() > kSoftPageCap ? ref_.size() / 3 : Uniform(1, 16);
    const uint64_t removed = EvictChecked(want);
    EXPECT_TRUE(removed >= want || !pins_.empty() || ref_.size() == 0) << Where();
  }

  void DoRemoveSubtree() {
    if (known_.empty()) return;
    auto [root, tokens] = Pick(known_);
    const uint32_t pages = static_cast<uint32_t>(tokens.size() / page_tokens_);
    tokens.resize(size_t{static_cast<uint32_t>(Uniform(1, pages))} * page_tokens_);
    if (Uniform(0, 7) == 0) tokens.back() += 1;  // probably not cached
    const uint32_t k = static_cast<uint32_t>(tokens.size() / page_tokens_);
    const bool present = ref_.CachedPages(root, tokens) == k;
    const Key top = Reference::Prefix(root, tokens, tokens.size());
    bool subtree_pinned = false;
    std::set<Key> expected;
    if (present) {
      for (Key& key : ref_.Subtree(top)) {
        subtree_pinned |= pinned_.count(key) > 0;
        expected.insert(std::move(key));
      }
    }
    uint64_t reported = 0;
    auto result = tree_.RemoveSubtree(RootHash(root), tokens, [&](const EvictedSpan& span) {
      reported += span.page_count;
      for (uint32_t j = 0; j < span.page_count; ++j) {
        const Key* key = ref_.KeyOf(span.blob.hash.lo, span.blob_page_offset + j);
        ASSERT_NE(key, nullptr) << Where();
        ASSERT_EQ(expected.count(*key), 1u) << Where() << ": removed a page outside the subtree";
      }
      Consume(span, /*must_be_leaf=*/true);  // children are reported first
    });
    if (!present) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound) << Where();
      ++counts_.removes_missing;
      return;
    }
    if (subtree_pinned) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << Where();
      ++counts_.removes_pinned;
      return;
    }
    if (!result.ok()) {
      ++counts_.removes_pinned;
      // Pins are per node: a pin on earlier pages of the node holding page
      // k-1 blocks the cut too. Then some pinned page must be an ancestor.
      ASSERT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << Where();
      bool ancestor_pinned = false;
      for (size_t end = page_tokens_; end < tokens.size(); end += page_tokens_) {
        ancestor_pinned |= pinned_.count(Reference::Prefix(root, tokens, end)) > 0;
      }
      EXPECT_TRUE(ancestor_pinned) << Where() << ": spurious FAILED_PRECONDITION";
      return;
    }
    EXPECT_EQ(*result, expected.size()) << Where();
    EXPECT_EQ(reported, expected.size()) << Where();
    ++counts_.removes_ok;
  }

  void CheckStats() {
    const RadixTreeStats s = tree_.Stats();
    EXPECT_EQ(s.pages, ref_.size()) << Where();
    EXPECT_EQ(s.roots, ref_.roots()) << Where();
    EXPECT_EQ(s.token_bytes, ref_.size() * page_tokens_ * sizeof(TokenId)) << Where();
    EXPECT_LE(s.nodes, s.pages) << Where();
    EXPECT_LE(s.leaves, s.nodes) << Where();
    EXPECT_GE(s.index_bytes, s.token_bytes) << Where();
    EXPECT_EQ(s.pinned_nodes > 0, !pins_.empty()) << Where();
  }

  const uint32_t page_tokens_;
  std::mt19937_64 rng_;
  RadixTree tree_;
  Reference ref_;
  std::vector<std::pair<uint32_t, Tokens>> known_;  // sequences inserted at some point
  std::vector<Pin> pins_;
  std::multiset<Key> pinned_;  // keys of pinned pages (with multiplicity)
  uint64_t next_blob_ = 1;
  int op_ = 0;
  // What the run exercised, printed at the end so a reader can see coverage.
  struct Counts {
    int insert_ok = 0, insert_new_pages = 0, insert_dup = 0, insert_missing_prefix = 0;
    int match_pages = 0, matches = 0, pins = 0;
    int evicted_spans = 0, removes_ok = 0, removes_pinned = 0, removes_missing = 0;
    uint64_t max_pages = 0;
  } counts_;
};

class RadixTreeDifferentialTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint64_t>> {
};

TEST_P(RadixTreeDifferentialTest, MatchesNaiveReference) {
  const auto [page_tokens, seed] = GetParam();
  DifferentialRun run(page_tokens, seed);
  // ASan makes the reference's checks ~4x slower (104 s for the 9 runs): it runs a quarter
  // of the operations; the release build runs them all.
  run.Run(/*ops=*/kAddressSanitizer ? 2000 : 8000);
}

INSTANTIATE_TEST_SUITE_P(PageSizesAndSeeds, RadixTreeDifferentialTest,
                         ::testing::Combine(::testing::Values(1u, 4u, 16u),
                                            ::testing::Values(1u, 2u, 3u)));

}  // namespace
}  // namespace strata::radix
