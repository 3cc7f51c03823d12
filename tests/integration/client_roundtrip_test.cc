// libstrata against a real strata-node process, over TCP and over shared memory/CMA: bytes
// computed by the reference model go in with Write and come back byte-exact (every chunk
// checksum verified on arrival) through every read form.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/limits.h"
#include "strata/strata_c.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_roundtrip_test {

using strata::testing::NodeProcess;

namespace {

class ClientRoundTripTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {}

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(node_, StartNodeWithDataPlane(GetParam()));
    ASSERT_OK_AND_ASSIGN(client_,
                         Client::Connect(ClientOptionsFor(node_->grpc_address(), GetParam())));
  }

  // Writes pages [0, pages) of `tokens` as one blob from page 0.
  WriteResult WriteFromRoot(const Namespace& ns, const std::vector<TokenId>& tokens,
                            uint32_t pages) {
    const std::vector<std::byte> kv = ModelBytes(tokens, 0, pages);
    absl::StatusOr<WriteResult> written = client_->Write(
        ns, std::nullopt, absl::MakeConstSpan(tokens).first(pages * kPageTokens), Source(kv));
    EXPECT_OK(written);
    return written.value_or(WriteResult{});
  }

  static constexpr uint32_t kPageTokens = 16;
  const uint64_t page_bytes_ = ClientTestLayout().BytesPerPage();
  std::unique_ptr<NodeProcess> node_;
  std::unique_ptr<Client> client_;
};

TEST_P(ClientRoundTripTest, UsesTheTransportsAskedFor) {
  ASSERT_OK_AND_ASSIGN(const std::string lanes, client_->DescribeDataPlane());
  EXPECT_NE(lanes.find("stream: tcp "), std::string::npos) << lanes;
  const size_t data = lanes.find("data endpoint");
  if (GetParam() == kSameHost) {
    // UCX over TCP stands by; the blobs go through the same-host channel.
    EXPECT_EQ(data, std::string::npos) << lanes;
    const Namespace ns = ClientTestNamespace("lanes");
    const std::vector<TokenId> tokens = RandomTokens(9, 4 * kPageTokens);
    WriteFromRoot(ns, tokens, 4);
    ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens));
    std::vector<std::byte> buffer(4 * page_bytes_);
    ASSERT_OK(
        client_->Read(ns, match.segments, 4, MemoryDescriptor::Host(buffer.data(), buffer.size())));
    EXPECT_EQ(client_->stats().same_host_writes, 1u);
    EXPECT_EQ(client_->stats().same_host_reads, 1u);
    return;
  }
  if (GetParam() == "tcp") {
    EXPECT_EQ(data, std::string::npos) << lanes;
    return;
  }
  // Same host, shared memory allowed: messages on shared memory, rendezvous over CMA.
  ASSERT_NE(data, std::string::npos) << lanes;
  const std::string data_lanes = lanes.substr(data);
  EXPECT_TRUE(data_lanes.find("sysv/") != std::string::npos ||
              data_lanes.find("posix/") != std::string::npos)
      << data_lanes;
  EXPECT_NE(data_lanes.find("cma/"), std::string::npos) << data_lanes;
}

