// NodeEngine: creation and the two-phase put.
#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using testing::BeginBlob;
using testing::BlobContent;
using testing::MakeBlob;
using testing::PutBlob;
using testing::SendBlob;
using testing::SmallNamespace;
using testing::SmallOptions;
using testing::WholeBlob;

class NodeEnginePutTest : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = NodeEngine::Create(SmallOptions(&clock_)).value(); }
  uint64_t UsedBytes() const { return engine_->Tiers().Find(Tier::kDram)->used_bytes; }
  std::vector<radix::TokenId> Concat(absl::Span<const radix::TokenId> a,
                                     absl::Span<const radix::TokenId> b) {
    std::vector<radix::TokenId> out(a.begin(), a.end());
    out.insert(out.end(), b.begin(), b.end());
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<NodeEngine> engine_;
  const radix::Namespace ns_ = SmallNamespace();
  const radix::PrefixHash h0_ = radix::NamespaceHash(ns_);
};

TEST(NodeEngineCreateTest, RejectsBadOptions) {
  FakeClock clock;
  auto bad = [&](auto mutate) {
    NodeEngineOptions o = SmallOptions(&clock);
    mutate(o);
    return NodeEngine::Create(o).status();
  };
  EXPECT_CODE(bad([](auto& o) { o.dram_bytes = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.dram_bytes = 5000; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.max_blob_bytes = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.max_blob_bytes = (uint64_t{1} << 30) + 1; }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.default_lease_ttl = absl::ZeroDuration(); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.max_lease_ttl = absl::Seconds(1); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.put_ttl = absl::ZeroDuration(); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.dram_low_watermark = 0; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.dram_high_watermark = 1.5; }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.dram_policy = "fifo?"; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(bad([](auto& o) { o.rebuild_task_ttl = absl::ZeroDuration(); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_OK(bad([](auto&) {}));
}

TEST_F(NodeEnginePutTest, PutCommitThenMatchFindsTheBlob) {
  const BlobContent blob = MakeBlob(ns_, 3, 1);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_FALSE(begin.exists);
  EXPECT_NE(begin.put_id, 0u);
  const radix::BlobKey expected{radix::PrefixHashAt(h0_, blob.tokens, 4)};
  EXPECT_EQ(begin.key, expected);
  EXPECT_GE(begin.extent.length, blob.bytes.size());
  EXPECT_EQ(begin.deadline, clock_.Now() + absl::Seconds(60));
  ASSERT_OK(SendBlob(*engine_, begin.put_id, blob));
  ASSERT_OK_AND_ASSIGN(CommitPutReply commit, engine_->CommitPut(begin.put_id));
  EXPECT_EQ(commit.key, expected);
  EXPECT_EQ(commit.indexed_pages, 3u);

  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, blob.tokens));
  EXPECT_EQ(match.matched_pages, 3u);
  ASSERT_EQ(match.segments.size(), 1u);
  EXPECT_EQ(match.segments[0], (Segment{expected, 0, 3, 0, 3, Tier::kDram}));
  // The committed put is gone as a put.
  EXPECT_CODE(engine_->CommitPut(begin.put_id), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->AbortPut(begin.put_id), absl::StatusCode::kNotFound);
}

TEST_F(NodeEnginePutTest, ClientKeyIsChecked) {
  const BlobContent blob = MakeBlob(ns_, 2, 2);
  PutRequest request;
  request.tokens = blob.tokens;
  request.bytes = blob.bytes.size();
  request.checksums = blob.checksums;
  request.key = radix::BlobKey{radix::PrefixHash{1, 2}};
  EXPECT_CODE(engine_->BeginPut(ns_, request), absl::StatusCode::kInvalidArgument);
  request.key = radix::BlobKey{radix::PrefixHashAt(h0_, blob.tokens, 4)};
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, engine_->BeginPut(ns_, request));
  EXPECT_EQ(begin.key, *request.key);
}

TEST_F(NodeEnginePutTest, BeginPutValidatesTheRequest) {
  const BlobContent blob = MakeBlob(ns_, 2, 3);
  auto begin = [&](auto mutate) {
    PutRequest r;
    r.tokens = blob.tokens;
    r.bytes = blob.bytes.size();
    r.checksums = blob.checksums;
    mutate(r);
    return engine_->BeginPut(ns_, r).status();
  };
  EXPECT_CODE(begin([](PutRequest& r) { r.tokens = {}; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(begin([&](PutRequest& r) { r.tokens = absl::MakeConstSpan(blob.tokens).first(5); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(begin([](PutRequest& r) { r.bytes -= 1; }), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(begin([&](PutRequest& r) { r.checksums = r.checksums.first(3); }),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(begin([&](PutRequest& r) {
                r.parent = BlobParent{radix::BlobKey{radix::PrefixHash{5, 6}}, 1};
              }),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(UsedBytes(), 0u);
  EXPECT_OK(begin([](PutRequest&) {}));
}

TEST_F(NodeEnginePutTest, TooLargeAndTierFull) {
  FakeClock clock;
  NodeEngineOptions options = SmallOptions(&clock, 64 << 10);
  options.max_blob_bytes = 100 << 10;
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(options));
  // 500 pages * 256 B = 128000 B > max_blob_bytes.
  EXPECT_CODE(BeginBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 500, 1)),
              absl::StatusCode::kInvalidArgument);
  // 300 pages = 76800 B: allowed, but more than the 64 KiB tier holds.
  EXPECT_CODE(BeginBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 300, 1)),
              absl::StatusCode::kResourceExhausted);
}

// Issue 12, defect 4: a reservation that cannot fit is refused before anything is evicted,
// and pending puts that never send data cannot take more than their share of the cache.
TEST_F(NodeEnginePutTest, ReservationsThatCannotFitOrPassTheirShareEvictNothing) {
  FakeClock clock;
  ASSERT_OK_AND_ASSIGN(auto engine, NodeEngine::Create(SmallOptions(&clock, 64 << 10)));
  // Ten committed blobs of 4 KiB (16 pages of 256 B): 40 KiB of the 64 KiB tier.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    ASSERT_OK(PutBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 16, seed)).status());
  }
  auto dram = [&] { return *engine->Tiers().Find(Tier::kDram); };
  ASSERT_EQ(dram().blobs, 10u);
  // 76800 B can never fit the 64 KiB tier: refused, nothing evicted.
  absl::Status never = BeginBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 300, 99)).status();
  EXPECT_CODE(never, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(never.message().find("cannot fit"), absl::string_view::npos) << never;
  EXPECT_EQ(dram().blobs, 10u);
  EXPECT_EQ(dram().evictions, 0u);
  // A storm of 8 KiB reservations that never send data: the first is admitted (it evicts what
  // it needs), the rest stop at the tenant's share (16 KiB of 64) and evict nothing more.
  int admitted = 0;
  absl::Status refused;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    absl::StatusOr<BeginPutReply> begin =
        BeginBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 32, seed));
    if (begin.ok()) {
      ++admitted;
    } else {
      refused = begin.status();
    }
  }
  EXPECT_EQ(admitted, 2);
  EXPECT_CODE(refused, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("a tenant's share"), absl::string_view::npos) << refused;
  EXPECT_EQ(engine->Tiers().engine.pending_puts, 2u);
  // 40 KiB committed + 16 KiB reserved fit 64 KiB: every committed blob is still cached.
  EXPECT_EQ(dram().blobs, 12u);
  EXPECT_EQ(dram().evictions, 0u);
  // Once they expire, puts are admitted again.
  clock.Advance(absl::Minutes(2));
  engine->ReapExpired();
  EXPECT_EQ(engine->Tiers().engine.pending_puts, 0u);
  EXPECT_OK(PutBlob(*engine, ns_, std::nullopt, MakeBlob(ns_, 32, 200)).status());
}

