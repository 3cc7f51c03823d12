// ClusterClient end to end (issue 13, items 2 and 5): three real strata-node processes on
// loopback, a sequence striped over them by segment placement, written in pieces, matched in
// one parallel round and read back byte for byte from every node at once; then a node
// killed (-9) and one stopped (SIGSTOP, as a partition looks to a client): a lookup costs
// at most the node deadline and answers the prefix before the lost node's first segment.
// Membership from a real etcd in the last test.
#include "strata/cluster_client.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "nlohmann/json.hpp"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/radix/prefix_hash.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/file.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"

namespace strata::integration::cluster_client_test {
namespace {

using strata::testing::EtcdProcess;
using strata::testing::NodeProcess;

constexpr uint32_t kSegmentPages = 4;
constexpr absl::Duration kNodeTimeout = absl::Milliseconds(300);

// Waits until process `pid` is stopped (state T in /proc/PID/stat): SIGSTOP takes effect
// asynchronously, and a node still running could answer the next call.
bool WaitStopped(pid_t pid) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T') {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  return false;
}

// Pages [0, pages) of `full`, a radix::BlobLayout of `full_pages` pages, as a blob of
// `pages` pages (layer by layer).
std::vector<std::byte> Head(const std::vector<std::byte>& full, uint32_t full_pages, uint32_t pages,
                            uint64_t chunk) {
  std::vector<std::byte> out;
  const uint64_t layers = full.size() / (full_pages * chunk);
  for (uint64_t l = 0; l < layers; ++l) {
    const auto from = full.begin() + static_cast<std::ptrdiff_t>(l * full_pages * chunk);
    out.insert(out.end(), from, from + static_cast<std::ptrdiff_t>(pages * chunk));
  }
  return out;
}

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