TEST_P(ClientRoundTripTest, WriteMatchReadIsByteExact) {
  const Namespace ns = ClientTestNamespace("roundtrip");
  const std::vector<TokenId> tokens = RandomTokens(1, 24 * kPageTokens + 5);
  const WriteResult written = WriteFromRoot(ns, tokens, 24);
  EXPECT_FALSE(written.existed);
  EXPECT_EQ(written.indexed_pages, 24u);
  EXPECT_EQ(client_->stats().bytes_written, 24 * page_bytes_);

  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  EXPECT_EQ(match.matched_pages, 24u);  // the trailing 5 tokens are not a page
  ASSERT_EQ(match.segments.size(), 1u);
  EXPECT_EQ(match.segments[0].blob, written.key);

  std::vector<std::byte> kv(24 * page_bytes_, std::byte{0xEE});
  ASSERT_OK(client_->Read(ns, match.segments, match.matched_pages, Host(kv)));
  EXPECT_TRUE(kv == ModelBytes(tokens, 0, 24));
  EXPECT_EQ(client_->stats().bytes_read, 24 * page_bytes_);
  EXPECT_EQ(client_->stats().checksum_failures, 0u);

  // The node's record: the blob checksum is XXH3 over the chunk checksums we sent.
  ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(written.key, /*include_tokens=*/true));
  EXPECT_EQ(info.pages, 24u);
  EXPECT_EQ(info.bytes, 24 * page_bytes_);
  EXPECT_EQ(info.tokens, std::vector<TokenId>(tokens.begin(), tokens.begin() + 24 * 16));
  EXPECT_EQ(info.tenant, "roundtrip");
  EXPECT_EQ(info.layout, ClientTestLayout());
}

TEST_P(ClientRoundTripTest, PrefixReadsAndPageRanges) {
  const Namespace ns = ClientTestNamespace("prefix");
  const std::vector<TokenId> tokens = RandomTokens(2, 20 * kPageTokens);
  const WriteResult written = WriteFromRoot(ns, tokens, 20);

  // A query that shares only 7 pages, then diverges.
  std::vector<TokenId> query = tokens;
  query[7 * kPageTokens + 3] += 1;
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, query));
  EXPECT_EQ(match.matched_pages, 7u);
  std::vector<std::byte> prefix(7 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 7, Host(prefix)));
  EXPECT_TRUE(prefix == ModelBytes(tokens, 0, 7));

  // A shorter prefix of the same match, and middle pages [5, 12) as a range.
  std::vector<std::byte> three(3 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 3, Host(three)));
  EXPECT_TRUE(three == ModelBytes(tokens, 0, 3));
  std::vector<std::byte> middle(7 * page_bytes_);
  const std::vector<ReadRange> ranges = {{written.key, 5, 7}};
  const std::vector<MemoryDescriptor> dests = {Host(middle)};
  ASSERT_OK(client_->Read(ns, ranges, dests));
  EXPECT_TRUE(middle == ModelBytes(tokens, 5, 7));

  // Past the blob's end.
  std::vector<std::byte> past(2 * page_bytes_);
  const std::vector<ReadRange> bad = {{written.key, 19, 2}};
  const std::vector<MemoryDescriptor> bad_dest = {Host(past)};
  EXPECT_CODE(client_->Read(ns, bad, bad_dest), absl::StatusCode::kOutOfRange);
}

TEST_P(ClientRoundTripTest, ChainedBlobsReadBackAsOnePrefix) {
  const Namespace ns = ClientTestNamespace("chain");
  const std::vector<TokenId> tokens = RandomTokens(3, 30 * kPageTokens);
  const WriteResult first = WriteFromRoot(ns, tokens, 12);
  // Pages [12, 30) continue the first blob.
  const std::vector<std::byte> tail = ModelBytes(tokens, 12, 18);
  ASSERT_OK_AND_ASSIGN(WriteResult second, client_->Write(ns, Parent{first.key, 12},
                                                          absl::MakeConstSpan(tokens).subspan(
                                                              12 * kPageTokens, 18 * kPageTokens),
                                                          Source(tail)));
  EXPECT_FALSE(second.existed);

  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  EXPECT_EQ(match.matched_pages, 30u);
  ASSERT_EQ(match.segments.size(), 2u);
  EXPECT_EQ(match.segments[1].blob, second.key);
  EXPECT_EQ(match.segments[1].seq_page_begin, 12u);
  std::vector<std::byte> kv(30 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 30, Host(kv)));
  EXPECT_TRUE(kv == ModelBytes(tokens, 0, 30));
  // Across the boundary: pages [0, 20).
  std::vector<std::byte> twenty(20 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 20, Host(twenty)));
  EXPECT_TRUE(twenty == ModelBytes(tokens, 0, 20));
}

