// Joins and drains (issue 13, item 4) on real nodes in a real etcd: a node joins a serving
// cluster of three and takes about a quarter of the segments without a cliff in the hit rate
// (lookups also ask the previous owners; what is read there moves to the new owner); then a
// founding node leaves through `strata cluster drain`, handing its read segments to their new
// owners before it deregisters. Bytes moved by both are counted and checked against the
// segments whose owner changed. Then etcd killed under a bounded load of lookups, reads and
// writes (the cluster keeps serving on its last view, and the nodes register again when etcd
// returns), and a node restarted on its data dir (same id, its SSD blobs served again).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "nlohmann/json.hpp"
#include "strata/base/status_macros.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/cluster_client.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/etcd_process.h"
#include "strata/testing/node_process.h"
#include "strata/testing/process.h"
#include "strata/testing/temp_dir.h"

namespace strata::integration::cluster_handover_test {
namespace {

using strata::testing::EtcdProcess;
using strata::testing::NodeProcess;

constexpr uint32_t kSegmentPages = 4;
constexpr int kSequences = 24;
constexpr uint32_t kPages = 12;  // three segments each

class ClusterHandOverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdProcess::Start());
    url_ = "etcd://" + etcd_->endpoint() + "/ho";
  }

  std::vector<std::string> NodeArgs(const std::string& join_window) const {
    return {"--etcd_endpoints=" + etcd_->endpoint(), "--cluster=ho",
            "--cluster_join_window=" + join_window};
  }

  absl::StatusOr<std::unique_ptr<ClusterClient>> Connect() const {
    ClusterClientOptions options;
    options.cluster_url = url_;
    options.node_options = ClientOptionsFor("127.0.0.1:1", "tcp");
    options.segment_pages = kSegmentPages;
    return ClusterClient::Connect(options);
  }

  // Waits until the client's placement has `n` nodes.
  static bool WaitNodes(const ClusterClient& cluster, size_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (cluster.Nodes().size() != n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    return cluster.Nodes().size() == n;
  }

  // The value of the sample `name` (with its labels, e.g. `strata_cluster_members{state=
  // "serving"}`) in the node's /metrics.
  static absl::StatusOr<uint64_t> MetricOf(const NodeProcess& node, const std::string& name) {
    STRATA_ASSIGN_OR_RETURN(const store::http::HttpResponse metrics,
                            store::http::HttpGet(node.http_address(), "/metrics"));
    const std::string line = "\n" + name + " ";
    const size_t at = metrics.body.find(line);
    if (at == std::string::npos) return absl::NotFoundError(name);
    const size_t from = at + line.size();
    uint64_t value = 0;
    if (!absl::SimpleAtoi(metrics.body.substr(from, metrics.body.find('\n', from) - from),
                          &value)) {
      return absl::InternalError(absl::StrCat(name, ": not an integer"));
    }
    return value;
  }

  std::string IdOf(const ClusterClient& cluster, const NodeProcess& node) const {
    for (const ClusterNodeInfo& info : cluster.Nodes()) {
      if (info.grpc_address == node.grpc_address()) return info.id;
    }
    return "";
  }

  // kSequences sequences of kPages pages (seeds seed, seed + 1, ...), written.
  void WriteAll(ClusterClient& cluster, uint64_t seed) {
    for (int i = 0; i < kSequences; ++i) {
      seqs_.push_back(RandomTokens(seed + i, size_t{kPages} * ns_.layout().page_tokens));
      model_.push_back(ModelBytes(seqs_.back(), 0, kPages));
      ASSERT_OK(cluster.Write(ns_, seqs_.back(), 0, Source(model_.back())).status());
    }
  }

  // Every sequence looked up and read whole (the test fails at the first that is not).
  void ReadAll(ClusterClient& cluster, uint32_t* from_previous) {
    *from_previous = 0;
    for (int i = 0; i < kSequences; ++i) {
      ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster.Match(ns_, seqs_[i]));
      ASSERT_EQ(m.match.matched_pages, kPages) << "sequence " << i;
      *from_previous += m.segments_from_previous;
      std::vector<std::byte> got(model_[i].size());
      ASSERT_OK(cluster.Read(ns_, m, kPages, Host(got)));
      ASSERT_TRUE(got == model_[i]) << "sequence " << i;
    }
  }

  const Namespace ns_ = ClientTestNamespace("handover");
  std::unique_ptr<EtcdProcess> etcd_;
  std::string url_;
  std::vector<std::unique_ptr<NodeProcess>> nodes_;
  std::vector<std::vector<TokenId>> seqs_;
  std::vector<std::vector<std::byte>> model_;
};