  // A real etcd, three nodes registered in it as cluster `name`, and a ClusterClient that
  // sees all three.
  void StartEtcdCluster(const std::string& name, std::unique_ptr<EtcdProcess>* etcd,
                        ClusterClientOptions* options, std::unique_ptr<ClusterClient>* cluster) {
    ASSERT_OK_AND_ASSIGN(*etcd, EtcdProcess::Start());
    StartNodes(3, {"--etcd_endpoints=" + (*etcd)->endpoint(), "--cluster=" + name,
                   "--cluster_lease_ttl=4s", "--cluster_join_window=0"});
    *options = Options();
    options->nodes.clear();
    options->cluster_url = "etcd://" + (*etcd)->endpoint() + "/" + name;
    ASSERT_OK_AND_ASSIGN(*cluster, ClusterClient::Connect(*options));
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while ((*cluster)->Nodes().size() < 3 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_EQ((*cluster)->Nodes().size(), 3u);
  }

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
  // Segments spread over the nodes: 24 segments of a longer sequence all on one of three
  // nodes would be a placement bug (by chance: 3^-23; node ids here are random ports).
  std::set<std::string> owners;
  const std::vector<TokenId> longer = RandomTokens(8, size_t{96} * page_tokens());
  for (uint32_t p = 0; p < 96; p += kSegmentPages) owners.insert(cluster->OwnerOf(ns_, longer, p));
  EXPECT_GE(owners.size(), 2u) << "24 segments all on one of three nodes";
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
  // Layer by layer: each layer handed on once, in order, after every node delivered it; the
  // layer's bytes are in place when its callback runs.
  std::vector<std::byte> layered(PagesBytes(ns_.layout(), 32));
  const std::vector<std::byte> want = ModelBytes(tokens, 0, 32);
  const uint64_t layer_bytes = PagesBytes(ns_.layout(), 32) / ns_.layout().num_layers;
  std::vector<uint32_t> seen;
  ASSERT_OK(cluster->ReadLayers(ns_, match, 32, Host(layered), [&](uint32_t layer) {
    seen.push_back(layer);
    EXPECT_EQ(0, std::memcmp(layered.data() + layer * layer_bytes,
                             want.data() + layer * layer_bytes, layer_bytes))
        << "layer " << layer;
    return absl::OkStatus();
  }));
  std::vector<uint32_t> all_layers(ns_.layout().num_layers);
  for (uint32_t l = 0; l < all_layers.size(); ++l) all_layers[l] = l;
  EXPECT_EQ(seen, all_layers);
  EXPECT_TRUE(layered == want);
  // A callback that stops the read: its status is the answer, no later layer is handed on.
  seen.clear();
  EXPECT_CODE(cluster->ReadLayers(ns_, match, 32, Host(layered),
                                  [&](uint32_t layer) {
                                    seen.push_back(layer);
                                    return layer == 1 ? absl::AbortedError("enough")
                                                      : absl::OkStatus();
                                  }),
              absl::StatusCode::kAborted);
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1}));

  // Batch and async: the same reads, several at once.
  std::vector<std::byte> a(PagesBytes(ns_.layout(), 32)), b(PagesBytes(ns_.layout(), 13));
  const std::vector<ClusterReadItem> items = {{&match, 32, Host(a)}, {&match, 13, Host(b)}};
  const std::vector<absl::Status> batch = cluster->ReadBatch(ns_, items);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_OK(batch[0]);
  EXPECT_OK(batch[1]);
  EXPECT_TRUE(a == want);
  EXPECT_TRUE(b == head);
  std::vector<std::byte> c(PagesBytes(ns_.layout(), 32));
  absl::Notification read_done;
  absl::Status async_status = absl::UnknownError("not run");
  cluster->ReadAsync(ns_, match, 32, Host(c), {}, [&](absl::Status st) {
    async_status = st;
    read_done.Notify();
  });
  ASSERT_TRUE(read_done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_OK(async_status);
  EXPECT_TRUE(c == want);

  // No node holds the sequence from page 0 past its first segment on its own.
  for (const auto& node : nodes_) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> one,
                         Client::Connect(ClientOptionsFor(node->grpc_address(), "tcp")));
    absl::StatusOr<MatchResult> alone = one->Match(ns_, tokens);
    if (alone.ok()) {
      EXPECT_LE(alone->matched_pages, kSegmentPages);
    }
  }
  // A lookup every node would refuse fails whole instead of answering "nothing cached".
  const std::vector<TokenId> too_long((size_t{1} << 21) + page_tokens(), 7);
  EXPECT_CODE(cluster->Match(ns_, too_long), absl::StatusCode::kInvalidArgument);

  // Writing it all again transfers nothing.
  ASSERT_OK_AND_ASSIGN(written, cluster->Write(ns_, to22, 0, Source(first)));
  for (const WriteResult& piece : written.pieces) EXPECT_TRUE(piece.existed);

  // A batch of two new sequences, and one written asynchronously: all found whole after.
  std::vector<std::vector<TokenId>> more;
  std::vector<std::vector<std::byte>> more_bytes;
  for (int i = 0; i < 3; ++i) {
    more.push_back(RandomTokens(70 + i, size_t{10} * page_tokens()));
    more_bytes.push_back(ModelBytes(more.back(), 0, 10));
  }
  const std::vector<ClusterWriteItem> writes = {{more[0], 0, Source(more_bytes[0]), std::nullopt},
                                                {more[1], 0, Source(more_bytes[1]), std::nullopt}};
  for (const auto& w : cluster->WriteBatch(ns_, writes)) EXPECT_OK(w.status());
  absl::Notification wrote;
  cluster->WriteAsync(ns_, more[2], 0, Source(more_bytes[2]), std::nullopt, {},
                      [&](absl::StatusOr<ClusterWriteResult> w) {
                        EXPECT_OK(w.status());
                        wrote.Notify();
                      });
  ASSERT_TRUE(wrote.WaitForNotificationWithTimeout(absl::Seconds(30)));
  for (const auto& seq : more) {
    ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster->Match(ns_, seq));
    EXPECT_EQ(m.match.matched_pages, 10u);
  }
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
  ASSERT_TRUE(WaitStopped(victim->pid()));
  // Its segments come back as TEXT from their text replicas (the next node of each ranking,
  // asked in a second round): every page is found, the bytes up to its first segment.
  absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(ClusterMatch stopped, cluster->Match(ns_, tokens));
  const absl::Duration stopped_took = absl::Now() - start;
  EXPECT_EQ(stopped.match.matched_pages, pages);
  EXPECT_EQ(stopped.match.ReadablePages(), lost_from);
  EXPECT_GE(stopped.segments_unanswered, 1u);
  EXPECT_EQ(stopped.segments_from_fallback, stopped.segments_unanswered);
  for (const Segment& seg : stopped.match.TextSegments()) {
    const size_t pt = page_tokens();
    const std::vector<TokenId> want(tokens.begin() + seg.seq_page_begin * pt,
                                    tokens.begin() + (seg.seq_page_begin + seg.page_count) * pt);
    EXPECT_EQ(seg.tokens, want) << "TEXT from page " << seg.seq_page_begin;
  }
  EXPECT_LT(stopped_took, 2 * kNodeTimeout + absl::Seconds(1)) << "waited past the node deadline";
  std::vector<std::byte> got(PagesBytes(ns_.layout(), lost_from));
  ASSERT_OK(cluster->Read(ns_, stopped, lost_from, Host(got)));
  EXPECT_TRUE(got == ModelBytes(tokens, 0, lost_from));
  victim->Signal(SIGCONT);

  // Killed: the same answer, no slower.
  victim->Signal(SIGKILL);
  ASSERT_OK(victim->WaitExit(absl::Seconds(10)).status());
  start = absl::Now();
  ASSERT_OK_AND_ASSIGN(ClusterMatch killed, cluster->Match(ns_, tokens));
  EXPECT_LT(absl::Now() - start, 2 * kNodeTimeout + absl::Seconds(1));
  EXPECT_EQ(killed.match.matched_pages, pages);
  EXPECT_EQ(killed.match.ReadablePages(), lost_from);
  got.assign(PagesBytes(ns_.layout(), lost_from), std::byte{0});
  ASSERT_OK(cluster->Read(ns_, killed, lost_from, Host(got)));
  EXPECT_TRUE(got == ModelBytes(tokens, 0, lost_from));
  EXPECT_GE(cluster->stats().text_replicas, uint64_t{pages / kSegmentPages});
  std::cout << "cluster: lost node held segments from page " << lost_from
            << "; stopped: " << absl::FormatDuration(stopped_took) << " for the lookup"
            << std::endl;
}

