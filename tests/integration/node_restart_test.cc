// A strata-node restarted on its data directory (store/node wiring the RocksDB metadata store
// and the io_uring SSD tier into the engine): real processes, real gRPC and UCX, real
// RocksDB, a real O_DIRECT file. Blobs demoted to SSD before the stop are served again
// byte-identical (the node verifies every chunk on promotion); blobs that were only in DRAM
// come back as TEXT (Stat and Match say so, Match carries their tokens, a put of the same
// bytes fills them again); Match still finds every whole prefix.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client/tools/rebuild_worker.h"
#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/testing/temp_dir.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_restart_test {

using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;
using strata::testing::ProgramResult;
using strata::testing::ScopedTempDir;

namespace {

constexpr uint32_t kPageTokens = 16;
constexpr uint32_t kRootPages = 6;
constexpr uint32_t kChildPages = 3;
constexpr int kSequences = 6;
constexpr char kUcxTls[] = "tcp";

// One token sequence stored as a root blob (pages [0, kRootPages)) and a child blob
// (pages [kRootPages, kRootPages + kChildPages)).
struct StoredSequence {
  std::vector<TokenId> tokens;
  std::vector<std::byte> root_bytes;
  std::vector<std::byte> child_bytes;
  BlobKey root;
  BlobKey child;
};

class NodeRestartTest : public ::testing::Test {
 protected:
  void TearDown() override {
    client_.reset();
    node_.reset();
  }

  // A node on dir_/data (which outlives it), and a client of it.
  void StartNode() {
    client_.reset();
    NodeProcessOptions options;
    options.default_data_dir = false;
    options.args = {"--data_dir=" + dir_ + "/data", "--dram_bytes=32MiB", "--ssd_bytes=32MiB",
                    // Only Evict moves bytes in this test.
                    "--dram_high_watermark=1", "--dram_low_watermark=1"};
    options.env["UCX_TLS"] = kUcxTls;
    ASSERT_OK_AND_ASSIGN(node_, NodeProcess::Start(std::move(options)));
    ASSERT_OK_AND_ASSIGN(client_,
                         Client::Connect(ClientOptionsFor(node_->grpc_address(), kUcxTls)));
  }

  StoredSequence WriteRoot(const Namespace& ns, uint64_t seed) {
    StoredSequence s;
    s.tokens = RandomTokens(seed, (kRootPages + kChildPages) * kPageTokens);
    s.root_bytes = ModelBytes(s.tokens, 0, kRootPages);
    s.child_bytes = ModelBytes(s.tokens, kRootPages, kChildPages);
    absl::StatusOr<WriteResult> root = client_->Write(
        ns, std::nullopt, absl::MakeConstSpan(s.tokens).first(kRootPages * kPageTokens),
        Source(s.root_bytes));
    EXPECT_OK(root);
    if (root.ok()) s.root = root->key;
    return s;
  }

  void WriteChild(const Namespace& ns, StoredSequence* s) {
    absl::StatusOr<WriteResult> child = client_->Write(
        ns, Parent{s->root, kRootPages},
        absl::MakeConstSpan(s->tokens).subspan(kRootPages * kPageTokens), Source(s->child_bytes));
    EXPECT_OK(child);
    if (child.ok()) s->child = child->key;
  }

  std::vector<Tier> TiersOf(const BlobKey& key) {
    absl::StatusOr<BlobInfo> info = client_->Stat(key);
    EXPECT_OK(info);
    return info.ok() ? info->tiers : std::vector<Tier>{};
  }