TEST_P(ClientRoundTripTest, LayerWiseStreamingDeliversEachLayerInOrder) {
  const Namespace ns = ClientTestNamespace("layers");
  const std::vector<TokenId> tokens = RandomTokens(4, 16 * kPageTokens);
  const WriteResult first = WriteFromRoot(ns, tokens, 6);
  const std::vector<std::byte> tail = ModelBytes(tokens, 6, 10);
  ASSERT_OK(client_->Write(ns, Parent{first.key, 6},
                           absl::MakeConstSpan(tokens).subspan(6 * kPageTokens), Source(tail)));
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 16u);
  ASSERT_EQ(match.segments.size(), 2u);

  const std::vector<std::byte> expected = ModelBytes(tokens, 0, 16);
  const uint64_t layer_bytes = 16 * ClientTestLayout().BytesPerLayerPage();
  std::vector<std::byte> kv(16 * page_bytes_, std::byte{0});
  std::vector<uint32_t> seen;
  ASSERT_OK(client_->ReadLayers(ns, match.segments, 16, Host(kv), [&](uint32_t layer) {
    seen.push_back(layer);
    // The layer is complete (both segments) when it is announced.
    EXPECT_EQ(std::memcmp(kv.data() + layer * layer_bytes, expected.data() + layer * layer_bytes,
                          layer_bytes),
              0)
        << "layer " << layer;
    return absl::OkStatus();
  }));
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(kv == expected);

  // A callback's error stops the read and is returned.
  int calls = 0;
  EXPECT_CODE(client_->ReadLayers(ns, match.segments, 16, Host(kv),
                                  [&](uint32_t layer) {
                                    ++calls;
                                    return layer == 1 ? absl::AbortedError("enough")
                                                      : absl::OkStatus();
                                  }),
              absl::StatusCode::kAborted);
  EXPECT_EQ(calls, 2);
}

TEST_P(ClientRoundTripTest, DuplicateWriteTransfersNothing) {
  const Namespace ns = ClientTestNamespace("dedup");
  const std::vector<TokenId> tokens = RandomTokens(5, 8 * kPageTokens);
  const WriteResult first = WriteFromRoot(ns, tokens, 8);
  const ClientStats before = client_->stats();
  ASSERT_OK_AND_ASSIGN(NodeTiers tiers_before, client_->Tiers());

  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 8);
  ASSERT_OK_AND_ASSIGN(WriteResult again, client_->Write(ns, std::nullopt, tokens, Source(kv)));
  EXPECT_TRUE(again.existed);
  EXPECT_EQ(again.key, first.key);
  const ClientStats after = client_->stats();
  EXPECT_EQ(after.bytes_written, before.bytes_written);  // no PUT_DATA left this client
  EXPECT_EQ(after.writes_existing, before.writes_existing + 1);
  ASSERT_OK_AND_ASSIGN(NodeTiers tiers_after, client_->Tiers());
  EXPECT_EQ(tiers_after.engine.blobs, tiers_before.engine.blobs);
  ASSERT_FALSE(tiers_after.tiers.empty());
  EXPECT_EQ(tiers_after.tiers[0].used_bytes, tiers_before.tiers[0].used_bytes);
}