// kill -9 under a bounded load of lookups, reads and writes: no wrong byte, no call past its
// deadline, and the pages still found are exactly those before each sequence's first
// segment on the dead node (the hit rate drops by the dead node's share and no more).
TEST_F(ClusterClientTest, KillNineUnderLoadCostsTheDeadNodesSegmentsOnly) {
  StartNodes(3);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(Options()));
  constexpr int kSequences = 16;
  constexpr uint32_t kPages = 12;  // three segments each
  std::vector<std::vector<TokenId>> seqs;
  std::vector<std::vector<std::byte>> model;
  for (int i = 0; i < kSequences; ++i) {
    seqs.push_back(RandomTokens(100 + i, size_t{kPages} * page_tokens()));
    model.push_back(ModelBytes(seqs.back(), 0, kPages));
    ASSERT_OK(cluster->Write(ns_, seqs.back(), 0, Source(model.back())).status());
  }
  // The owner of the most first segments: sequences start on different nodes (placement by
  // each segment's first page), and the one with most of them dies.
  std::map<std::string, int> first_segments;
  for (const auto& tokens : seqs) ++first_segments[cluster->OwnerOf(ns_, tokens, 0)];
  EXPECT_GE(first_segments.size(), 2u) << "every sequence's first segment on one node";
  const std::string victim_id =
      std::max_element(first_segments.begin(), first_segments.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; })
          ->first;
  // What survives: each sequence's pages before its first segment on the victim.
  std::vector<uint32_t> survives(kSequences, kPages);
  uint32_t expected_pages = 0;
  for (int i = 0; i < kSequences; ++i) {
    for (uint32_t p = 0; p < kPages; p += kSegmentPages) {
      if (cluster->OwnerOf(ns_, seqs[i], p) == victim_id) {
        survives[i] = p;
        break;
      }
    }
    expected_pages += survives[i];
  }
  ASSERT_LT(expected_pages, uint32_t{kSequences} * kPages);

  std::atomic<bool> killed{false}, stop{false};
  std::atomic<int> wrong{0}, calls{0}, moved_writes{0};
  std::atomic<int64_t> slowest_ms{0};
  auto reader = [&](int seed) {
    std::mt19937 rng(seed);
    std::vector<std::byte> got;
    while (!stop.load()) {
      const int i = static_cast<int>(rng() % kSequences);
      const bool after = killed.load();  // the victim was dead before this lookup began
      const absl::Time start = absl::Now();
      absl::StatusOr<ClusterMatch> m = cluster->Match(ns_, seqs[i]);
      if (!m.ok()) {
        ADD_FAILURE() << "a lookup failed whole: " << m.status();
        ++wrong;  // a lookup never fails whole for one dead node
        continue;
      }
      const uint32_t pages = m->match.ReadablePages();
      if (pages > 0) {
        got.assign(PagesBytes(ns_.layout(), pages), std::byte{0});
        // A read may race the kill (the victim's segments): a clean error, never bad bytes.
        if (cluster->Read(ns_, *m, pages, Host(got)).ok() &&
            got != Head(model[i], kPages, pages, ns_.layout().BytesPerLayerPage())) {
          ADD_FAILURE() << "sequence " << i << ": a read of " << pages << " pages differs";
          ++wrong;
        }
      }
      if (after && m->match.ReadablePages() > survives[i]) {
        ADD_FAILURE() << "sequence " << i << ": " << m->match.ReadablePages()
                      << " pages readable after the kill, " << survives[i] << " survive";
        ++wrong;
      }
      const int64_t ms = absl::ToInt64Milliseconds(absl::Now() - start);
      int64_t seen = slowest_ms.load();
      while (ms > seen && !slowest_ms.compare_exchange_weak(seen, ms)) {
      }
      ++calls;
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  std::thread writer([&] {
    for (int w = 0; !stop.load() && w < 40; ++w) {
      const std::vector<TokenId> tokens = RandomTokens(1000 + w, size_t{8} * page_tokens());
      const std::vector<std::byte> bytes = ModelBytes(tokens, 0, 8);
      const absl::Time start = absl::Now();
      const bool after = killed.load();
      absl::StatusOr<ClusterWriteResult> written = cluster->Write(ns_, tokens, 0, Source(bytes));
      // A piece on the dead node goes to its segment's next node, in bounded time; a write
      // racing the kill may fail.
      EXPECT_LT(absl::Now() - start, absl::Seconds(15));
      bool touches = false;
      for (uint32_t p = 0; p < 8; p += kSegmentPages) {
        touches = touches || cluster->OwnerOf(ns_, tokens, p) == victim_id;
      }
      if (!written.ok()) {
        EXPECT_TRUE(killed.load() && touches) << written.status();
      }
      if (written.ok() && after && touches) ++moved_writes;
    }
  });
  absl::SleepFor(absl::Seconds(1));
  NodeProcess* victim = NodeAt(victim_id);
  ASSERT_NE(victim, nullptr);
  victim->Signal(SIGKILL);
  ASSERT_OK(victim->WaitExit(absl::Seconds(10)).status());
  killed.store(true);
  absl::SleepFor(absl::Seconds(2));
  stop.store(true);
  r1.join();
  r2.join();
  writer.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(calls.load(), 0);
  if (moved_writes.load() > 0) {
    EXPECT_GT(cluster->stats().writes_to_next, 0u);
  }
  EXPECT_LT(slowest_ms.load(), 2 * absl::ToInt64Milliseconds(kNodeTimeout) + 2000)
      << "a lookup and its read waited far past the node deadline";

  // Afterwards, every sequence's bytes are readable exactly up to its first segment on the
  // dead node, and every page is still found: the dead node's as TEXT from its replicas.
  uint32_t readable = 0, found = 0;
  for (int i = 0; i < kSequences; ++i) {
    ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster->Match(ns_, seqs[i]));
    EXPECT_EQ(m.match.ReadablePages(), survives[i]) << "sequence " << i;
    EXPECT_EQ(m.match.matched_pages, kPages) << "sequence " << i;
    readable += m.match.ReadablePages();
    found += m.match.matched_pages;
  }
  EXPECT_EQ(readable, expected_pages);
  std::cout << "cluster: after kill -9, " << readable << " of " << kSequences * kPages
            << " pages readable (the dead node's share and what follows it is lost), " << found
            << " found (the rest as TEXT from replicas); " << calls.load()
            << " lookups under load, slowest " << slowest_ms.load() << " ms" << std::endl;
}