  ScopedTempDir temp_dir_{"strata-node-restart"};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<NodeProcess> node_;
  std::unique_ptr<Client> client_;
};

TEST_F(NodeRestartTest, SsdBlobsComeBackAndDramOnlyBlobsBecomeText) {
  const Namespace ns = ClientTestNamespace("restart");
  ASSERT_NO_FATAL_FAILURE(StartNode());

  // Roots first, all demoted to SSD; then the children, which stay in DRAM only.
  std::vector<StoredSequence> sequences;
  for (int i = 0; i < kSequences; ++i) sequences.push_back(WriteRoot(ns, 100 + i));
  ASSERT_OK_AND_ASSIGN(EvictResult evicted, client_->Evict(Tier::kDram, uint64_t{1} << 30));
  EXPECT_EQ(evicted.blobs_demoted, static_cast<uint64_t>(kSequences));
  EXPECT_EQ(evicted.blobs_dropped, 0u);
  for (StoredSequence& s : sequences) {
    EXPECT_EQ(TiersOf(s.root), std::vector<Tier>{Tier::kSsd});
    WriteChild(ns, &s);
    EXPECT_EQ(TiersOf(s.child), std::vector<Tier>{Tier::kDram});
  }
  // Sequence 0's root is read once more: promoted, it is in DRAM and on SSD.
  std::vector<std::byte> back(sequences[0].root_bytes.size());
  ASSERT_OK(client_->Read(ns, {ReadRange{sequences[0].root, 0, kRootPages}}, {Host(back)}));
  EXPECT_TRUE(back == sequences[0].root_bytes);
  EXPECT_EQ(TiersOf(sequences[0].root), (std::vector<Tier>{Tier::kDram, Tier::kSsd}));
  // A DRAM-only root (no child): comes back as TEXT with nothing below it.
  StoredSequence lone = WriteRoot(ns, 999);
  EXPECT_EQ(TiersOf(lone.root), std::vector<Tier>{Tier::kDram});

  // A clean stop (SIGTERM: drain, close the metadata store), then a start on the same dir.
  node_->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(const int code, node_->WaitExit(absl::Seconds(30)));
  ASSERT_EQ(code, 0) << node_->StderrText();
  ASSERT_NO_FATAL_FAILURE(StartNode());
  const std::string log = node_->StderrText();
  const size_t restart_line = log.rfind('\n', log.find("] restart: "));
  std::printf("restarted:\n%s%s\n",
              log.substr(restart_line + 1, log.find('\n', restart_line + 1) - restart_line).c_str(),
              node_->StdoutText().c_str());
  EXPECT_EQ(node_->ReadyField("restored"), std::to_string(2 * kSequences + 1));
  EXPECT_EQ(node_->ReadyField("restored_ssd"), std::to_string(kSequences));
  EXPECT_EQ(node_->ReadyField("restored_text"), std::to_string(kSequences + 1));
  EXPECT_NE(node_->StderrText().find("restart: " + std::to_string(2 * kSequences + 1) +
                                     " blobs back in the index"),
            std::string::npos)
      << node_->StderrText();

  ASSERT_OK_AND_ASSIGN(NodeTiers tiers, client_->Tiers());
  EXPECT_EQ(tiers.text.blobs, static_cast<uint64_t>(kSequences + 1));
  EXPECT_EQ(tiers.engine.blobs, static_cast<uint64_t>(2 * kSequences + 1));
  ASSERT_EQ(tiers.tiers.size(), 2u);
  EXPECT_EQ(tiers.tiers[0].tier, Tier::kDram);
  EXPECT_EQ(tiers.tiers[0].blobs, 0u);  // DRAM did not survive
  EXPECT_EQ(tiers.tiers[1].tier, Tier::kSsd);
  EXPECT_EQ(tiers.tiers[1].blobs, static_cast<uint64_t>(kSequences));

  for (const StoredSequence& s : sequences) {
    // The whole prefix still matches: the root on SSD, the child as TEXT with its tokens.
    ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, s.tokens));
    EXPECT_EQ(match.matched_pages, kRootPages + kChildPages);
    ASSERT_EQ(match.segments.size(), 2u);
    EXPECT_EQ(match.segments[0].blob, s.root);
    EXPECT_EQ(match.segments[0].tier, Tier::kSsd);
    EXPECT_EQ(match.segments[1].blob, s.child);
    EXPECT_EQ(match.segments[1].tier, Tier::kText);
    EXPECT_EQ(match.segments[1].tokens,
              std::vector<TokenId>(s.tokens.begin() + kRootPages * kPageTokens, s.tokens.end()));
    EXPECT_EQ(match.ReadablePages(), kRootPages);