TEST_F(ClusterHandOverTest, AJoinMovesWhatIsReadAndADrainHandsOverBeforeLeaving) {
  for (int i = 0; i < 3; ++i) {  // founding nodes: serving at once
    ASSERT_OK_AND_ASSIGN(auto node,
                         StartNodeWithDataPlane("tcp", uint64_t{64} << 20, NodeArgs("0")));
    nodes_.push_back(std::move(node));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, Connect());
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  WriteAll(*cluster, 500);
  uint32_t from_previous = 0;
  ReadAll(*cluster, &from_previous);
  EXPECT_EQ(from_previous, 0u);
  std::map<std::pair<int, uint32_t>, std::string> owner_before;
  for (int i = 0; i < kSequences; ++i) {
    for (uint32_t p = 0; p < kPages; p += kSegmentPages) {
      owner_before[{i, p}] = cluster->OwnerOf(ns_, seqs_[i], p);
    }
  }

  // The founders' text repairers take the three-node view as their first (they look every
  // 200 ms); a join before that would go unseen by them. Their passes so far (the founders
  // joining each other) are counted before the join.
  absl::SleepFor(absl::Seconds(1));
  std::vector<uint64_t> passes_before;
  for (int n = 0; n < 3; ++n) {
    ASSERT_OK_AND_ASSIGN(const uint64_t passes,
                         MetricOf(*nodes_[n], "strata_cluster_text_repairs_total"));
    passes_before.push_back(passes);
  }
  // A fourth node joins (joining for a minute: longer than the test).
  ASSERT_OK_AND_ASSIGN(auto joiner,
                       StartNodeWithDataPlane("tcp", uint64_t{64} << 20, NodeArgs("60s")));
  nodes_.push_back(std::move(joiner));
  ASSERT_TRUE(WaitNodes(*cluster, 4));
  const std::string joined = IdOf(*cluster, *nodes_.back());
  ASSERT_FALSE(joined.empty());
  // The founders copy token text to the joiner where it entered a segment's top two
  // (TextRepairer): it may hold a segment's text while the KV is at the previous owner, and
  // a lookup must still take the previous owner's KV.
  for (int n = 0; n < 3; ++n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (absl::Now() < deadline &&
           MetricOf(*nodes_[n], "strata_cluster_text_repairs_total").value_or(0) <=
               passes_before[n]) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_OK_AND_ASSIGN(const uint64_t passes,
                         MetricOf(*nodes_[n], "strata_cluster_text_repairs_total"));
    ASSERT_GT(passes, passes_before[n]);
  }
  // (A pass under way before the join may be the one counted: wait for the copies too.)
  const absl::Time copied_by = absl::Now() + absl::Seconds(15);
  while (absl::Now() < copied_by &&
         MetricOf(*nodes_.back(), "strata_tier_blobs{tier=\"text\"}").value_or(0) == 0) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_OK_AND_ASSIGN(const uint64_t joiner_text,
                       MetricOf(*nodes_.back(), "strata_tier_blobs{tier=\"text\"}"));
  EXPECT_GT(joiner_text, 0u);
  uint32_t taken = 0, changed = 0;
  for (const auto& [at, before] : owner_before) {
    const std::string now = cluster->OwnerOf(ns_, seqs_[at.first], at.second);
    taken += now == joined;
    changed += now != before;
  }
  // Only the joiner's segments change owner (rendezvous hashing), about a quarter of them.
  EXPECT_EQ(changed, taken);
  const uint32_t total = kSequences * (kPages / kSegmentPages);
  EXPECT_GT(taken, 0u);
  EXPECT_LT(taken, total / 2);
  // No cliff: every lookup still finds every page, the joiner's segments at their previous
  // owners; what is read there moves to the joiner.
  ReadAll(*cluster, &from_previous);
  EXPECT_EQ(from_previous, taken);
  ASSERT_TRUE(cluster->WaitMovesIdle(absl::Seconds(20)));
  const ClusterClientStats moved = cluster->stats();
  const uint64_t segment_bytes = PagesBytes(ns_.layout(), kSegmentPages);
  EXPECT_EQ(moved.moves_done, taken);
  EXPECT_EQ(moved.moves_failed + moved.moves_dropped, 0u);
  EXPECT_EQ(moved.bytes_moved, uint64_t{taken} * segment_bytes);
  // Now the joiner answers them itself.
  ReadAll(*cluster, &from_previous);
  EXPECT_EQ(from_previous, 0u);
  std::cout << "join: " << taken << " of " << total << " segments (ideal 1/4: " << total / 4.0
            << ") moved on first read, " << moved.bytes_moved << " bytes" << std::endl;

  // A founding node leaves: its read segments go to their new owners before it deregisters.
  NodeProcess& leaving = *nodes_.front();
  const std::string left_id = IdOf(*cluster, leaving);
  ASSERT_FALSE(left_id.empty());
  std::vector<std::pair<int, uint32_t>> its;
  for (int i = 0; i < kSequences; ++i) {
    for (uint32_t p = 0; p < kPages; p += kSegmentPages) {
      if (cluster->OwnerOf(ns_, seqs_[i], p) == left_id) its.emplace_back(i, p);
    }
  }
  ASSERT_FALSE(its.empty());
  ASSERT_OK_AND_ASSIGN(
      const strata::testing::ProgramResult drain,
      strata::testing::RunProgram(STRATA_CLI_BINARY,
                                  {"--cluster", url_, "cluster", "drain", left_id, "--json"}));
  const std::string log = leaving.StderrText();
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err << "\nthe node's log ends:\n"
                                << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  const nlohmann::json report = nlohmann::json::parse(drain.out);
  EXPECT_EQ(report["node"], left_id);
  EXPECT_EQ(report["failures"], 0);
  EXPECT_EQ(report["cold_segments"], 0);  // every segment was read
  // It holds the segments it owned before the join: those it owns now are sent; those the
  // joiner took (and got on their first read) are there already, so no byte of them moves.
  uint64_t held = 0;
  for (const auto& [at, before] : owner_before) held += before == left_id;
  EXPECT_EQ(report["segments"].get<uint64_t>(), held);
  EXPECT_EQ(report["bytes"].get<uint64_t>(), uint64_t{its.size()} * segment_bytes);
  EXPECT_EQ(report["blobs_existing"].get<uint64_t>(), held - its.size());
  EXPECT_GT(report["text_blobs"].get<uint64_t>(), 0u);  // text replicas stay behind
  EXPECT_LE(report["bytes"].get<uint64_t>(), report["held_bytes"].get<uint64_t>());
  // It left every view at once, and every page is still found and read back whole.
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  for (const ClusterNodeInfo& info : cluster->Nodes()) EXPECT_NE(info.id, left_id);
  ReadAll(*cluster, &from_previous);
  EXPECT_EQ(from_previous, 0u);
  EXPECT_EQ(cluster->stats().segments_from_fallback, 0u);
  std::cout << "drain: " << report["segments"] << " segments (" << its.size() << " owned), "
            << report["bytes"] << " of " << report["held_bytes"] << " bytes held handed over"
            << std::endl;
  // The node still answers reads until stopped, then stops cleanly.
  leaving.Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(int code, leaving.WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0);
}