// Issue 12, item 7: a write is one PUT on the data plane — no RPC once the client knows the
// data plane — and stays two-phase: with no bytes sent before the node's grant (window 0)
// a write of an existing key sends none, and a fresh one still commits whole.
TEST_P(ClientRoundTripTest, AWriteIsOneDataPlaneRoundTripWithoutRpcs) {
  const Namespace ns = ClientTestNamespace("one-trip");
  const std::vector<TokenId> tokens = RandomTokens(21, 8 * kPageTokens);
  WriteFromRoot(ns, tokens, 4);  // connects the data plane (Health names it)
  const ClientStats before = client_->stats();
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 8);
  ASSERT_OK_AND_ASSIGN(WriteResult written, client_->Write(ns, std::nullopt, tokens, Source(kv)));
  EXPECT_FALSE(written.existed);
  EXPECT_EQ(written.indexed_pages, 4u);  // pages 0..3 were cached by the first write
  EXPECT_EQ(client_->stats().rpcs, before.rpcs);

  ClientOptions options = ClientOptionsFor(node_->grpc_address(), GetParam());
  options.put_window_bytes = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> waits, Client::Connect(options));
  ASSERT_OK_AND_ASSIGN(WriteResult again, waits->Write(ns, std::nullopt, tokens, Source(kv)));
  EXPECT_TRUE(again.existed);
  EXPECT_EQ(again.key, written.key);
  const std::vector<TokenId> fresh = RandomTokens(22, 2 * kPageTokens);
  const std::vector<std::byte> fresh_kv = ModelBytes(fresh, 0, 2);
  ASSERT_OK_AND_ASSIGN(WriteResult committed,
                       waits->Write(ns, std::nullopt, fresh, Source(fresh_kv)));
  EXPECT_FALSE(committed.existed);
  EXPECT_EQ(committed.indexed_pages, 2u);
  ASSERT_OK_AND_ASSIGN(MatchResult match, waits->Match(ns, fresh));
  ASSERT_EQ(match.matched_pages, 2u);
  std::vector<std::byte> back(fresh_kv.size());
  ASSERT_OK(waits->Read(ns, match.segments, 2, Host(back)));
  EXPECT_TRUE(back == fresh_kv);
  ASSERT_OK_AND_ASSIGN(NodeTiers tiers, client_->Tiers());
  EXPECT_EQ(tiers.engine.pending_puts, 0u);
}