TEST_F(NodeEnginePutTest, PendingBlobIsInvisible) {
  const BlobContent blob = MakeBlob(ns_, 2, 4);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  ASSERT_OK(SendBlob(*engine_, begin.put_id, blob));
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, blob.tokens));
  EXPECT_EQ(match.matched_pages, 0u);
  const ReadRange range = WholeBlob(begin.key, 2);
  EXPECT_CODE(engine_->Read(ns_, {&range, 1}), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Stat(begin.key), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Delete(begin.key), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->Pin(begin.key), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(ListReply list, engine_->List({}));
  EXPECT_TRUE(list.blobs.empty());
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 1u);
  ASSERT_OK(engine_->CommitPut(begin.put_id));
  ASSERT_OK_AND_ASSIGN(match, engine_->Match(ns_, blob.tokens));
  EXPECT_EQ(match.matched_pages, 2u);
}

TEST_F(NodeEnginePutTest, AbortFreesTheExtent) {
  const BlobContent blob = MakeBlob(ns_, 2, 5);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_GT(UsedBytes(), 0u);
  ASSERT_OK(engine_->AbortPut(begin.put_id));
  EXPECT_EQ(UsedBytes(), 0u);
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
  EXPECT_CODE(engine_->AbortPut(begin.put_id), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->PutTarget(begin.put_id), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->PutReceived(begin.put_id, 0, 1), absl::StatusCode::kNotFound);
  // The key can be put again.
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, blob));
}

TEST_F(NodeEnginePutTest, HeldTargetKeepsBytesPastAbort) {
  const BlobContent blob = MakeBlob(ns_, 2, 6);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  ASSERT_OK_AND_ASSIGN(HeldSpan target, engine_->PutTarget(begin.put_id));
  EXPECT_EQ(target.size(), blob.bytes.size());
  ASSERT_OK(engine_->AbortPut(begin.put_id));
  const uint64_t held = UsedBytes();
  EXPECT_GT(held, 0u);
  // A new put cannot get the held extent: a late write lands in dead bytes only.
  ASSERT_OK_AND_ASSIGN(BeginPutReply other, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_NE(other.extent.offset, begin.extent.offset);
  std::memset(target.data(), 0xAB, target.size());
  target.Reset();
  EXPECT_FALSE(target.held());
  EXPECT_EQ(UsedBytes(), held);  // only `other` now
  ASSERT_OK(SendBlob(*engine_, other.put_id, blob));
  ASSERT_OK(engine_->CommitPut(other.put_id));
}

TEST_F(NodeEnginePutTest, DuplicateKeyTransfersNothing) {
  const BlobContent blob = MakeBlob(ns_, 2, 7);
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, blob));
  const uint64_t used = UsedBytes();
  ASSERT_OK_AND_ASSIGN(BeginPutReply again, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_TRUE(again.exists);
  EXPECT_EQ(again.put_id, 0u);
  EXPECT_EQ(again.key, radix::BlobKey{radix::PrefixHashAt(h0_, blob.tokens, 4)});
  EXPECT_EQ(UsedBytes(), used);
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
}