    // The SSD root reads back byte-identical (promoted, every chunk verified by the node
    // and again by the client); then it is in DRAM and still on SSD.
    std::vector<std::byte> kv(PagesBytes(ns.layout(), kRootPages), std::byte{0xEE});
    ASSERT_OK(client_->Read(ns, match.segments, match.ReadablePages(), Host(kv)));
    EXPECT_TRUE(kv == s.root_bytes);
    EXPECT_EQ(TiersOf(s.root), (std::vector<Tier>{Tier::kDram, Tier::kSsd}));

    // The TEXT child: Stat says so and keeps its tokens; its bytes cannot be read.
    ASSERT_OK_AND_ASSIGN(BlobInfo child, client_->Stat(s.child, /*include_tokens=*/true));
    EXPECT_EQ(child.tiers, std::vector<Tier>{Tier::kText});
    EXPECT_EQ(child.tokens, match.segments[1].tokens);
    ASSERT_TRUE(child.parent.has_value());
    EXPECT_EQ(child.parent->key, s.root);
    std::vector<std::byte> child_kv(s.child_bytes.size());
    EXPECT_CODE(client_->Read(ns, {ReadRange{s.child, 0, kChildPages}}, {Host(child_kv)}),
                absl::StatusCode::kNotFound);
  }
  EXPECT_EQ(TiersOf(lone.root), std::vector<Tier>{Tier::kText});
  ASSERT_OK_AND_ASSIGN(MatchResult lone_match, client_->Match(ns, lone.tokens));
  EXPECT_EQ(lone_match.matched_pages, kRootPages);
  EXPECT_EQ(lone_match.ReadablePages(), 0u);

  // A TEXT blob is filled again by a put of the same bytes (what a rebuild worker does).
  ASSERT_OK_AND_ASSIGN(
      WriteResult refilled,
      client_->Write(ns, Parent{sequences[1].root, kRootPages},
                     absl::MakeConstSpan(sequences[1].tokens).subspan(kRootPages * kPageTokens),
                     Source(sequences[1].child_bytes)));
  EXPECT_EQ(refilled.key, sequences[1].child);
  EXPECT_EQ(TiersOf(sequences[1].child), std::vector<Tier>{Tier::kDram});
  std::vector<std::byte> whole(PagesBytes(ns.layout(), kRootPages + kChildPages));
  ASSERT_OK_AND_ASSIGN(MatchResult full, client_->Match(ns, sequences[1].tokens));
  ASSERT_EQ(full.ReadablePages(), kRootPages + kChildPages);
  ASSERT_OK(client_->Read(ns, full.segments, full.ReadablePages(), Host(whole)));
  EXPECT_TRUE(whole == ModelBytes(sequences[1].tokens, 0, kRootPages + kChildPages));
  EXPECT_EQ(client_->stats().checksum_failures, 0u);

  // A second restart, this time after kill -9: the state written since (promotions, the
  // refill) is there too.
  node_->Signal(SIGKILL);
  ASSERT_OK_AND_ASSIGN(const int killed, node_->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(killed, 128 + SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartNode());
  EXPECT_EQ(node_->ReadyField("restored"), std::to_string(2 * kSequences + 1));
  EXPECT_EQ(node_->ReadyField("restored_ssd"), std::to_string(kSequences));
  for (const StoredSequence& s : sequences) {
    EXPECT_EQ(TiersOf(s.root), std::vector<Tier>{Tier::kSsd});
    std::vector<std::byte> kv(s.root_bytes.size());
    ASSERT_OK(client_->Read(ns, {ReadRange{s.root, 0, kRootPages}}, {Host(kv)}));
    EXPECT_TRUE(kv == s.root_bytes);
  }
  // The refilled child was only in DRAM: TEXT again.
  EXPECT_EQ(TiersOf(sequences[1].child), std::vector<Tier>{Tier::kText});

  // The TEXT blobs are rebuilt through the reference worker (RunRebuildWorker: pull the
  // tasks, recompute with the ReferenceModel, put): byte-identical to what was written
  // before the kill, with the original checksums.
  std::vector<uint64_t> checksums_before;
  for (const StoredSequence& s : sequences) {
    ASSERT_OK_AND_ASSIGN(RebuildRequestResult requested, client_->RequestRebuild(s.child, true));
    EXPECT_EQ(requested.queued, 1u);  // the child; its root is on SSD
    EXPECT_EQ(requested.resident, 1u);
    ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(s.child));
    checksums_before.push_back(info.checksum);
  }
  ASSERT_OK(client_->RequestRebuild(lone.root, false).status());
  tools::RebuildWorkerOptions worker;
  worker.idle_exit = absl::ZeroDuration();  // stop when the queue is empty
  const tools::RebuildWorkerSummary rebuilt =
      tools::RunRebuildWorker(*client_, TestModel(), worker);
  ASSERT_OK(rebuilt.status);
  EXPECT_EQ(rebuilt.rebuilt, static_cast<uint64_t>(kSequences + 1));
  EXPECT_EQ(rebuilt.checksum_mismatches, 0u);
  for (size_t i = 0; i < sequences.size(); ++i) {
    const StoredSequence& s = sequences[i];
    ASSERT_OK_AND_ASSIGN(BlobInfo info, client_->Stat(s.child));
    EXPECT_EQ(info.tiers, std::vector<Tier>{Tier::kDram});
    EXPECT_EQ(info.checksum, checksums_before[i]);
    ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, s.tokens));
    ASSERT_EQ(match.ReadablePages(), kRootPages + kChildPages);
    std::vector<std::byte> all(PagesBytes(ns.layout(), kRootPages + kChildPages));
    ASSERT_OK(client_->Read(ns, match.segments, match.ReadablePages(), Host(all)));
    EXPECT_TRUE(all == ModelBytes(s.tokens, 0, kRootPages + kChildPages)) << i;
  }
  std::vector<std::byte> lone_kv(lone.root_bytes.size());
  ASSERT_OK(client_->Read(ns, {ReadRange{lone.root, 0, kRootPages}}, {Host(lone_kv)}));
  EXPECT_TRUE(lone_kv == lone.root_bytes);
  EXPECT_EQ(client_->stats().checksum_failures, 0u);
}