TEST_F(ClusterHandOverTest, EtcdKilledUnderLoadKeepsTheLastViewAndARestartedNodeServesItsSsd) {
  strata::testing::ScopedTempDir dir;
  auto start = [&](int i) {
    strata::testing::NodeProcessOptions options;
    options.default_listen_and_dram = true;
    options.default_data_dir = false;
    options.env["UCX_TLS"] = "tcp";
    options.args = NodeArgs("0");
    options.args.push_back("--cluster_lease_ttl=3s");
    options.args.push_back("--dram_bytes=" + std::to_string(uint64_t{64} << 20));
    options.args.push_back("--ssd_bytes=" + std::to_string(uint64_t{64} << 20));
    options.args.push_back(absl::StrCat("--data_dir=", dir.path(), "/node", i));
    return NodeProcess::Start(std::move(options));
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(auto node, start(i));
    nodes_.push_back(std::move(node));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, Connect());
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  WriteAll(*cluster, 700);

  // A bounded load: lookups and reads of every sequence (all pages, every byte), and writes.
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, lookups{0}, writes{0};
  std::thread reader([&] {
    for (int n = 0; !stop.load() && n < 100000; ++n) {
      const int i = n % kSequences;
      absl::StatusOr<ClusterMatch> m = cluster->Match(ns_, seqs_[i]);
      std::vector<std::byte> got(model_[i].size());
      if (!m.ok() || m->match.ReadablePages() != kPages ||
          !cluster->Read(ns_, *m, kPages, Host(got)).ok() || got != model_[i]) {
        ++failures;
        ADD_FAILURE() << "sequence " << i << ": "
                      << (m.ok() ? "short or bad read" : m.status().ToString());
      }
      ++lookups;
    }
  });
  std::thread writer([&] {
    for (int w = 0; !stop.load() && w < 300; ++w) {  // 37.5 MiB: no eviction
      const std::vector<TokenId> tokens =
          RandomTokens(9000 + w, size_t{8} * ns_.layout().page_tokens);
      absl::StatusOr<ClusterWriteResult> written =
          cluster->Write(ns_, tokens, 0, Source(ModelBytes(tokens, 0, 8)));
      if (!written.ok()) {
        ++failures;
        ADD_FAILURE() << "write " << w << ": " << written.status();
      }
      ++writes;
    }
  });
  absl::SleepFor(absl::Milliseconds(500));
  etcd_->Kill();
  absl::SleepFor(absl::Seconds(4));  // past the registrations' lease TTL
  EXPECT_EQ(cluster->Nodes().size(), 3u) << "the client keeps its last view";
  const int during = lookups.load();
  ASSERT_OK(etcd_->Restart());
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> fresh, Connect());
    EXPECT_TRUE(WaitNodes(*fresh, 3)) << "the nodes registered again";
  }
  absl::SleepFor(absl::Milliseconds(500));
  stop.store(true);
  reader.join();
  writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(during, 0);
  std::cout << "etcd away 4 s: " << lookups.load() << " lookups and reads, " << writes.load()
            << " writes, " << failures.load() << " failed" << std::endl;

  // A node restarted on its data dir comes back as itself and serves its SSD blobs again.
  NodeProcess& restarted = *nodes_[1];
  const std::string id = IdOf(*cluster, restarted);
  ASSERT_FALSE(id.empty());
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> admin,
                         Client::Connect(ClientOptionsFor(restarted.grpc_address(), "tcp")));
    ASSERT_OK(admin->Evict(Tier::kDram, uint64_t{1} << 40).status());  // all of it to SSD
  }
  restarted.Signal(SIGTERM);
  ASSERT_OK(restarted.WaitExit(absl::Seconds(30)).status());
  ASSERT_TRUE(WaitNodes(*cluster, 2));
  ASSERT_OK_AND_ASSIGN(nodes_[1], start(1));
  EXPECT_EQ(nodes_[1]->ReadyField("node_id"), id);
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  uint32_t from_previous = 0;
  ReadAll(*cluster, &from_previous);
  uint32_t its = 0;
  for (int i = 0; i < kSequences; ++i) {
    for (uint32_t p = 0; p < kPages; p += kSegmentPages)
      its += cluster->OwnerOf(ns_, seqs_[i], p) == id;
  }
  EXPECT_GT(its, 0u);
  std::cout << "restart: node " << id << " serves its " << its << " segments from SSD again"
            << std::endl;
}