TEST_F(NodeEnginePutTest, SecondBeginPutOfAPendingKeySeesExists) {
  const BlobContent blob = MakeBlob(ns_, 2, 8);
  ASSERT_OK_AND_ASSIGN(BeginPutReply first, BeginBlob(*engine_, ns_, std::nullopt, blob));
  ASSERT_OK_AND_ASSIGN(BeginPutReply second, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_FALSE(first.exists);
  EXPECT_TRUE(second.exists);
  EXPECT_EQ(second.key, first.key);
}

TEST_F(NodeEnginePutTest, ConcurrentBeginPutsOfOneKeyYieldOnePut) {
  const BlobContent blob = MakeBlob(ns_, 2, 9);
  std::atomic<int> puts{0}, exists{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      absl::StatusOr<BeginPutReply> r = BeginBlob(*engine_, ns_, std::nullopt, blob);
      ASSERT_TRUE(r.ok()) << r.status();
      (r->exists ? exists : puts).fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(puts.load(), 1);
  EXPECT_EQ(exists.load(), 3);
}

TEST_F(NodeEnginePutTest, ChecksumMismatchIsDataLossAndAbortsThePut) {
  BlobContent blob = MakeBlob(ns_, 3, 10);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  blob.bytes[128 * 4 + 5] ^= std::byte{1};  // chunk 4 = layer 1, page 1
  ASSERT_OK(SendBlob(*engine_, begin.put_id, blob));
  const absl::StatusOr<CommitPutReply> commit = engine_->CommitPut(begin.put_id);
  EXPECT_CODE(commit, absl::StatusCode::kDataLoss);
  EXPECT_NE(commit.status().message().find("layer 1, page 1"), std::string::npos)
      << commit.status();
  EXPECT_CODE(engine_->CommitPut(begin.put_id), absl::StatusCode::kNotFound);
  EXPECT_EQ(UsedBytes(), 0u);
  ASSERT_OK_AND_ASSIGN(MatchResult match, engine_->Match(ns_, blob.tokens));
  EXPECT_EQ(match.matched_pages, 0u);
}

TEST_F(NodeEnginePutTest, CommitNeedsAllBytesAndNoLiveTarget) {
  const BlobContent blob = MakeBlob(ns_, 2, 11);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  {
    ASSERT_OK_AND_ASSIGN(HeldSpan target, engine_->PutTarget(begin.put_id));
    std::memcpy(target.data(), blob.bytes.data(), 100);
    ASSERT_OK(engine_->PutReceived(begin.put_id, 0, 100));
    EXPECT_CODE(engine_->CommitPut(begin.put_id), absl::StatusCode::kFailedPrecondition);
    std::memcpy(target.data(), blob.bytes.data(), blob.bytes.size());
    ASSERT_OK(engine_->PutReceived(begin.put_id, 0, blob.bytes.size()));
    // All bytes are in, but the receive still holds the span.
    EXPECT_CODE(engine_->CommitPut(begin.put_id), absl::StatusCode::kFailedPrecondition);
  }
  ASSERT_OK(engine_->CommitPut(begin.put_id));
}

TEST_F(NodeEnginePutTest, PutReceivedChecksTheRange) {
  const BlobContent blob = MakeBlob(ns_, 2, 12);
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, BeginBlob(*engine_, ns_, std::nullopt, blob));
  EXPECT_CODE(engine_->PutReceived(begin.put_id, 0, blob.bytes.size() + 1),
              absl::StatusCode::kOutOfRange);
  EXPECT_CODE(engine_->PutReceived(begin.put_id, blob.bytes.size(), 1),
              absl::StatusCode::kOutOfRange);
  EXPECT_CODE(engine_->PutReceived(12345, 0, 1), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->PutTarget(12345), absl::StatusCode::kNotFound);
  EXPECT_CODE(engine_->CommitPut(12345), absl::StatusCode::kNotFound);
}

TEST_F(NodeEnginePutTest, AbandonedPutExpiresAndIsReaped) {
  const BlobContent blob = MakeBlob(ns_, 2, 13);
  ASSERT_OK_AND_ASSIGN(BeginPutReply a, BeginBlob(*engine_, ns_, std::nullopt, blob));
  ASSERT_OK_AND_ASSIGN(BeginPutReply b,
                       BeginBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, 2, 14)));
  clock_.Advance(absl::Seconds(40));
  ASSERT_OK(engine_->PutReceived(b.put_id, 0, 1));  // activity moves b's deadline
  clock_.Advance(absl::Seconds(30));                // a: 70 s idle, b: 30 s
  EXPECT_CODE(engine_->PutReceived(a.put_id, 0, 1), absl::StatusCode::kNotFound);
  ReapReply reaped = engine_->ReapExpired();
  EXPECT_EQ(reaped.puts_expired, 0u);  // a was aborted by the call that found it expired
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 1u);
  clock_.Advance(absl::Seconds(31));
  reaped = engine_->ReapExpired();
  EXPECT_EQ(reaped.puts_expired, 1u);
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
  EXPECT_EQ(UsedBytes(), 0u);
  EXPECT_CODE(engine_->CommitPut(b.put_id), absl::StatusCode::kNotFound);
}