TEST_F(ClusterClientTest, FollowsTheNodesRegisteredInEtcd) {
  std::unique_ptr<EtcdProcess> etcd;
  ClusterClientOptions options;
  std::unique_ptr<ClusterClient> cluster;
  ASSERT_NO_FATAL_FAILURE(StartEtcdCluster("cc", &etcd, &options, &cluster));
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

  // The CLI's lookup across the cluster: the same answer, each segment with its node.
  const std::string token_file = absl::StrCat(::testing::TempDir(), "/cluster-tokens.txt");
  {
    std::ofstream out(token_file);
    out << absl::StrJoin(tokens, " ") << "\n";
  }
  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult cli,
      strata::testing::RunProgram(
          STRATA_CLI_BINARY,
          {"--cluster", options.cluster_url, "match", "--tenant=cluster",
           "--model=org/reference-4l",
           "--layout=layers=4,kv_heads=2,head_dim=32,dtype=bf16,page_tokens=16", "--tokens",
           token_file, "--segment-pages", std::to_string(kSegmentPages), "--json"}));
  ASSERT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  const nlohmann::json json = nlohmann::json::parse(cli.out);
  EXPECT_EQ(json["matched_pages"], 16);
  ASSERT_EQ(json["segments"].size(), match.match.segments.size());
  for (size_t i = 0; i < match.owners.size(); ++i) {
    EXPECT_EQ(json["segments"][i]["node"], match.owners[i]);
  }

  // The CLI's put and get across the cluster: a new sequence written from files in pieces,
  // then its cached prefix read back from every node into a file, byte for byte.
  const std::vector<TokenId> cli_tokens = RandomTokens(14, size_t{10} * page_tokens());
  const std::vector<std::byte> cli_bytes = ModelBytes(cli_tokens, 0, 10);
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream t(dir + "/cluster-put-tokens.txt");
    t << absl::StrJoin(cli_tokens, " ") << "\n";
    std::ofstream b(dir + "/cluster-put.kv", std::ios::binary);
    b.write(reinterpret_cast<const char*>(cli_bytes.data()),
            static_cast<std::streamsize>(cli_bytes.size()));
  }
  const std::vector<std::string> ns_flags = {
      "--tenant=cluster", "--model=org/reference-4l",
      "--layout=layers=4,kv_heads=2,head_dim=32,dtype=bf16,page_tokens=16", "--segment-pages",
      std::to_string(kSegmentPages)};
  std::vector<std::string> put = {
      "--cluster", options.cluster_url,     "put",   "--tokens", dir + "/cluster-put-tokens.txt",
      "-i",        dir + "/cluster-put.kv", "--json"};
  put.insert(put.end(), ns_flags.begin(), ns_flags.end());
  ASSERT_OK_AND_ASSIGN(const strata::testing::ProgramResult put_out,
                       strata::testing::RunProgram(STRATA_CLI_BINARY, put));
  ASSERT_EQ(put_out.exit_code, 0) << put_out.out << put_out.err;
  EXPECT_EQ(nlohmann::json::parse(put_out.out)["pieces"].size(), 3u);  // pages 0-4, 4-8, 8-10
  std::vector<std::string> get = {
      "--cluster", options.cluster_url,    "get", "--tokens", dir + "/cluster-put-tokens.txt",
      "-o",        dir + "/cluster-get.kv"};
  get.insert(get.end(), ns_flags.begin(), ns_flags.end());
  ASSERT_OK_AND_ASSIGN(const strata::testing::ProgramResult get_out,
                       strata::testing::RunProgram(STRATA_CLI_BINARY, get));
  ASSERT_EQ(get_out.exit_code, 0) << get_out.out << get_out.err;
  EXPECT_EQ(strata::testing::ReadFileToString(dir + "/cluster-get.kv"),
            std::string(reinterpret_cast<const char*>(cli_bytes.data()), cli_bytes.size()));
  // A KEY is not how a cluster is read: a usage error.
  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult keyed,
      strata::testing::RunProgram(STRATA_CLI_BINARY, {"--cluster", options.cluster_url, "get",
                                                      std::string(32, 'a'), "-o", "-"}));
  EXPECT_EQ(keyed.exit_code, 2) << keyed.err;

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
  bool moved = false;
  ASSERT_EQ(match.owners.size(), 16 / kSegmentPages);  // one blob per segment
  for (uint32_t p = 0; p < 16; p += kSegmentPages) {
    EXPECT_NE(cluster->OwnerOf(ns_, tokens, p), gone.id);
    moved = moved || match.owners[p / kSegmentPages] == gone.id;
  }
  // Its segments' new owners held their text replicas: all 16 pages are found, its own as
  // TEXT, and writing the same bytes (what a rebuild does) makes them readable again.
  ASSERT_OK_AND_ASSIGN(ClusterMatch after, cluster->Match(ns_, tokens));
  EXPECT_EQ(after.match.matched_pages, 16u);
  EXPECT_EQ(after.segments_unanswered, 0u);
  EXPECT_EQ(after.match.TextSegments().empty(), !moved);
  ASSERT_OK(cluster->Write(ns_, tokens, 0, Source(bytes)).status());
  ASSERT_OK_AND_ASSIGN(after, cluster->Match(ns_, tokens));
  ASSERT_EQ(after.match.ReadablePages(), 16u);
  got.assign(bytes.size(), std::byte{0});
  ASSERT_OK(cluster->Read(ns_, after, 16, Host(got)));
  EXPECT_TRUE(got == bytes);
}