TEST_P(ClientRoundTripTest, EvictedOrDeletedBetweenMatchAndReadIsAMiss) {
  const Namespace ns = ClientTestNamespace("miss");
  const std::vector<TokenId> a = RandomTokens(6, 8 * kPageTokens);
  const std::vector<TokenId> b = RandomTokens(7, 8 * kPageTokens);
  const WriteResult blob_a = WriteFromRoot(ns, a, 8);
  WriteFromRoot(ns, b, 8);
  ASSERT_OK_AND_ASSIGN(MatchResult match_a, client_->Match(ns, a));
  ASSERT_OK_AND_ASSIGN(MatchResult match_b, client_->Match(ns, b));
  ASSERT_EQ(match_a.matched_pages, 8u);
  ASSERT_EQ(match_b.matched_pages, 8u);

  // Deleted after Match: NOT_FOUND, and the destination is not claimed to hold anything.
  ASSERT_OK(client_->Delete(blob_a.key));
  std::vector<std::byte> kv(8 * page_bytes_);
  EXPECT_CODE(client_->Read(ns, match_a.segments, 8, Host(kv)), absl::StatusCode::kNotFound);

  // Evicted after Match (no SSD tier: the bytes are dropped, the tokens kept): NOT_FOUND
  // too, and a new Match finds the pages as TEXT, with nothing readable.
  ASSERT_OK_AND_ASSIGN(EvictResult evicted, client_->Evict(Tier::kDram, uint64_t{1} << 40));
  EXPECT_GE(evicted.bytes_freed, 8 * page_bytes_);
  EXPECT_CODE(client_->Read(ns, match_b.segments, 8, Host(kv)), absl::StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(MatchResult again, client_->Match(ns, b));
  EXPECT_EQ(again.matched_pages, 8u);
  EXPECT_EQ(again.ReadablePages(), 0u);
  ASSERT_EQ(again.segments.size(), 1u);
  EXPECT_EQ(again.segments[0].tier, Tier::kText);
  EXPECT_EQ(client_->stats().checksum_failures, 0u);
}

TEST_P(ClientRoundTripTest, BatchAndAsyncForms) {
  const Namespace ns = ClientTestNamespace("batch");
  const std::vector<TokenId> tokens = RandomTokens(8, 12 * kPageTokens);
  const std::vector<std::byte> head = ModelBytes(tokens, 0, 4);
  const std::vector<std::byte> middle = ModelBytes(tokens, 4, 4);
  const std::vector<std::byte> tail = ModelBytes(tokens, 8, 4);
  auto span = absl::MakeConstSpan(tokens);
  // A chain of three blobs in one batch: items 1 and 2 continue the item before them.
  const std::vector<WriteItem> items = {
      {std::nullopt, std::nullopt, span.subspan(0, 64), Source(head)},
      {std::nullopt, size_t{0}, span.subspan(64, 64), Source(middle)},
      {std::nullopt, size_t{1}, span.subspan(128, 64), Source(tail)}};
  std::vector<absl::StatusOr<WriteResult>> written = client_->WriteBatch(ns, items);
  ASSERT_EQ(written.size(), 3u);
  for (const auto& w : written) ASSERT_OK(w);
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  EXPECT_EQ(match.matched_pages, 12u);

  // ReadBatch: two good items and one blob that is not there.
  std::vector<std::byte> r0(4 * page_bytes_), r1(2 * page_bytes_), r2(1 * page_bytes_);
  const std::vector<ReadItem> reads = {{{written[0]->key, 0, 4}, Host(r0)},
                                       {{BlobKey{PrefixHash{0x1234, 0x5678}}, 0, 1}, Host(r2)},
                                       {{written[2]->key, 2, 2}, Host(r1)}};
  std::vector<absl::Status> statuses = client_->ReadBatch(ns, reads);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_OK(statuses[0]);
  EXPECT_CODE(statuses[1], absl::StatusCode::kNotFound);
  EXPECT_OK(statuses[2]);
  EXPECT_TRUE(r0 == head);
  EXPECT_TRUE(r1 == ModelBytes(tokens, 10, 2));

  // Async write of a branch and an async read of it.
  std::vector<TokenId> branch(tokens.begin(), tokens.begin() + 8 * kPageTokens);
  const std::vector<TokenId> extra = RandomTokens(9, 2 * kPageTokens);
  branch.insert(branch.end(), extra.begin(), extra.end());
  const std::vector<std::byte> branch_kv = ModelBytes(branch, 8, 2);
  absl::Notification wrote;
  absl::StatusOr<WriteResult> async_written;
  client_->WriteAsync(ns, Parent{written[1]->key, 8}, extra, Source(branch_kv), {},
                      [&](absl::StatusOr<WriteResult> r) {
                        async_written = std::move(r);
                        wrote.Notify();
                      });
  ASSERT_TRUE(wrote.WaitForNotificationWithTimeout(absl::Seconds(60)));
  ASSERT_OK(async_written);
  std::vector<std::byte> back(2 * page_bytes_);
  const std::vector<ReadRange> ranges = {{async_written->key, 0, 2}};
  const std::vector<MemoryDescriptor> dests = {Host(back)};
  absl::Notification read;
  absl::Status read_status = absl::UnknownError("not run");
  client_->ReadAsync(ns, ranges, dests, {}, [&](absl::Status s) {
    read_status = s;
    read.Notify();
  });
  ASSERT_TRUE(read.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_OK(read_status);
  EXPECT_TRUE(back == branch_kv);
}

// A read of more ranges than one READ may carry (proto::kMaxReadRanges) goes as several
// READs, reads_in_flight of them at a time, finished in order; a failure in one abandons the
// ones sent after it and leaves no lease on the node.
TEST_P(ClientRoundTripTest, ReadsLargerThanOneReadGoAsSeveralInFlight) {
  const Namespace ns = ClientTestNamespace("runs");
  const std::vector<TokenId> tokens = RandomTokens(12, 24 * kPageTokens);
  const WriteResult written = WriteFromRoot(ns, tokens, 24);
  std::vector<std::vector<std::byte>> model;  // each page alone, as one page's BlobLayout
  for (uint32_t p = 0; p < 24; ++p) model.push_back(ModelBytes(tokens, p, 1));
  // 2 * 4096 + 100 one-page ranges (pages cycling through the blob): three READs.
  constexpr size_t kRanges = 2 * proto::kMaxReadRanges + 100;
  std::vector<ReadRange> ranges;
  for (size_t i = 0; i < kRanges; ++i) ranges.push_back({written.key, uint32_t(i % 24), 1});
  std::vector<std::vector<std::byte>> pages(kRanges);
  std::vector<MemoryDescriptor> dests;
  for (auto& page : pages) {
    page.assign(page_bytes_, std::byte{0xEE});
    dests.push_back(Host(page));
  }
  auto expect_pages = [&] {
    for (size_t i = 0; i < kRanges; ++i) {
      ASSERT_TRUE(pages[i] == model[i % 24]) << "range " << i;
    }
  };
  for (const int in_flight : {1, 2, 4}) {
    SCOPED_TRACE(in_flight);
    ClientOptions options = ClientOptionsFor(node_->grpc_address(), GetParam());
    options.reads_in_flight = in_flight;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
    for (auto& page : pages) std::fill(page.begin(), page.end(), std::byte{0xEE});
    ASSERT_OK(client->Read(ns, ranges, dests));
    EXPECT_EQ(client->stats().reads, 3u);
    EXPECT_EQ(client->stats().bytes_read, kRanges * page_bytes_);
    EXPECT_EQ(client->stats().checksum_failures, 0u);
    expect_pages();
  }

  // A blob that is not there in the second READ: NOT_FOUND; the third, sent beside it, is
  // abandoned. The node ends every lease, and the connection serves the next read.
  std::vector<ReadRange> missing = ranges;
  missing[proto::kMaxReadRanges + 7].blob = BlobKey{PrefixHash{0x1234, 0x5678}};
  EXPECT_CODE(client_->Read(ns, missing, dests), absl::StatusCode::kNotFound);
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (;;) {
    ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(written.key));
    if (info.leases == 0) break;
    ASSERT_LT(absl::Now(), give_up) << info.leases << " leases left";
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_OK(client_->Read(ns, ranges, dests));
  expect_pages();
}

TEST_P(ClientRoundTripTest, RegisteredMemoryIsUsedForBothDirections) {
  const Namespace ns = ClientTestNamespace("registered");
  const std::vector<TokenId> tokens = RandomTokens(10, 6 * kPageTokens);
  // One registered buffer: the source in its first half, the destination in its second.
  std::vector<std::byte> buffer(12 * page_bytes_);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, 6);
  std::memcpy(buffer.data(), kv.data(), kv.size());
  ASSERT_OK(client_->RegisterMemory(MemoryDescriptor::Host(buffer.data(), buffer.size())));
  ASSERT_OK(client_->Write(ns, std::nullopt, tokens,
                           MemoryDescriptor::Host(buffer.data(), 6 * page_bytes_)));
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  ASSERT_OK(
      client_->Read(ns, match.segments, 6,
                    MemoryDescriptor::Host(buffer.data() + 6 * page_bytes_, 6 * page_bytes_)));
  EXPECT_EQ(std::memcmp(buffer.data() + 6 * page_bytes_, kv.data(), kv.size()), 0);
  ASSERT_OK(client_->UnregisterMemory(buffer.data()));
}

TEST_P(ClientRoundTripTest, CApiRoundTrip) {
  strata_options options;
  strata_options_init(&options);
  const std::string node = node_->grpc_address();
  options.node = node.c_str();
  const bool same_host = GetParam() == kSameHost;
  options.ucx_transports = same_host ? "tcp" : GetParam().c_str();
  options.same_host = same_host ? 1 : 0;
  options.timeout_ms = 30000;
  options.wait_for_node = 1;
  strata_client* c = nullptr;
  ASSERT_EQ(strata_connect(&options, &c), STRATA_OK) << strata_last_error_message();
  strata_namespace ns;
  ns.tenant = "capi";
  ns.model = "org/reference-4l";
  const KvLayout layout = ClientTestLayout();
  ns.layout = strata_kv_layout{layout.num_layers,  layout.num_kv_heads,
                               layout.head_dim,    static_cast<int>(layout.dtype),
                               layout.page_tokens, static_cast<int>(layout.format),
                               layout.tp_rank,     layout.tp_world};
  ASSERT_EQ(strata_bytes_per_page(&ns.layout), page_bytes_);
  const std::vector<TokenId> tokens = RandomTokens(11, 5 * kPageTokens);
  std::vector<std::byte> kv = ModelBytes(tokens, 0, 5);
  strata_memory source{kv.data(), kv.size(), STRATA_MEMORY_HOST, 0};
  strata_write_result written;
  ASSERT_EQ(strata_write(c, &ns, nullptr, tokens.data(), tokens.size(), &source, &written),
            STRATA_OK)
      << strata_last_error_message();
  EXPECT_EQ(written.existed, 0);
  strata_match_result* match = nullptr;
  ASSERT_EQ(strata_match(c, &ns, tokens.data(), tokens.size(), &match), STRATA_OK);
  ASSERT_EQ(match->matched_pages, 5u);
  ASSERT_EQ(match->num_segments, 1u);
  EXPECT_EQ(match->segments[0].blob.hi, written.key.hi);
  std::vector<std::byte> back(kv.size());
  strata_memory dest{back.data(), back.size(), STRATA_MEMORY_HOST, 0};
  ASSERT_EQ(strata_read_prefix(c, &ns, match, 5, &dest), STRATA_OK) << strata_last_error_message();
  EXPECT_TRUE(back == kv);
  std::vector<uint32_t> layers;
  std::fill(back.begin(), back.end(), std::byte{0});
  ASSERT_EQ(strata_read_layers(
                c, &ns, match, 5, &dest,
                [](void* user, uint32_t layer) {
                  static_cast<std::vector<uint32_t>*>(user)->push_back(layer);
                  return 0;
                },
                &layers),
            STRATA_OK)
      << strata_last_error_message();
  EXPECT_EQ(layers, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(back == kv);
  EXPECT_EQ(strata_read_layers(
                c, &ns, match, 5, &dest, [](void*, uint32_t layer) { return layer == 2 ? 7 : 0; },
                nullptr),
            STRATA_ABORTED);
  strata_read_range range{written.key, 1, 2};
  std::vector<std::byte> two(2 * page_bytes_);
  strata_memory two_dest{two.data(), two.size(), STRATA_MEMORY_HOST, 0};
  ASSERT_EQ(strata_read(c, &ns, &range, &two_dest, 1), STRATA_OK);
  EXPECT_TRUE(two == ModelBytes(tokens, 1, 2));
  strata_free_match_result(match);
  EXPECT_EQ(strata_pin(c, written.key), STRATA_OK);
  EXPECT_EQ(strata_delete(c, written.key), STRATA_FAILED_PRECONDITION);  // pinned
  EXPECT_EQ(strata_unpin(c, written.key), STRATA_OK);
  EXPECT_EQ(strata_delete(c, written.key), STRATA_OK);
  EXPECT_EQ(strata_read(c, &ns, &range, &two_dest, 1), STRATA_NOT_FOUND);
  strata_close(c);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientRoundTripTest,
                         ::testing::Values(std::string("tcp"), std::string("tcp,shm,cma"),
                                           std::string(kSameHost)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TransportTestName(info.param);
                         });

}  // namespace
}  // namespace strata::integration::client_roundtrip_test