TEST_F(NodeEnginePutTest, RedundantBlobIsDroppedAtCommit) {
  const BlobContent whole = MakeBlob(ns_, 4, 15);
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, whole));
  // The first two pages again, as a blob of their own: another key, all pages cached.
  BlobContent head = MakeBlob(ns_, 2, 16);
  head.tokens.assign(whole.tokens.begin(), whole.tokens.begin() + 8);
  ASSERT_OK_AND_ASSIGN(CommitPutReply commit, PutBlob(*engine_, ns_, std::nullopt, head));
  EXPECT_EQ(commit.indexed_pages, 0u);
  EXPECT_CODE(engine_->Stat(commit.key), absl::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Tiers().engine.blobs, 1u);
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->blobs, 1u);
}

TEST_F(NodeEnginePutTest, BranchOffTheMiddleOfABlob) {
  const BlobContent a = MakeBlob(ns_, 4, 20);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  // b continues the first 2 pages of a.
  const BlobContent b = MakeBlob(ns_, 2, 21);
  ASSERT_OK_AND_ASSIGN(BeginPutReply bb, BeginBlob(*engine_, ns_, BlobParent{ca.key, 2}, b));
  const auto a_head = absl::MakeConstSpan(a.tokens).first(8);
  const radix::PrefixHash h2 = radix::PrefixHashAt(h0_, a_head, 4);
  EXPECT_EQ(bb.key, radix::BlobKey{radix::PrefixHashAt(h2, b.tokens, 4)});
  ASSERT_OK(SendBlob(*engine_, bb.put_id, b));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, engine_->CommitPut(bb.put_id));
  EXPECT_EQ(cb.indexed_pages, 2u);

  const std::vector<radix::TokenId> seq_b = Concat(a_head, b.tokens);
  ASSERT_OK_AND_ASSIGN(MatchResult mb, engine_->Match(ns_, seq_b));
  EXPECT_EQ(mb.matched_pages, 4u);
  ASSERT_EQ(mb.segments.size(), 2u);
  EXPECT_EQ(mb.segments[0], (Segment{ca.key, 0, 2, 0, 4, Tier::kDram}));
  EXPECT_EQ(mb.segments[1], (Segment{cb.key, 0, 2, 2, 2, Tier::kDram}));
  ASSERT_OK_AND_ASSIGN(MatchResult ma, engine_->Match(ns_, a.tokens));
  EXPECT_EQ(ma.matched_pages, 4u);
  ASSERT_EQ(ma.segments.size(), 1u);  // a's split halves merge back into one segment
  EXPECT_EQ(ma.segments[0], (Segment{ca.key, 0, 4, 0, 4, Tier::kDram}));

  // c continues b at its end: its key chains over a's head, b and c.
  const BlobContent c = MakeBlob(ns_, 1, 22);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, BlobParent{cb.key, 4}, c));
  const std::vector<radix::TokenId> seq_c = Concat(seq_b, c.tokens);
  EXPECT_EQ(cc.key, radix::BlobKey{radix::PrefixHashAt(h0_, seq_c, 4)});
  ASSERT_OK_AND_ASSIGN(MatchResult mc, engine_->Match(ns_, seq_c));
  EXPECT_EQ(mc.matched_pages, 5u);
  ASSERT_EQ(mc.segments.size(), 3u);
  EXPECT_EQ(mc.segments[2], (Segment{cc.key, 0, 1, 4, 1, Tier::kDram}));

  // Parent pages must end inside or at the end of the parent: (a_p, b_p].
  EXPECT_CODE(BeginBlob(*engine_, ns_, BlobParent{cb.key, 2}, c),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(BeginBlob(*engine_, ns_, BlobParent{cb.key, 5}, c),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(BeginBlob(*engine_, ns_, BlobParent{ca.key, 0}, c),
              absl::StatusCode::kFailedPrecondition);
}

// A cluster cuts a sequence into segments; this node holds the one from page 4 on: its first
// blob names the segment start (h_4, 4) instead of a parent, and its key is the same h_b
// the whole sequence chains to.
TEST_F(NodeEnginePutTest, ASegmentStartRootsASubTrieThatAMatchFromItFinds) {
  const BlobContent head = MakeBlob(ns_, 4, 30);  // pages [0, 4): on another node
  const BlobContent s = MakeBlob(ns_, 2, 31);     // pages [4, 6)
  const BlobContent c = MakeBlob(ns_, 2, 32);     // pages [6, 8), continuing s
  const radix::PrefixHash h4 = radix::PrefixHashAt(h0_, head.tokens, 4);
  const SegmentStart start{h4, 4};
  PutRequest request = testing::PutRequestOf(std::nullopt, s);
  request.segment_start = start;
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, engine_->BeginPut(ns_, request));
  const std::vector<radix::TokenId> to_s = Concat(head.tokens, s.tokens);
  EXPECT_EQ(begin.key, radix::BlobKey{radix::PrefixHashAt(h0_, to_s, 4)});
  ASSERT_OK(SendBlob(*engine_, begin.put_id, s));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cs, engine_->CommitPut(begin.put_id));
  EXPECT_EQ(cs.indexed_pages, 2u);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, BlobParent{cs.key, 6}, c));
  EXPECT_EQ(cc.key, radix::BlobKey{radix::PrefixHashAt(h0_, Concat(to_s, c.tokens), 4)});

  // From the segment start: pages counted from the query's first page (page 4).
  const std::vector<radix::TokenId> tail = Concat(s.tokens, c.tokens);
  ASSERT_OK_AND_ASSIGN(MatchResult m, engine_->Match(ns_, tail, LookupPhase::kUnspecified,
                                                     AccessScope::All(), start));
  EXPECT_EQ(m.matched_pages, 4u);
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[0], (Segment{cs.key, 0, 2, 0, 2, Tier::kDram}));
  EXPECT_EQ(m.segments[1], (Segment{cc.key, 0, 2, 2, 2, Tier::kDram}));
  // Not from page 0 (this node never had pages [0, 4)), nor from another start.
  ASSERT_OK_AND_ASSIGN(m, engine_->Match(ns_, Concat(head.tokens, tail)));
  EXPECT_EQ(m.matched_pages, 0u);
  ASSERT_OK_AND_ASSIGN(m, engine_->Match(ns_, tail, LookupPhase::kUnspecified, AccessScope::All(),
                                         SegmentStart{h0_, 4}));
  EXPECT_EQ(m.matched_pages, 0u);
  // The same blob put again is a duplicate.
  ASSERT_OK_AND_ASSIGN(begin, engine_->BeginPut(ns_, request));
  EXPECT_TRUE(begin.exists);

  // A segment start excludes a parent, and page 0 starts no segment.
  PutRequest both = request;
  both.parent = BlobParent{cs.key, 6};
  EXPECT_CODE(engine_->BeginPut(ns_, both), absl::StatusCode::kInvalidArgument);
  PutRequest at_zero = request;
  at_zero.segment_start = SegmentStart{h0_, 0};
  EXPECT_CODE(engine_->BeginPut(ns_, at_zero), absl::StatusCode::kInvalidArgument);

  // Deleting the segment's first blob takes its child with it (one sub-trie).
  ASSERT_OK_AND_ASSIGN(DeleteReply deleted, engine_->Delete(cs.key));
  EXPECT_EQ(deleted.pages_removed, 4u);
  EXPECT_EQ(deleted.blobs_unlinked, 2u);
  ASSERT_OK_AND_ASSIGN(
      m, engine_->Match(ns_, tail, LookupPhase::kUnspecified, AccessScope::All(), start));
  EXPECT_EQ(m.matched_pages, 0u);
}

