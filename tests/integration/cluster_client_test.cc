// ClusterClient end to end (issue 13, items 2 and 5): three real strata-node processes on
// loopback, a sequence striped over them by segment placement, written in pieces, matched in
// one parallel round and read back byte for byte from every node at once; then a node
// killed (-9) and one stopped (SIGSTOP, as a partition looks to a client): a lookup costs
// at most the node deadline and answers the prefix before the lost node's first segment.
// Membership from a real etcd in the last test.
#include "strata/cluster_client.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <signal.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/radix/prefix_hash.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/node_process.h"

namespace strata::integration::cluster_client_test {
namespace {

using strata::testing::EtcdProcess;
using strata::testing::NodeProcess;

constexpr uint32_t kSegmentPages = 4;
constexpr absl::Duration kNodeTimeout = absl::Milliseconds(300);

class ClusterClientTest : public ::testing::Test {
 protected:
  void StartNodes(int n, const std::vector<std::string>& extra_args = {}) {
    for (int i = 0; i < n; ++i) {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                           StartNodeWithDataPlane("tcp", uint64_t{64} << 20, extra_args));
      nodes_.push_back(std::move(node));
    }
  }

  ClusterClientOptions Options() const {
    ClusterClientOptions options;
    for (const auto& node : nodes_) options.nodes.push_back(node->grpc_address());
    options.node_options = ClientOptionsFor(nodes_.front()->grpc_address(), "tcp");
    options.segment_pages = kSegmentPages;
    options.node_timeout = kNodeTimeout;
    return options;
  }

  NodeProcess* NodeAt(const std::string& address) {
    for (const auto& node : nodes_) {
      if (node->grpc_address() == address) return node.get();
    }
    return nullptr;
  }

  uint32_t page_tokens() const { return ns_.layout().page_tokens; }

  const Namespace ns_ = ClientTestNamespace("cluster");
  std::vector<std::unique_ptr<NodeProcess>> nodes_;
};

TEST_F(ClusterClientTest, ASequenceStripedOverThreeNodesReadsBackByteForByte) {
  StartNodes(3);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(Options()));
  ASSERT_EQ(cluster->Nodes().size(), 3u);
  const uint32_t pages = 40;
  const std::vector<TokenId> tokens = RandomTokens(7, size_t{pages} * page_tokens());

  // Turn 1: pages [0, 22) in one call: six pieces (segments of 4 pages), over the owners.
  const std::vector<std::byte> first = ModelBytes(tokens, 0, 22);
  const absl::Span<const TokenId> to22 = absl::MakeConstSpan(tokens).first(22 * page_tokens());
  ASSERT_OK_AND_ASSIGN(ClusterWriteResult written, cluster->Write(ns_, to22, 0, Source(first)));
  ASSERT_EQ(written.pieces.size(), 6u);
  EXPECT_EQ(written.first_pages, (std::vector<uint32_t>{0, 4, 8, 12, 16, 20}));
  const std::set<std::string> owners(written.owners.begin(), written.owners.end());
  EXPECT_GE(owners.size(), 2u) << "six segments all on one of three nodes";
  for (size_t i = 0; i < written.pieces.size(); ++i) {
    EXPECT_FALSE(written.pieces[i].existed);
    EXPECT_EQ(written.owners[i], cluster->OwnerOf(ns_, tokens, written.first_pages[i]));
  }
  // Turn 2 continues inside segment 5 (pages [22, 24) after [20, 22)): the client finds the
  // blob holding page 21 on that owner itself. Turn 3 starts at a boundary.
  const std::vector<std::byte> second = ModelBytes(tokens, 22, 6);
  const absl::Span<const TokenId> to28 = absl::MakeConstSpan(tokens).first(28 * page_tokens());
  ASSERT_OK_AND_ASSIGN(written, cluster->Write(ns_, to28, 22, Source(second)));
  EXPECT_EQ(written.first_pages, (std::vector<uint32_t>{22, 24}));
  const std::vector<std::byte> third = ModelBytes(tokens, 28, 4);
  const absl::Span<const TokenId> to32 = absl::MakeConstSpan(tokens).first(32 * page_tokens());
  ASSERT_OK_AND_ASSIGN(written, cluster->Write(ns_, to32, 28, Source(third)));
  EXPECT_EQ(written.first_pages, (std::vector<uint32_t>{28}));