// Hot replicas: blobs read cluster_hot_reads times are pushed by their owner to the next node
// of their segment's ranking; reads spread over both, and when an owner is killed its hot
// segments stay readable (KV from the replica, not TEXT).
TEST_F(ClusterHandOverTest, HotSegmentsAreReplicatedReadFromBothAndOutliveTheirOwner) {
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> args = NodeArgs("0");
    args.push_back("--cluster_hot_reads=3");
    args.push_back("--cluster_lease_ttl=30s");  // the killed node stays in the view
    ASSERT_OK_AND_ASSIGN(auto node, StartNodeWithDataPlane("tcp", uint64_t{64} << 20, args));
    nodes_.push_back(std::move(node));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, Connect());
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  WriteAll(*cluster, 900);
  uint32_t from_previous = 0;
  for (int r = 0; r < 3; ++r) ReadAll(*cluster, &from_previous);  // the third read makes them hot
  // Every segment's blob reaches its replica (the owners push every 200 ms).
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  uint32_t replicated = 0, segments = 0;
  while (absl::Now() < deadline) {
    replicated = segments = 0;
    for (int i = 0; i < kSequences; ++i) {
      ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster->Match(ns_, seqs_[i]));
      for (const std::vector<std::string>& holders : m.holders) {
        ++segments;
        replicated += holders.size() == 2;
      }
    }
    if (replicated == segments) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(replicated, segments);
  // `strata cluster status`: each segment (one blob here) on its owner and its replica, and
  // marked hot on its owner.
  {
    ASSERT_OK_AND_ASSIGN(
        const strata::testing::ProgramResult status,
        strata::testing::RunProgram(STRATA_CLI_BINARY,
                                    {"--cluster", url_, "cluster", "status", "--json"}));
    ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
    const nlohmann::json json = nlohmann::json::parse(status.out);
    uint64_t held_segments = 0, hot_blobs = 0;
    for (const nlohmann::json& node : json["nodes"]) {
      ASSERT_TRUE(node["held"].is_object()) << node.dump();
      held_segments += node["held"]["segments"].get<uint64_t>();
      hot_blobs += node["held"]["hot_blobs"].get<uint64_t>();
    }
    EXPECT_EQ(held_segments, 2u * segments);
    EXPECT_EQ(hot_blobs, segments);
  }
  const ClusterClientStats before = cluster->stats();
  ReadAll(*cluster, &from_previous);
  ReadAll(*cluster, &from_previous);
  const uint64_t spread = cluster->stats().replica_reads - before.replica_reads;
  EXPECT_GT(spread, segments / 2) << "reads alternate between owner and replica";
  EXPECT_EQ(cluster->stats().replica_read_failures, 0u);

  // kill -9 the owner of most first segments: every page stays readable (its segments'
  // replicas answer the second lookup round with their KV), every byte as written.
  std::map<std::string, int> owned;
  for (int i = 0; i < kSequences; ++i) ++owned[cluster->OwnerOf(ns_, seqs_[i], 0)];
  const std::string victim =
      std::max_element(owned.begin(), owned.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  for (auto& node : nodes_) {
    if (IdOf(*cluster, *node) == victim) {
      node->Signal(SIGKILL);
      ASSERT_OK(node->WaitExit(absl::Seconds(10)).status());
    }
  }
  uint32_t fallback = 0;
  for (int i = 0; i < kSequences; ++i) {
    ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster->Match(ns_, seqs_[i]));
    EXPECT_EQ(m.match.ReadablePages(), kPages) << "sequence " << i;
    fallback += m.segments_from_fallback;
    std::vector<std::byte> got(model_[i].size());
    ASSERT_OK(cluster->Read(ns_, m, m.match.ReadablePages(), Host(got)));
    EXPECT_TRUE(got == model_[i]) << "sequence " << i;
  }
  EXPECT_GT(fallback, 0u);
  std::cout << "hot replicas: " << replicated << " segments replicated, " << spread
            << " of the next reads from replicas; after kill -9 of " << victim << ", " << fallback
            << " segments read from their replicas" << std::endl;
}