// Without metadata nothing survives, and a node refuses meta = false over a directory whose
// metadata store would then go stale.
TEST_F(NodeRestartTest, MetaOffStartsEmptyAndIsRefusedOverAnExistingStore) {
  const std::string data = dir_ + "/data";
  const std::vector<std::string> base = {
      "--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0",
      "--http_listen=127.0.0.1:0", "--dram_bytes=32MiB",
      "--ssd_bytes=1MiB",          "--data_dir=" + data};
  ASSERT_NO_FATAL_FAILURE(StartNode());  // creates data/meta
  node_->Signal(SIGTERM);
  ASSERT_OK(node_->WaitExit(absl::Seconds(30)).status());

  std::vector<std::string> args = base;
  args.push_back("--meta=false");
  const ProgramResult refused = NodeProcess::RunToExit(args);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("FAILED_PRECONDITION: meta = false but " + data + "/meta"),
            std::string::npos)
      << refused.err;

  // With its own empty metadata dir named but meta off: that dir holds no store; runs.
  std::filesystem::remove_all(data + "/meta");
  NodeProcessOptions options;
  options.default_data_dir = false;
  options.args = {"--data_dir=" + data, "--meta=false"};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, NodeProcess::Start(std::move(options)));
  EXPECT_EQ(node->ReadyField("restored"), "0");
  EXPECT_NE(node->StderrText().find("metadata: off"), std::string::npos) << node->StderrText();
  EXPECT_FALSE(std::filesystem::exists(data + "/meta"));
}

}  // namespace
}  // namespace strata::integration::node_restart_test