// A TEXT put (a cluster's replica of token text): indexed at once without bytes; a put of
// the same bytes refills it, other bytes are refused; a child may continue it.
TEST_F(NodeEnginePutTest, ATextPutIndexesTheBlobAsTextUntilAPutRefillsIt) {
  NodeEngineOptions options = SmallOptions(&clock_);
  options.text_bytes = 1 << 20;
  engine_ = NodeEngine::Create(options).value();
  const BlobContent head = MakeBlob(ns_, 4, 50);
  const BlobContent s = MakeBlob(ns_, 2, 51);  // pages [4, 6): a segment's first blob
  const BlobContent c = MakeBlob(ns_, 1, 52);  // page 6, continuing s
  const SegmentStart start{radix::PrefixHashAt(h0_, head.tokens, 4), 4};
  PutRequest request = testing::PutRequestOf(std::nullopt, s);
  request.segment_start = start;
  const uint64_t used = UsedBytes();
  ASSERT_OK_AND_ASSIGN(BeginPutReply text, engine_->PutText(ns_, request));
  EXPECT_FALSE(text.exists);
  EXPECT_EQ(text.put_id, 0u);
  EXPECT_EQ(text.indexed_pages, 2u);
  EXPECT_EQ(text.key, radix::BlobKey{radix::PrefixHashAt(h0_, Concat(head.tokens, s.tokens), 4)});
  EXPECT_EQ(UsedBytes(), used);  // no DRAM taken
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(text.key));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText});
  EXPECT_EQ(engine_->Tiers().text.blobs, 1u);
  // A TEXT child continues it; Match from the segment start sees both as TEXT.
  PutRequest child = testing::PutRequestOf(BlobParent{text.key, 6}, c);
  ASSERT_OK_AND_ASSIGN(BeginPutReply text_child, engine_->PutText(ns_, child));
  EXPECT_EQ(text_child.indexed_pages, 1u);
  const std::vector<radix::TokenId> tail = Concat(s.tokens, c.tokens);
  ASSERT_OK_AND_ASSIGN(MatchResult m, engine_->Match(ns_, tail, LookupPhase::kUnspecified,
                                                     AccessScope::All(), start));
  EXPECT_EQ(m.matched_pages, 3u);
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[0].tier, Tier::kText);
  EXPECT_EQ(m.segments[1].tier, Tier::kText);
  // Again: exists, nothing added.
  ASSERT_OK_AND_ASSIGN(BeginPutReply again, engine_->PutText(ns_, request));
  EXPECT_TRUE(again.exists);
  EXPECT_EQ(engine_->Tiers().text.blobs, 2u);

  // Other bytes under the key are refused; the blob stays TEXT.
  BlobContent other = MakeBlob(ns_, 2, 99);
  other.tokens = s.tokens;
  PutRequest wrong_request = testing::PutRequestOf(std::nullopt, other);
  wrong_request.segment_start = start;
  ASSERT_OK_AND_ASSIGN(BeginPutReply wrong, engine_->BeginPut(ns_, wrong_request));
  ASSERT_OK(SendBlob(*engine_, wrong.put_id, other));
  EXPECT_CODE(engine_->CommitPut(wrong.put_id), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(info, engine_->Stat(text.key));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText});
  // The real bytes refill it: readable, and a TEXT put of it now exists.
  ASSERT_OK_AND_ASSIGN(BeginPutReply fill, engine_->BeginPut(ns_, request));
  ASSERT_FALSE(fill.exists);
  ASSERT_OK(SendBlob(*engine_, fill.put_id, s));
  ASSERT_OK_AND_ASSIGN(CommitPutReply filled, engine_->CommitPut(fill.put_id));
  EXPECT_EQ(filled.key, text.key);
  ASSERT_OK_AND_ASSIGN(info, engine_->Stat(text.key));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kDram});
  ASSERT_OK_AND_ASSIGN(again, engine_->PutText(ns_, request));
  EXPECT_TRUE(again.exists);

  // A TEXT put is checked as a put: a wrong size, an unknown parent, draining.
  PutRequest bad = child;
  bad.bytes += 1;
  EXPECT_CODE(engine_->PutText(ns_, bad), absl::StatusCode::kInvalidArgument);
  bad = child;
  bad.parent = BlobParent{radix::BlobKey{radix::PrefixHash{1, 2}}, 6};
  EXPECT_CODE(engine_->PutText(ns_, bad), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(engine_->PutText(SmallNamespace("other"), child),
              absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(engine_->Drain(absl::Seconds(1)));
  EXPECT_CODE(engine_->PutText(ns_, request), absl::StatusCode::kUnavailable);
}

// Pages [first, first + n) of `blob` (pages pages, layer-major) as a blob of their own.
BlobContent PagesOf(const radix::Namespace& ns, const BlobContent& blob, uint32_t pages,
                    uint32_t first, uint32_t n) {
  const uint32_t page_tokens = ns.layout().page_tokens;
  const uint64_t chunk = ns.layout().BytesPerLayerPage();
  BlobContent out;
  out.tokens.assign(blob.tokens.begin() + size_t{first} * page_tokens,
                    blob.tokens.begin() + size_t{first + n} * page_tokens);
  for (uint32_t l = 0; l < ns.layout().num_layers; ++l) {
    const auto at = blob.bytes.begin() + static_cast<std::ptrdiff_t>((l * pages + first) * chunk);
    out.bytes.insert(out.bytes.end(), at, at + static_cast<std::ptrdiff_t>(n * chunk));
    const auto c = blob.checksums.begin() + l * pages + first;
    out.checksums.insert(out.checksums.end(), c, c + n);
  }
  return out;
}

// A cluster writes a segment's TEXT replicas from one start and may later rewrite the
// segment from another (after its owner was lost): a put of pages [4, 9) whose key is
// that of a TEXT blob of pages [6, 9) refills it, and its TEXT parent [4, 6), with the
// right bytes; one of pages [7, 9) cannot refill [6, 9) and says so before any byte.
TEST_F(NodeEnginePutTest, AWiderPutRefillsTheTextBlobsItSpans) {
  NodeEngineOptions options = SmallOptions(&clock_);
  options.text_bytes = 1 << 20;
  engine_ = NodeEngine::Create(options).value();
  const BlobContent head = MakeBlob(ns_, 4, 70);  // pages [0, 4): on another node
  const BlobContent wide = MakeBlob(ns_, 5, 71);  // pages [4, 9)
  const BlobContent s = PagesOf(ns_, wide, 5, 0, 2);
  const BlobContent c = PagesOf(ns_, wide, 5, 2, 3);
  const SegmentStart start{radix::PrefixHashAt(h0_, head.tokens, 4), 4};
  PutRequest text_s = testing::PutRequestOf(std::nullopt, s);
  text_s.segment_start = start;
  ASSERT_OK_AND_ASSIGN(BeginPutReply ts, engine_->PutText(ns_, text_s));
  ASSERT_OK_AND_ASSIGN(BeginPutReply tc,
                       engine_->PutText(ns_, testing::PutRequestOf(BlobParent{ts.key, 6}, c)));
  ASSERT_EQ(engine_->Tiers().text.blobs, 2u);

  // Pages [7, 9), from c's page 7: the key of c, fewer pages. Refused at BeginPut.
  const BlobContent tail = PagesOf(ns_, wide, 5, 3, 2);
  absl::StatusOr<BeginPutReply> narrow =
      engine_->BeginPut(ns_, testing::PutRequestOf(BlobParent{tc.key, 7}, tail));
  EXPECT_CODE(narrow, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(narrow.status().message(), "write from page 6")) << narrow.status();

  // Other bytes over c's pages: refused, both stay TEXT.
  BlobContent other = MakeBlob(ns_, 5, 72);
  other.tokens = wide.tokens;
  PutRequest wrong = testing::PutRequestOf(std::nullopt, other);
  wrong.segment_start = start;
  ASSERT_OK_AND_ASSIGN(BeginPutReply w, engine_->BeginPut(ns_, wrong));
  EXPECT_EQ(w.key, tc.key);
  ASSERT_OK(SendBlob(*engine_, w.put_id, other));
  EXPECT_CODE(engine_->CommitPut(w.put_id), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(BlobInfo info, engine_->Stat(tc.key));
  EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kText});

  // The wide put: both refilled, each with its own pages' bytes.
  PutRequest refill = testing::PutRequestOf(std::nullopt, wide);
  refill.segment_start = start;
  ASSERT_OK_AND_ASSIGN(BeginPutReply begin, engine_->BeginPut(ns_, refill));
  ASSERT_FALSE(begin.exists);
  ASSERT_OK(SendBlob(*engine_, begin.put_id, wide));
  ASSERT_OK_AND_ASSIGN(CommitPutReply committed, engine_->CommitPut(begin.put_id));
  EXPECT_EQ(committed.key, tc.key);
  EXPECT_EQ(committed.indexed_pages, 3u);
  EXPECT_EQ(engine_->Tiers().text.blobs, 0u);
  for (const auto& [key, blob, pages] : {std::tuple{ts.key, &s, 2u}, std::tuple{tc.key, &c, 3u}}) {
    ASSERT_OK_AND_ASSIGN(info, engine_->Stat(key));
    EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kDram});
    const ReadRange range = WholeBlob(key, pages);
    ASSERT_OK_AND_ASSIGN(ReadReply read, engine_->Read(ns_, {&range, 1}));
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got,
                         testing::ReadBytes(*engine_, read.lease_id, key, 0, blob->bytes.size()));
    EXPECT_EQ(got, blob->bytes);
  }
  // Only the two extents stay: the put's own is freed.
  auto granules = [](uint64_t bytes) { return (bytes + 4095) / 4096 * 4096; };
  EXPECT_EQ(UsedBytes(), granules(s.bytes.size()) + granules(c.bytes.size()));
}