// Token text on R = 2 nodes survives two losses in a row: after a node is lost (kill -9, its
// lease expires), the survivors copy each segment's text to the node that took the lost
// one's place in the segment's top two (TextRepairer), so when a second node is lost the
// last one still finds every page (as TEXT, rebuildable).
TEST_F(ClusterHandOverTest, TokenTextIsCopiedToNewHoldersSoASecondLossLosesNoText) {
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> args = NodeArgs("0");
    args.push_back("--cluster_lease_ttl=3s");
    args.push_back("--cluster_hot_replicas=1");  // only the writers' TEXT copies
    ASSERT_OK_AND_ASSIGN(auto node, StartNodeWithDataPlane("tcp", uint64_t{64} << 20, args));
    nodes_.push_back(std::move(node));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ClusterClient> cluster, Connect());
  ASSERT_TRUE(WaitNodes(*cluster, 3));
  WriteAll(*cluster, 1200);
  const uint32_t page_tokens = ns_.layout().page_tokens;
  const radix::PrefixHash h0 = radix::NamespaceHash(ns_);
  // Segments (sequence i, segment k) that node `client` holds, KV or TEXT.
  auto held = [&](Client& client) -> absl::StatusOr<int> {
    int count = 0;
    for (int i = 0; i < kSequences; ++i) {
      const absl::Span<const TokenId> seq = seqs_[i];
      for (uint32_t p = 0; p < kPages; p += kSegmentPages) {
        const absl::Span<const TokenId> own =
            seq.subspan(size_t{p} * page_tokens, size_t{kSegmentPages} * page_tokens);
        absl::StatusOr<MatchResult> m =
            p == 0 ? client.Match(ns_, own)
                   : client.Match(
                         ns_,
                         SegmentStart{radix::PrefixHashAt(h0, seq.first(size_t{p} * page_tokens),
                                                          page_tokens),
                                      p},
                         own, LookupPhase::kUnspecified);
        if (!m.ok()) return m.status();
        count += m->matched_pages == kSegmentPages;
      }
    }
    return count;
  };
  const int segments = kSequences * static_cast<int>(kPages / kSegmentPages);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> last,
                       Client::Connect(ClientOptionsFor(nodes_[2]->grpc_address(), "tcp")));
  ASSERT_OK_AND_ASSIGN(const int on_last_before, held(*last));
  // The segments whose two holders were the nodes about to go: lost without the copies.
  const int would_be_lost = segments - on_last_before;
  ASSERT_GT(would_be_lost, 0);

  nodes_[0]->Signal(SIGKILL);
  ASSERT_OK(nodes_[0]->WaitExit(absl::Seconds(10)).status());
  ASSERT_TRUE(WaitNodes(*cluster, 2));  // its lease expired
  // Both survivors end up holding every segment (each copies to the other what only it and
  // the lost node held).
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> second,
                       Client::Connect(ClientOptionsFor(nodes_[1]->grpc_address(), "tcp")));
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  int on_last = on_last_before, on_second = 0;
  while (absl::Now() < deadline) {
    ASSERT_OK_AND_ASSIGN(on_last, held(*last));
    ASSERT_OK_AND_ASSIGN(on_second, held(*second));
    if (on_last == segments && on_second == segments) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(on_last, segments);
  ASSERT_EQ(on_second, segments);
  // The survivors' metrics: registered, two serving members, the segments they copied
  // (counted when a pass ends, which may be after its copies landed).
  for (int n : {1, 2}) {
    ASSERT_OK_AND_ASSIGN(const uint64_t registered,
                         MetricOf(*nodes_[n], "strata_cluster_registered"));
    EXPECT_EQ(registered, 1u);
    ASSERT_OK_AND_ASSIGN(const uint64_t serving,
                         MetricOf(*nodes_[n], "strata_cluster_members{state=\"serving\"}"));
    EXPECT_EQ(serving, 2u);
  }
  uint64_t repaired = 0;
  const absl::Time counted_by = absl::Now() + absl::Seconds(10);
  do {
    repaired = 0;
    for (int n : {1, 2}) {
      ASSERT_OK_AND_ASSIGN(const uint64_t copied,
                           MetricOf(*nodes_[n], "strata_cluster_text_repaired_segments_total"));
      repaired += copied;
    }
  } while (repaired < static_cast<uint64_t>(would_be_lost) && absl::Now() < counted_by &&
           (absl::SleepFor(absl::Milliseconds(50)), true));
  EXPECT_GE(repaired, static_cast<uint64_t>(would_be_lost));

  nodes_[1]->Signal(SIGKILL);
  ASSERT_OK(nodes_[1]->WaitExit(absl::Seconds(10)).status());
  ASSERT_TRUE(WaitNodes(*cluster, 1));
  uint32_t readable = 0;
  for (int i = 0; i < kSequences; ++i) {
    ASSERT_OK_AND_ASSIGN(ClusterMatch m, cluster->Match(ns_, seqs_[i]));
    EXPECT_EQ(m.match.matched_pages, kPages) << "sequence " << i;
    const uint32_t kv = m.match.ReadablePages();
    readable += kv;
    if (kv == 0) continue;
    std::vector<std::byte> got(PagesBytes(ns_.layout(), kv));
    ASSERT_OK(cluster->Read(ns_, m, kv, Host(got)));
    EXPECT_TRUE(got == ModelBytes(seqs_[i], 0, kv)) << "sequence " << i;
  }
  std::cout << "text repair: " << would_be_lost << " of " << segments
            << " segments had their text only on the two nodes lost; copied to the third after "
               "the first loss, every page found after the second ("
            << readable << " of " << kSequences * kPages << " readable as KV)" << std::endl;
}

}  // namespace
}  // namespace strata::integration::cluster_handover_test