  // One round of lookups; pages [32, 40) were never written.
  ASSERT_OK_AND_ASSIGN(ClusterMatch match, cluster->Match(ns_, tokens));
  EXPECT_EQ(match.match.matched_pages, 32u);
  EXPECT_EQ(match.segments_asked, 10u);
  EXPECT_EQ(match.segments_unanswered, 0u);
  ASSERT_EQ(match.owners.size(), match.match.segments.size());
  uint32_t next = 0;
  for (size_t i = 0; i < match.match.segments.size(); ++i) {
    const Segment& seg = match.match.segments[i];
    EXPECT_EQ(seg.seq_page_begin, next);
    EXPECT_LE(seg.seq_page_begin / kSegmentPages,
              (seg.seq_page_begin + seg.page_count - 1) / kSegmentPages)
        << "a blob crosses a segment boundary";
    EXPECT_EQ(match.owners[i], cluster->OwnerOf(ns_, tokens, seg.seq_page_begin));
    next += seg.page_count;
  }
  EXPECT_EQ(next, 32u);

  // Every node's segments straight into their place in one destination.
  std::vector<std::byte> got(PagesBytes(ns_.layout(), 32), std::byte{0x5A});
  ASSERT_OK(cluster->Read(ns_, match, 32, Host(got)));
  EXPECT_TRUE(got == ModelBytes(tokens, 0, 32)) << "the striped read differs from the model";
  // A shorter read of the same match.
  std::vector<std::byte> head(PagesBytes(ns_.layout(), 13));
  ASSERT_OK(cluster->Read(ns_, match, 13, Host(head)));
  EXPECT_TRUE(head == ModelBytes(tokens, 0, 13));

  // No node holds the sequence from page 0 past its first segment on its own.
  for (const auto& node : nodes_) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> one,
                         Client::Connect(ClientOptionsFor(node->grpc_address(), "tcp")));
    absl::StatusOr<MatchResult> alone = one->Match(ns_, tokens);
    if (alone.ok()) {
      EXPECT_LE(alone->matched_pages, kSegmentPages);
    }
  }
  // Writing it all again transfers nothing.
  ASSERT_OK_AND_ASSIGN(written, cluster->Write(ns_, to22, 0, Source(first)));
  for (const WriteResult& piece : written.pieces) EXPECT_TRUE(piece.existed);
}