// No TEXT tier (SmallOptions): a dropped blob leaves the index, unless its pages are
// pinned (here by a pending put's prefix); then it stays as TEXT, and must go as soon as
// nothing keeps it, not linger until some later drop.
class TextKeptByAPendingPutTest : public NodeEnginePutTest {
 protected:
  // Commits p, begins c continuing it, and drops p's bytes while c is pending: p is TEXT.
  void SetUp() override {
    NodeEnginePutTest::SetUp();
    p_ = PutBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, 2, 40)).value();
    begin_ = BeginBlob(*engine_, ns_, BlobParent{p_.key, 2}, c_).value();
    ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
    EXPECT_EQ(evicted.blobs_dropped, 1u);
    ASSERT_OK_AND_ASSIGN(BlobInfo kept, engine_->Stat(p_.key));
    EXPECT_EQ(kept.tiers, std::vector<Tier>{Tier::kText});
  }
  void ExpectEmpty() {
    EXPECT_CODE(engine_->Stat(p_.key), absl::StatusCode::kNotFound);
    const NodeTiers tiers = engine_->Tiers();
    EXPECT_EQ(tiers.engine.blobs, 0u);
    EXPECT_EQ(tiers.index.pages, 0u);
    EXPECT_EQ(tiers.text.blobs, 0u);
  }

  const BlobContent c_ = MakeBlob(ns_, 1, 41);
  CommitPutReply p_;
  BeginPutReply begin_;
};