// A node's blobs that start a segment lose their KV (evicted to TEXT); its sequence's
// earlier pages are on the other nodes. `strata-worker --cluster` pulls every node's tasks,
// gathers those pages' tokens from the nodes that hold them (ClusterClient::PrefixTokens),
// and rebuilds the blobs byte for byte.
TEST_F(ClusterClientTest, TheClusterWorkerRebuildsBlobsThatStartASegment) {
  std::unique_ptr<EtcdProcess> etcd;
  ClusterClientOptions options;
  std::unique_ptr<ClusterClient> cluster;
  ASSERT_NO_FATAL_FAILURE(StartEtcdCluster("rb", &etcd, &options, &cluster));
  constexpr uint32_t kPages = 6 * kSegmentPages;
  const std::vector<TokenId> tokens = RandomTokens(29, size_t{kPages} * page_tokens());
  const std::vector<std::byte> bytes = ModelBytes(tokens, 0, kPages);
  ASSERT_OK(cluster->Write(ns_, tokens, 0, Source(bytes)).status());
  ASSERT_OK_AND_ASSIGN(ClusterMatch before, cluster->Match(ns_, tokens));
  ASSERT_EQ(before.match.ReadablePages(), kPages);

  // The owner of segment 1 drops every blob it holds to TEXT and queues them for rebuild.
  const std::string victim = cluster->OwnerOf(ns_, tokens, kSegmentPages);
  ASSERT_OK_AND_ASSIGN(Client * node, cluster->Node(victim));
  std::map<BlobKey, uint64_t> checksums;  // the victim's blobs, as written
  for (size_t i = 0; i < before.owners.size(); ++i) {
    if (before.owners[i] != victim) continue;
    const BlobKey key = before.match.segments[i].blob;
    ASSERT_OK_AND_ASSIGN(BlobInfo info, node->Stat(key));
    checksums[key] = info.checksum;
  }
  ASSERT_OK_AND_ASSIGN(EvictResult evicted, node->Evict(Tier::kDram, UINT64_MAX));
  EXPECT_GE(evicted.blobs_dropped, checksums.size());
  uint32_t segment_rooted = 0;
  for (const auto& [key, checksum] : checksums) {
    ASSERT_OK_AND_ASSIGN(BlobInfo info, node->Stat(key));
    ASSERT_EQ(info.tiers, std::vector<Tier>{Tier::kText}) << key.ToHex();
    segment_rooted += info.first_page > 0;
    ASSERT_OK(node->RequestRebuild(key, /*with_prefix=*/true).status());
  }
  ASSERT_GE(segment_rooted, 1u);
  ASSERT_OK_AND_ASSIGN(ClusterMatch text, cluster->Match(ns_, tokens));
  EXPECT_LT(text.match.ReadablePages(), kPages);
  EXPECT_EQ(text.match.matched_pages, kPages);

  // The prefix before segment 2, gathered from the nodes: the sequence's own tokens.
  ASSERT_OK_AND_ASSIGN(
      std::vector<TokenId> prefix,
      cluster->PrefixTokens(ns_,
                            SegmentStart{radix::PrefixHashAt(radix::NamespaceHash(ns_),
                                                             absl::MakeConstSpan(tokens).first(
                                                                 2 * kSegmentPages * page_tokens()),
                                                             page_tokens()),
                                         2 * kSegmentPages}));
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), tokens.begin()));
  EXPECT_EQ(prefix.size(), size_t{2} * kSegmentPages * page_tokens());
  EXPECT_CODE(cluster->PrefixTokens(ns_, SegmentStart{radix::PrefixHash{7, 7}, kSegmentPages}),
              absl::StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult worker,
      strata::testing::RunProgram(STRATA_WORKER_BINARY, {"--cluster", options.cluster_url, "--seed",
                                                         "42", "--idle-exit", "0"}));
  EXPECT_EQ(worker.exit_code, 0) << worker.out << worker.err;
  EXPECT_TRUE(absl::StrContains(worker.out, absl::StrCat(checksums.size(), " rebuilt")))
      << worker.out;
  for (const auto& [key, checksum] : checksums) {
    ASSERT_OK_AND_ASSIGN(BlobInfo info, node->Stat(key));
    EXPECT_EQ(info.tiers.front(), Tier::kDram) << key.ToHex();
    EXPECT_EQ(info.checksum, checksum) << key.ToHex();
  }
  ASSERT_OK_AND_ASSIGN(ClusterMatch after, cluster->Match(ns_, tokens));
  ASSERT_EQ(after.match.ReadablePages(), kPages);
  std::vector<std::byte> got(bytes.size());
  ASSERT_OK(cluster->Read(ns_, after, kPages, Host(got)));
  EXPECT_TRUE(got == bytes);
}