// The node side of a cluster lookup: blobs written from segment starts, found again by one
// MatchSegments call; a malformed query fails the call whole; stop_at_first_short ends the
// answers at the first segment that does not hit whole.
TEST_F(ClusterClientTest, OneNodeAnswersManySegmentQueriesInOneCall) {
  StartNodes(1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Connect(ClientOptionsFor(nodes_[0]->grpc_address(), "tcp")));
  const uint32_t pt = page_tokens();
  const std::vector<TokenId> tokens = RandomTokens(17, size_t{12} * pt);
  const auto span = absl::MakeConstSpan(tokens);
  const PrefixHash h0 = radix::NamespaceHash(ns_);
  const SegmentStart at4{radix::PrefixHashAt(h0, span.first(4 * pt), pt), 4};
  const SegmentStart at8{radix::PrefixHashAt(h0, span.first(8 * pt), pt), 8};
  // Segments [0, 4) and [4, 8) written; [8, 12) only its first two pages.
  const std::vector<std::byte> a = ModelBytes(tokens, 0, 4), b = ModelBytes(tokens, 4, 4),
                               c = ModelBytes(tokens, 8, 2);
  ASSERT_OK(client->Write(ns_, std::nullopt, span.first(4 * pt), Source(a)).status());
  ASSERT_OK_AND_ASSIGN(WriteResult wb,
                       client->Write(ns_, at4, span.subspan(4 * pt, 4 * pt), Source(b)));
  EXPECT_EQ(wb.key, BlobKey{radix::PrefixHashAt(h0, span.first(8 * pt), pt)});
  ASSERT_OK(client->Write(ns_, at8, span.subspan(8 * pt, 2 * pt), Source(c)).status());

  const std::vector<SegmentQuery> queries = {{std::nullopt, span.first(4 * pt)},
                                             {at8, span.subspan(8 * pt, 4 * pt)},
                                             {at4, span.subspan(4 * pt, 4 * pt)}};
  ASSERT_OK_AND_ASSIGN(std::vector<MatchResult> all,
                       client->MatchSegments(ns_, queries, LookupPhase::kUnspecified, false));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].matched_pages, 4u);
  EXPECT_EQ(all[1].matched_pages, 2u);
  EXPECT_EQ(all[2].matched_pages, 4u);
  ASSERT_EQ(all[2].segments.size(), 1u);
  EXPECT_EQ(all[2].segments[0].blob, wb.key);
  EXPECT_EQ(all[2].segments[0].seq_page_begin, 0u);  // counted from the query's first page
  ASSERT_OK_AND_ASSIGN(std::vector<MatchResult> stopped,
                       client->MatchSegments(ns_, queries, LookupPhase::kUnspecified, true));
  EXPECT_EQ(stopped.size(), 2u) << "the answers stop after the short one";
  // A query from a start that was never written matches nothing; a bad one fails the call.
  const std::vector<SegmentQuery> unknown = {{SegmentStart{h0, 4}, span.subspan(4 * pt, 4 * pt)}};
  ASSERT_OK_AND_ASSIGN(std::vector<MatchResult> none,
                       client->MatchSegments(ns_, unknown, LookupPhase::kUnspecified, false));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].matched_pages, 0u);
  const std::vector<SegmentQuery> bad = {{std::nullopt, span.first(4 * pt)},
                                         {SegmentStart{h0, 0}, span.first(4 * pt)}};
  EXPECT_CODE(client->MatchSegments(ns_, bad, LookupPhase::kUnspecified, false),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(client->MatchSegments(ns_, {}, LookupPhase::kUnspecified, false),
              absl::StatusCode::kInvalidArgument);
  // A segment's first blob reads back like any blob.
  std::vector<std::byte> got(b.size());
  ASSERT_OK(client->Read(ns_, all[2].segments, 4, Host(got)));
  EXPECT_TRUE(got == b);
}