TEST_F(TextKeptByAPendingPutTest, GoesWhenThePutIsAborted) {
  // (An expired put and one that commits nothing end the same way.)
  ASSERT_OK(engine_->AbortPut(begin_.put_id));
  ExpectEmpty();
}

TEST_F(TextKeptByAPendingPutTest, StaysAsTheParentOfTheCommittedPutAndGoesWithIt) {
  ASSERT_OK(SendBlob(*engine_, begin_.put_id, c_));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, engine_->CommitPut(begin_.put_id));
  ASSERT_OK_AND_ASSIGN(BlobInfo parent, engine_->Stat(p_.key));
  EXPECT_EQ(parent.tiers, std::vector<Tier>{Tier::kText});
  ASSERT_OK(engine_->Delete(cc.key));
  ExpectEmpty();
}

TEST_F(NodeEnginePutTest, EvictionNeverDropsAContinuedParentOrAPinnedPath) {
  // z caches pages [0, 4); a repeats them and adds [4, 6), so only a's last two pages
  // are a's own nodes; b branches off a at page 3, under z's node.
  const BlobContent z = MakeBlob(ns_, 4, 30);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cz, PutBlob(*engine_, ns_, std::nullopt, z));
  BlobContent a = MakeBlob(ns_, 6, 31);
  std::copy(z.tokens.begin(), z.tokens.end(), a.tokens.begin());
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  EXPECT_EQ(ca.indexed_pages, 2u);
  const BlobContent b = MakeBlob(ns_, 2, 32);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, PutBlob(*engine_, ns_, BlobParent{ca.key, 3}, b));
  ASSERT_OK(engine_->Pin(cb.key));
  // b is pinned, z holds b's pinned path, and a is continued by b: nothing can go.
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.blobs_dropped, 0u);
  EXPECT_EQ(evicted.pages_evicted, 0u);
  for (const auto& key : {cz.key, ca.key, cb.key}) EXPECT_OK(engine_->Stat(key));
  // A continuation of b still finds its whole prefix.
  const BlobContent c = MakeBlob(ns_, 1, 33);
  ASSERT_OK_AND_ASSIGN(CommitPutReply cc, PutBlob(*engine_, ns_, BlobParent{cb.key, 5}, c));
  std::vector<radix::TokenId> seq(a.tokens.begin(), a.tokens.begin() + 12);
  seq.insert(seq.end(), b.tokens.begin(), b.tokens.end());
  seq.insert(seq.end(), c.tokens.begin(), c.tokens.end());
  EXPECT_EQ(cc.key, radix::BlobKey{radix::PrefixHashAt(h0_, seq, 4)});
  ASSERT_OK_AND_ASSIGN(MatchResult m, engine_->Match(ns_, seq));
  EXPECT_EQ(m.matched_pages, 6u);
  // Unpinned, everything can go, leaves first.
  ASSERT_OK(engine_->Unpin(cb.key));
  ASSERT_OK_AND_ASSIGN(evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_GE(evicted.blobs_dropped, 1u);  // z's removal takes the pages below it too
  EXPECT_EQ(engine_->Tiers().engine.blobs, 0u);
  EXPECT_EQ(engine_->Tiers().engine.token_only_blobs, 0u);
  EXPECT_EQ(engine_->Tiers().Find(Tier::kDram)->used_bytes, 0u);
}