// The Client API on a cluster (ClientOptions::cluster_nodes): turns written as blobs that
// continue each other across segment boundaries — by the client that matched them (its
// remembered sequence) and by a fresh client (the earlier tokens gathered from the nodes) —
// then matched, read whole, layer by layer, into a larger destination, by ranges, in
// batches and asynchronously, every byte checked; a node's own calls say where they go.
TEST_F(ClusterClientTest, DeviceMemoryWorksOnACluster) {
  // The host gpu::Device stands in for a GPU: the cluster stages a device source it must
  // cut into segments, and each node's client reads its segments into one device buffer.
  StartNodes(3);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<gpu::Device> device,
                       gpu::CreateHostDevice({.memory_bytes = size_t{64} << 20}));
  ClientOptions options = ClientOptionsFor(nodes_.front()->grpc_address(), "tcp");
  for (const auto& node : nodes_) options.cluster_nodes.push_back(node->grpc_address());
  options.segment_pages = kSegmentPages;
  options.node_timeout = kNodeTimeout;
  options.device_staging_bytes = size_t{4} << 20;
  options.open_device = [device](int) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
    return device;
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
  constexpr uint32_t kPages = 14;  // four segments of 4 pages
  const std::vector<TokenId> tokens = RandomTokens(43, size_t{kPages} * page_tokens());
  const std::vector<std::byte> all = ModelBytes(tokens, 0, kPages);
  ASSERT_OK_AND_ASSIGN(gpu::Stream stream, device->CreateStream());
  ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer source, device->Allocate(all.size()));
  ASSERT_OK(device->CopyToDeviceAsync(source.data(), all.data(), all.size(), stream));
  ASSERT_OK_AND_ASSIGN(WriteResult written, client->Write(ns_, std::nullopt, tokens,
                                                          MemoryDescriptor::CudaDevice(
                                                              source.data(), source.size(), 0)));
  EXPECT_EQ(written.key.hash,
            radix::PrefixHashAt(radix::NamespaceHash(ns_), tokens, page_tokens()));
  ASSERT_OK_AND_ASSIGN(MatchResult m, client->Match(ns_, tokens));
  ASSERT_EQ(m.matched_pages, kPages);
  ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer landing, device->Allocate(all.size()));
  std::vector<uint32_t> layers;
  ASSERT_OK(client->ReadLayers(ns_, m.segments, kPages,
                               MemoryDescriptor::CudaDevice(landing.data(), landing.size(), 0),
                               [&](uint32_t l) {
                                 layers.push_back(l);
                                 return absl::OkStatus();
                               }));
  EXPECT_EQ(layers.size(), ns_.layout().num_layers);
  std::vector<std::byte> back(all.size());
  ASSERT_OK(device->CopyToHostAsync(back.data(), landing.data(), back.size(), stream));
  EXPECT_TRUE(back == all);
}