TEST_F(ClusterClientTest, ALostNodeCostsItsDeadlineAndOnlyTheSegmentsFromItsFirstOn) {
  StartNodes(3);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(Options()));
  const uint32_t pages = 48;
  const std::vector<TokenId> tokens = RandomTokens(11, size_t{pages} * page_tokens());
  const std::vector<std::byte> bytes = ModelBytes(tokens, 0, pages);
  ASSERT_OK(cluster->Write(ns_, tokens, 0, Source(bytes)).status());
  ASSERT_OK_AND_ASSIGN(ClusterMatch all, cluster->Match(ns_, tokens));
  ASSERT_EQ(all.match.matched_pages, pages);

  // The node owning the earliest segment after segment 0 that segment 0's owner does not own.
  const std::string first_owner = cluster->OwnerOf(ns_, tokens, 0);
  uint32_t lost_from = 0;
  std::string lost;
  for (uint32_t p = kSegmentPages; p < pages; p += kSegmentPages) {
    if (cluster->OwnerOf(ns_, tokens, p) != first_owner) {
      lost_from = p;
      lost = cluster->OwnerOf(ns_, tokens, p);
      break;
    }
  }
  ASSERT_FALSE(lost.empty()) << "every segment on one node";
  NodeProcess* victim = NodeAt(lost);
  ASSERT_NE(victim, nullptr);

  // Stopped (a partition, as the client sees it): its Match never answers.
  victim->Signal(SIGSTOP);
  absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(ClusterMatch stopped, cluster->Match(ns_, tokens));
  const absl::Duration stopped_took = absl::Now() - start;
  EXPECT_EQ(stopped.match.matched_pages, lost_from);
  EXPECT_GE(stopped.segments_unanswered, 1u);
  EXPECT_LT(stopped_took, kNodeTimeout + absl::Seconds(1)) << "waited past the node deadline";
  std::vector<std::byte> got(PagesBytes(ns_.layout(), lost_from));
  ASSERT_OK(cluster->Read(ns_, stopped, lost_from, Host(got)));
  EXPECT_TRUE(got == ModelBytes(tokens, 0, lost_from));
  victim->Signal(SIGCONT);

  // Killed: the same answer, no slower.
  victim->Signal(SIGKILL);
  ASSERT_OK(victim->WaitExit(absl::Seconds(10)).status());
  start = absl::Now();
  ASSERT_OK_AND_ASSIGN(ClusterMatch killed, cluster->Match(ns_, tokens));
  EXPECT_LT(absl::Now() - start, kNodeTimeout + absl::Seconds(1));
  EXPECT_EQ(killed.match.matched_pages, lost_from);
  got.assign(PagesBytes(ns_.layout(), lost_from), std::byte{0});
  ASSERT_OK(cluster->Read(ns_, killed, lost_from, Host(got)));
  EXPECT_TRUE(got == ModelBytes(tokens, 0, lost_from));
  std::cout << "cluster: lost node held segments from page " << lost_from
            << "; stopped: " << absl::FormatDuration(stopped_took) << " for the lookup"
            << std::endl;
}

TEST_F(ClusterClientTest, FollowsTheNodesRegisteredInEtcd) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdProcess> etcd, EtcdProcess::Start());
  StartNodes(3, {"--etcd_endpoints=" + etcd->endpoint(), "--cluster=cc", "--cluster_lease_ttl=4s"});
  ClusterClientOptions options = Options();
  options.nodes.clear();
  options.cluster_url = "etcd://" + etcd->endpoint() + "/cc";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(options));
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (cluster->Nodes().size() < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(cluster->Nodes().size(), 3u);
  for (const ClusterNodeInfo& node : cluster->Nodes()) {
    EXPECT_NE(NodeAt(node.grpc_address), nullptr) << node.id << " at " << node.grpc_address;
    EXPECT_GT(node.weight, 0);
  }
  const std::vector<TokenId> tokens = RandomTokens(13, size_t{16} * page_tokens());
  const std::vector<std::byte> bytes = ModelBytes(tokens, 0, 16);
  ASSERT_OK(cluster->Write(ns_, tokens, 0, Source(bytes)).status());
  ASSERT_OK_AND_ASSIGN(ClusterMatch match, cluster->Match(ns_, tokens));
  ASSERT_EQ(match.match.matched_pages, 16u);
  std::vector<std::byte> got(bytes.size());
  ASSERT_OK(cluster->Read(ns_, match, 16, Host(got)));
  EXPECT_TRUE(got == bytes);

  // A node that stops (SIGTERM: it deregisters) leaves the view; its segments move.
  const ClusterNodeInfo gone = cluster->Nodes().front();
  NodeProcess* leaving = NodeAt(gone.grpc_address);
  ASSERT_NE(leaving, nullptr);
  leaving->Signal(SIGTERM);
  ASSERT_OK(leaving->WaitExit(absl::Seconds(30)).status());
  const absl::Time gone_by = absl::Now() + absl::Seconds(15);
  while (cluster->Nodes().size() > 2 && absl::Now() < gone_by) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(cluster->Nodes().size(), 2u);
  for (uint32_t p = 0; p < 16; p += kSegmentPages) {
    EXPECT_NE(cluster->OwnerOf(ns_, tokens, p), gone.id);
  }
}

}  // namespace
}  // namespace strata::integration::cluster_client_test