TEST_F(NodeEnginePutTest, PendingPutPinsItsPrefix) {
  const BlobContent a = MakeBlob(ns_, 2, 40);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  const BlobContent b = MakeBlob(ns_, 1, 41);
  ASSERT_OK_AND_ASSIGN(BeginPutReply bb, BeginBlob(*engine_, ns_, BlobParent{ca.key, 2}, b));
  ASSERT_OK_AND_ASSIGN(EvictReply evicted, engine_->Evict(Tier::kDram, 1 << 30));
  EXPECT_EQ(evicted.pages_evicted, 0u);
  EXPECT_CODE(engine_->Delete(ca.key), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(SendBlob(*engine_, bb.put_id, b));
  ASSERT_OK_AND_ASSIGN(CommitPutReply cb, engine_->CommitPut(bb.put_id));
  EXPECT_EQ(cb.indexed_pages, 1u);
  ASSERT_OK(engine_->Delete(ca.key));  // the pin went with the put
  EXPECT_EQ(engine_->Tiers().engine.blobs, 0u);
}

TEST_F(NodeEnginePutTest, DrainingRefusesPuts) {
  ASSERT_OK(engine_->Drain(absl::ZeroDuration()));
  EXPECT_TRUE(engine_->draining());
  EXPECT_CODE(BeginBlob(*engine_, ns_, std::nullopt, MakeBlob(ns_, 1, 50)),
              absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST(NodeEngineOptionsTest, LeaseTtlDefaultsAndClamps) {
  NodeEngineOptions options;
  options.default_lease_ttl = absl::Seconds(30);
  options.max_lease_ttl = absl::Minutes(10);
  EXPECT_TRUE(options.Validate().ok());
  EXPECT_EQ(options.LeaseTtl(absl::ZeroDuration()), absl::Seconds(30));
  EXPECT_EQ(options.LeaseTtl(absl::Seconds(5)), absl::Seconds(5));
  EXPECT_EQ(options.LeaseTtl(absl::Hours(1)), absl::Minutes(10));
  options.max_lease_ttl = absl::Seconds(10);  // below the default
  const absl::Status bad = options.Validate();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("max_lease_ttl"), absl::string_view::npos) << bad;
}

}  // namespace
}  // namespace strata::store::core