TEST_F(ClusterClientTest, TheClientApiWorksOnACluster) {
  StartNodes(3);
  ClientOptions options = ClientOptionsFor(nodes_.front()->grpc_address(), "tcp");
  for (const auto& node : nodes_) options.cluster_nodes.push_back(node->grpc_address());
  options.segment_pages = kSegmentPages;
  options.node_timeout = kNodeTimeout;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
  ASSERT_NE(client->cluster(), nullptr);
  EXPECT_EQ(client->cluster()->Nodes().size(), 3u);
  constexpr uint32_t kPages = 24;
  const std::vector<TokenId> tokens = RandomTokens(41, size_t{kPages} * page_tokens());
  const std::vector<std::byte> all = ModelBytes(tokens, 0, kPages);
  auto span = [&](uint32_t first, uint32_t n) {
    return absl::MakeConstSpan(tokens).subspan(size_t{first} * page_tokens(),
                                               size_t{n} * page_tokens());
  };
  // Turn 1: pages [0, 5); turn 2 continues it through [5, 14) (three segments).
  const std::vector<std::byte> t1 = ModelBytes(tokens, 0, 5);
  ASSERT_OK_AND_ASSIGN(WriteResult w1, client->Write(ns_, std::nullopt, span(0, 5), Source(t1)));
  EXPECT_FALSE(w1.existed);
  const std::vector<std::byte> t2 = ModelBytes(tokens, 5, 9);
  ASSERT_OK_AND_ASSIGN(WriteResult w2,
                       client->Write(ns_, Parent{w1.key, 5}, span(5, 9), Source(t2)));
  EXPECT_EQ(w2.indexed_pages, 9u);
  // Turn 3 by a client that never saw the sequence: [14, 24).
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> fresh, Client::Connect(options));
  const std::vector<std::byte> t3 = ModelBytes(tokens, 14, 10);
  ASSERT_OK_AND_ASSIGN(WriteResult w3,
                       fresh->Write(ns_, Parent{w2.key, 14}, span(14, 10), Source(t3)));
  EXPECT_EQ(w3.indexed_pages, 10u);
  // The key is the sequence's hash through its last page, as on one node.
  EXPECT_EQ(w3.key.hash, radix::PrefixHashAt(radix::NamespaceHash(ns_), tokens, page_tokens()));

  ASSERT_OK_AND_ASSIGN(MatchResult m, client->Match(ns_, tokens));
  ASSERT_EQ(m.matched_pages, kPages);
  std::vector<std::byte> got(all.size());
  ASSERT_OK(client->Read(ns_, m.segments, kPages, Host(got)));
  EXPECT_TRUE(got == all);
  std::vector<std::byte> layered(all.size());
  std::vector<uint32_t> layers;
  ASSERT_OK(client->ReadLayers(ns_, m.segments, kPages, Host(layered), [&](uint32_t l) {
    layers.push_back(l);
    return absl::OkStatus();
  }));
  EXPECT_TRUE(layered == all);
  EXPECT_EQ(layers.size(), ns_.layout().num_layers);
  EXPECT_TRUE(std::is_sorted(layers.begin(), layers.end()));
  // The fresh client reads the other client's match (it locates the blobs).
  std::vector<std::byte> located(all.size());
  ASSERT_OK(fresh->ReadInto(ns_, m.segments, kPages, Host(located)));
  EXPECT_TRUE(located == all);
  EXPECT_CODE(fresh->ReadInto(ns_, {}, kPages, Host(located)), absl::StatusCode::kInvalidArgument);
  // Ranges of two blobs on (likely) two nodes, one Read, a batch, and asynchronously.
  const Segment& first = m.segments.front();
  const Segment& last = m.segments.back();
  std::vector<std::byte> a(PagesBytes(ns_.layout(), first.page_count));
  std::vector<std::byte> b(PagesBytes(ns_.layout(), last.page_count));
  const std::vector<ReadRange> ranges = {ReadRange::FromSegment(first),
                                         ReadRange::FromSegment(last)};
  ASSERT_OK(client->Read(ns_, ranges, {Host(a), Host(b)}));
  EXPECT_TRUE(a == ModelBytes(tokens, first.seq_page_begin, first.page_count));
  EXPECT_TRUE(b == ModelBytes(tokens, last.seq_page_begin, last.page_count));
  std::vector<std::byte> c(b.size());
  const std::vector<ReadItem> items = {
      {ranges[1], Host(c)}, {ReadRange{BlobKey{radix::PrefixHash{3, 4}}, 0, 1}, Host(a)}};
  const std::vector<absl::Status> batch = fresh->ReadBatch(ns_, items);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_OK(batch[0]);
  EXPECT_TRUE(c == b);
  EXPECT_CODE(batch[1], absl::StatusCode::kNotFound);
  absl::Notification read_done;
  absl::Status async_status = absl::UnknownError("not run");
  std::vector<std::byte> d(b.size());
  client->ReadAsync(ns_, {ranges[1]}, {Host(d)}, {}, [&](absl::Status st) {
    async_status = st;
    read_done.Notify();
  });
  read_done.WaitForNotification();
  EXPECT_OK(async_status);
  EXPECT_TRUE(d == b);
  ASSERT_OK_AND_ASSIGN(BlobInfo info, fresh->Stat(w2.key));
  EXPECT_EQ(info.first_page + info.pages, 14u);

  // A second sequence in a batch: an item continuing another, and one of an unknown parent.
  const std::vector<TokenId> other = RandomTokens(43, size_t{12} * page_tokens());
  const std::vector<std::byte> o1 = ModelBytes(other, 0, 6), o2 = ModelBytes(other, 6, 6);
  std::vector<WriteItem> writes(3);
  writes[0].tokens = absl::MakeConstSpan(other).first(size_t{6} * page_tokens());
  writes[0].source = Source(o1);
  writes[1].parent_item = 0;
  writes[1].tokens = absl::MakeConstSpan(other).subspan(size_t{6} * page_tokens());
  writes[1].source = Source(o2);
  writes[2].parent = Parent{BlobKey{radix::PrefixHash{5, 6}}, 3};
  writes[2].tokens = writes[1].tokens;
  writes[2].source = Source(o2);
  const std::vector<absl::StatusOr<WriteResult>> wrote = client->WriteBatch(ns_, writes);
  ASSERT_EQ(wrote.size(), 3u);
  ASSERT_OK(wrote[0].status());
  ASSERT_OK(wrote[1].status());
  EXPECT_CODE(wrote[2], absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(MatchResult om, fresh->Match(ns_, other));
  EXPECT_EQ(om.matched_pages, 12u);
  std::vector<std::byte> og(PagesBytes(ns_.layout(), 12));
  ASSERT_OK(fresh->Read(ns_, om.segments, 12, Host(og)));
  EXPECT_TRUE(og == ModelBytes(other, 0, 12));

  // A node's own calls name where they go; bad cluster options are refused.
  EXPECT_CODE(client->Delete(w1.key), absl::StatusCode::kUnimplemented);
  EXPECT_CODE(client->Tiers(), absl::StatusCode::kUnimplemented);
  const std::string id = client->cluster()->Nodes().front().id;
  ASSERT_OK_AND_ASSIGN(Client * node, client->cluster()->Node(id));
  EXPECT_OK(node->Health().status());
  ClientOptions both = options;
  both.cluster = "etcd://127.0.0.1:1/x";
  EXPECT_CODE(Client::Connect(both), absl::StatusCode::kInvalidArgument);
  EXPECT_GT(client->stats().bytes_read, 0u);
}

}  // namespace
}  // namespace strata::integration::cluster_client_test
