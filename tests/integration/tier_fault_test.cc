// Faults under strata-node's SSD tier and metadata store, on real processes (real gRPC,
// UCX, RocksDB and an io_uring O_DIRECT file):
//   (a) kill -9 while a writer puts blobs and a second thread evicts DRAM (demotions in
//       flight), at a seeded moment, then a restart on the same data dir: every blob the
//       writer was told committed is intact (byte-identical), TEXT, or absent — never
//       corrupt; a read returns the right bytes or a clean NOT_FOUND / DATA_LOSS;
//   (b) a full disk under the SSD file (a small tmpfs; root only): with a sparse file,
//       demotions fail with RESOURCE_EXHAUSTED inside the node, which keeps serving puts
//       and reads from DRAM; with a preallocated file larger than the disk the node refuses
//       to start;
//   (c) a corrupted SSD extent, overwritten behind the running node's back: the read is
//       DATA_LOSS, the blob becomes TEXT, every other blob is still served.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"
#include "strata/testing/temp_dir.h"
#include "strata/testing/tmpfs.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::tier_fault_test {

using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;
using strata::testing::ProgramResult;

namespace {

constexpr uint32_t kPageTokens = 16;
constexpr char kUcxTls[] = "tcp";

// Deterministic blob bytes (the node does not care what KV bytes mean; these are cheap).
std::vector<std::byte> PatternBytes(uint64_t seed, size_t size) {
  std::vector<std::byte> bytes(size);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; i += 8) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    const uint64_t word = x;
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, size - i));
  }
  return bytes;
}

// The key the node gives the blob ending at the last whole page of `sequence`.
BlobKey KeyOf(const Namespace& ns, absl::Span<const TokenId> sequence) {
  return BlobKey{radix::PrefixHashAt(radix::NamespaceHash(ns), sequence, kPageTokens)};
}

// A node on `data_dir` (which outlives the NodeProcess) with `args` on top.
absl::StatusOr<std::unique_ptr<NodeProcess>> StartOn(const std::string& data_dir,
                                                     std::vector<std::string> args) {
  NodeProcessOptions options;
  options.default_data_dir = false;
  options.args = std::move(args);
  options.args.push_back("--data_dir=" + data_dir);
  options.env["UCX_TLS"] = kUcxTls;
  return NodeProcess::Start(std::move(options));
}

absl::StatusOr<std::unique_ptr<Client>> ConnectTo(const NodeProcess& node) {
  return Client::Connect(ClientOptionsFor(node.grpc_address(), kUcxTls));
}

using ScopedDir = strata::testing::ScopedTempDir;

// ---------------------------------------------------------------- (a) kill -9

// One blob the writer tried to put: its own tokens continue `parent` (or start a sequence).
struct Attempt {
  std::vector<TokenId> sequence;  // the whole sequence up to the blob's end
  uint32_t first_page = 0;
  uint32_t pages = 0;
  uint64_t bytes_seed = 0;
  BlobKey key;         // computed
  bool acked = false;  // Write returned OK
};

constexpr uint32_t kRootPages = 4;
constexpr uint32_t kChildPages = 4;

// Puts sequences (a root, then a child continuing it) until `stop`; records every attempt.
void WriterLoop(Client* client, const Namespace& ns, uint64_t first_seed, std::atomic<bool>* stop,
                absl::Mutex* mu, std::vector<Attempt>* attempts, std::atomic<int>* acked) {
  const uint64_t page_bytes = ns.layout().BytesPerPage();
  for (uint64_t seed = first_seed; !stop->load(); ++seed) {
    const std::vector<TokenId> tokens =
        RandomTokens(seed, (kRootPages + kChildPages) * kPageTokens);
    std::optional<Parent> parent;
    for (const uint32_t part : {0u, 1u}) {
      Attempt attempt;
      attempt.first_page = part == 0 ? 0 : kRootPages;
      attempt.pages = part == 0 ? kRootPages : kChildPages;
      const uint32_t end = attempt.first_page + attempt.pages;
      attempt.sequence.assign(tokens.begin(), tokens.begin() + end * kPageTokens);
      attempt.bytes_seed = seed * 2 + part;
      attempt.key = KeyOf(ns, attempt.sequence);
      const std::vector<std::byte> bytes =
          PatternBytes(attempt.bytes_seed, attempt.pages * page_bytes);
      size_t index = 0;
      {
        absl::MutexLock lock(mu);
        index = attempts->size();
        attempts->push_back(attempt);
      }
      const absl::StatusOr<WriteResult> written = client->Write(
          ns, parent,
          absl::MakeConstSpan(attempt.sequence).subspan(attempt.first_page * kPageTokens),
          Source(bytes), CallOptions::WithTimeout(absl::Seconds(5)));
      if (!written.ok()) break;  // the node is gone (or full): next sequence
      EXPECT_EQ(written->key, attempt.key);
      {
        absl::MutexLock lock(mu);
        (*attempts)[index].acked = true;
      }
      acked->fetch_add(1);
      parent = Parent{attempt.key, end};
    }
  }
}

// Evicts DRAM (demotions to SSD) until `stop`.
void EvictorLoop(Client* client, std::atomic<bool>* stop, std::atomic<uint64_t>* demoted) {
  while (!stop->load()) {
    absl::StatusOr<EvictResult> evicted =
        client->Evict(Tier::kDram, uint64_t{1} << 20, CallOptions::WithTimeout(absl::Seconds(5)));
    if (evicted.ok()) demoted->fetch_add(evicted->blobs_demoted);
    absl::SleepFor(absl::Milliseconds(3));
  }
}

struct CheckCounts {
  int intact = 0;
  int text = 0;
  int absent = 0;
  int lost_cleanly = 0;  // present, but a read answered NOT_FOUND or DATA_LOSS
  int acked_absent = 0;
};

// Checks every attempt against a node restarted after the kill. Fails the test on any
// corrupt answer (wrong bytes or tokens, or an unexpected status).
CheckCounts CheckAttempts(Client* client, const Namespace& ns,
                          const std::vector<Attempt>& attempts) {
  CheckCounts counts;
  const uint64_t page_bytes = ns.layout().BytesPerPage();
  for (const Attempt& a : attempts) {
    const std::string what = absl::StrCat(a.key.ToHex(), a.acked ? " (acked)" : " (in flight)");
    absl::StatusOr<BlobInfo> info = client->Stat(a.key, /*include_tokens=*/true);
    if (absl::IsNotFound(info.status())) {
      ++counts.absent;
      if (a.acked) ++counts.acked_absent;
      continue;
    }
    if (!info.ok()) {
      ADD_FAILURE() << what << ": Stat answered " << info.status();
      continue;
    }
    EXPECT_EQ(info->pages, a.pages) << what;
    EXPECT_TRUE(std::equal(info->tokens.begin(), info->tokens.end(),
                           a.sequence.begin() + a.first_page * kPageTokens, a.sequence.end()) &&
                info->tokens.size() == a.pages * kPageTokens)
        << what << ": tokens differ";
    std::vector<std::byte> back(a.pages * page_bytes, std::byte{0xEE});
    const absl::Status read = client->Read(ns, {ReadRange{a.key, 0, a.pages}}, {Host(back)});
    if (info->tiers == std::vector<Tier>{Tier::kText}) {
      ++counts.text;
      EXPECT_CODE(read, absl::StatusCode::kNotFound) << what;
      continue;
    }
    if (read.ok()) {
      EXPECT_TRUE(back == PatternBytes(a.bytes_seed, back.size())) << what << ": CORRUPT bytes";
      ++counts.intact;
    } else {
      EXPECT_TRUE(absl::IsNotFound(read) || absl::IsDataLoss(read)) << what << ": " << read;
      ++counts.lost_cleanly;
    }
  }
  return counts;
}

TEST(TierFaultTest, KillNineDuringPutsAndDemotionsNeverCorrupts) {
  ScopedDir dir("strata-tier-kill");
  ASSERT_FALSE(dir.path().empty());
  const std::string data_dir = dir.path() + "/data";
  // Small tiers so that the writer fills DRAM and the SSD within the round: demotions,
  // drops to TEXT and SSD evictions all happen; the background mover runs too.
  const std::vector<std::string> args = {"--dram_bytes=8MiB", "--ssd_bytes=12MiB",
                                         "--dram_high_watermark=0.8", "--dram_low_watermark=0.5"};
  const Namespace ns = ClientTestNamespace("kill9");
  std::vector<Attempt> attempts;  // over every round
  constexpr int kRounds = 3;
  std::mt19937_64 rng(20261129);
  const absl::Time test_start = absl::Now();
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, StartOn(data_dir, args));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, ConnectTo(*node));
    if (round > 0) {
      std::printf("round %d: restart %s", round,
                  node->StdoutText().substr(node->StdoutText().find("ready")).c_str());
      const CheckCounts c = CheckAttempts(client.get(), ns, attempts);
      std::printf(
          "round %d: %zu attempts so far: %d intact, %d TEXT, %d read NOT_FOUND/DATA_LOSS, "
          "%d absent (%d of them acknowledged)\n",
          round, attempts.size(), c.intact, c.text, c.lost_cleanly, c.absent, c.acked_absent);
      // A commit's metadata is in RocksDB's log before CommitPut answers; a process crash
      // does not lose it (node_engine_meta.cc), and nothing here deletes or pushes TEXT out.
      EXPECT_EQ(c.acked_absent, 0);
      EXPECT_GT(c.intact, 0);
      if (HasFailure()) return;
    }
    absl::Mutex mu;
    std::atomic<bool> stop{false};
    std::atomic<bool> stop_evicting{false};
    std::atomic<int> acked{0};
    std::atomic<uint64_t> demoted{0};
    std::vector<Attempt> round_attempts;
    std::thread writer(WriterLoop, client.get(), ns, uint64_t{1000} * (round + 1), &stop, &mu,
                       &round_attempts, &acked);
    std::thread evictor(EvictorLoop, client.get(), &stop_evicting, &demoted);
    // The kill: after some puts and demotions, plus a seeded random delay; then the
    // evictor stops and the writer gets two more puts acknowledged, so that the kill finds
    // blobs in DRAM only (the evictor may have demoted every earlier one: on a loaded
    // machine it keeps up with the writer), which the restart must show as TEXT.
    absl::Time deadline = absl::Now() + absl::Seconds(15);
    while ((acked.load() < 24 || demoted.load() < 4) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    absl::SleepFor(absl::Milliseconds(static_cast<int64_t>(rng() % 400)));
    stop_evicting.store(true);
    evictor.join();
    const int acked_before = acked.load();
    deadline = absl::Now() + absl::Seconds(15);
    while (acked.load() < acked_before + 2 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    node->Signal(SIGKILL);
    stop.store(true);
    writer.join();
    ASSERT_OK_AND_ASSIGN(const int code, node->WaitExit(absl::Seconds(10)));
    EXPECT_EQ(code, 128 + SIGKILL);
    std::printf("round %d: killed after %d acknowledged puts and %llu demotions\n", round,
                acked.load(), static_cast<unsigned long long>(demoted.load()));
    ASSERT_GE(acked.load(), 24) << node->StderrText();
    ASSERT_GE(demoted.load(), 4u) << node->StderrText();
    attempts.insert(attempts.end(), round_attempts.begin(), round_attempts.end());
  }
  // The last restart is checked and stopped cleanly.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, StartOn(data_dir, args));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, ConnectTo(*node));
  const CheckCounts c = CheckAttempts(client.get(), ns, attempts);
  std::printf(
      "final: %zu attempts: %d intact, %d TEXT, %d read NOT_FOUND/DATA_LOSS, %d absent "
      "(%d of them acknowledged); %s in all\n",
      attempts.size(), c.intact, c.text, c.lost_cleanly, c.absent, c.acked_absent,
      absl::FormatDuration(absl::Now() - test_start).c_str());
  EXPECT_EQ(c.acked_absent, 0);
  EXPECT_GT(c.intact, 0);
  EXPECT_GT(c.text, 0);
  EXPECT_EQ(client->stats().checksum_failures, 0u);
  client.reset();
  node->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(const int code, node->WaitExit(absl::Seconds(30)));
  EXPECT_EQ(code, 0) << node->StderrText();
}

// ---------------------------------------------------------------- (b) full disk

// An 8 MiB tmpfs for the SSD file. Skips (with the reason) unless root and mount work.
class FullDiskTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSize = uint64_t{8} << 20;

  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    absl::StatusOr<std::unique_ptr<strata::testing::ScopedTmpfs>> disk =
        strata::testing::ScopedTmpfs::Mount(kSize, "strata-tier-full-disk");
    if (!disk.ok()) GTEST_SKIP() << "no 8 MiB tmpfs: " << disk.status();
    disk_ = *std::move(disk);
  }

  std::string ssd_path() const { return disk_->path() + "/ssd.tier"; }

  ScopedDir dir_{"strata-tier-full"};
  std::unique_ptr<strata::testing::ScopedTmpfs> disk_;
};

TEST_F(FullDiskTest, DemotionsFailButTheNodeKeepsServingFromDram) {
  const std::string data_dir = dir_.path() + "/data";
  auto started = StartOn(
      data_dir, {"--ssd_path=" + ssd_path(), "--ssd_preallocate=false", "--ssd_bytes=32MiB",
                 "--dram_bytes=24MiB", "--dram_high_watermark=0.9", "--dram_low_watermark=0.5"});
  if (absl::IsFailedPrecondition(started.status()) &&
      started.status().message().find("O_DIRECT") != absl::string_view::npos) {
    GTEST_SKIP() << "this kernel's tmpfs refuses O_DIRECT: " << started.status();
  }
  ASSERT_OK(started.status());
  std::unique_ptr<NodeProcess> node = *std::move(started);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, ConnectTo(*node));
  const Namespace ns = ClientTestNamespace("fulldisk");
  constexpr uint32_t kPages = 16;  // 256 KiB blobs
  const uint64_t blob_bytes = PagesBytes(ns.layout(), kPages);

  struct Written {
    std::vector<TokenId> tokens;
    std::vector<std::byte> bytes;
    BlobKey key;
  };
  std::vector<Written> blobs;
  const auto put = [&](uint64_t seed) {
    Written w{RandomTokens(seed, kPages * kPageTokens), PatternBytes(seed, blob_bytes), {}};
    absl::StatusOr<WriteResult> written =
        client->Write(ns, std::nullopt, w.tokens, Source(w.bytes));
    EXPECT_OK(written);
    if (written.ok()) w.key = written->key;
    blobs.push_back(std::move(w));
  };
  const auto read_back = [&](const Written& w) {
    std::vector<std::byte> back(blob_bytes);
    const absl::Status read = client->Read(ns, {ReadRange{w.key, 0, kPages}}, {Host(back)});
    EXPECT_OK(read) << w.key.ToHex();
    EXPECT_TRUE(read.ok() && back == w.bytes) << w.key.ToHex();
  };

  // 20 MiB in DRAM, then everything asked to move to SSD: only what fits on the 8 MiB disk
  // is demoted; the rest fails with ENOSPC and stays in DRAM.
  for (uint64_t i = 0; i < 80; ++i) put(i);
  ASSERT_OK_AND_ASSIGN(EvictResult first, client->Evict(Tier::kDram, uint64_t{1} << 30));
  std::printf("first Evict(DRAM): %llu demoted, %llu dropped, %llu bytes freed\n",
              static_cast<unsigned long long>(first.blobs_demoted),
              static_cast<unsigned long long>(first.blobs_dropped),
              static_cast<unsigned long long>(first.bytes_freed));
  EXPECT_GT(first.blobs_demoted, 0u);
  EXPECT_LE(first.blobs_demoted * blob_bytes, uint64_t{8} << 20);
  EXPECT_EQ(first.blobs_dropped, 0u);  // a failed demotion keeps the DRAM copy
  int in_dram = 0;
  for (const Written& w : blobs) {
    ASSERT_OK_AND_ASSIGN(BlobInfo info, client->Stat(w.key));
    if (info.tiers == std::vector<Tier>{Tier::kDram}) ++in_dram;
  }
  EXPECT_EQ(in_dram, 80 - static_cast<int>(first.blobs_demoted));
  EXPECT_NE(node->StderrText().find("failed: RESOURCE_EXHAUSTED"), std::string::npos)
      << node->StderrText();

  // The disk is still full: nothing more is demoted.
  ASSERT_OK_AND_ASSIGN(EvictResult second, client->Evict(Tier::kDram, uint64_t{1} << 30));
  EXPECT_EQ(second.blobs_demoted, 0u);

  // The node keeps serving: every blob reads back (the demoted ones from SSD), and more
  // puts succeed (DRAM pressure frees DRAM copies that are also on SSD, and drops
  // other leaves to TEXT, without any I/O).
  for (const Written& w : blobs) read_back(w);
  for (uint64_t i = 80; i < 120; ++i) put(i);
  for (size_t i = 80; i < blobs.size(); ++i) read_back(blobs[i]);
  ASSERT_OK_AND_ASSIGN(NodeTiers tiers, client->Tiers());
  std::printf("after: DRAM %llu blobs, SSD %llu blobs (%llu demotions), TEXT %llu blobs\n",
              static_cast<unsigned long long>(tiers.tiers[0].blobs),
              static_cast<unsigned long long>(tiers.tiers[1].blobs),
              static_cast<unsigned long long>(tiers.tiers[0].demotions),
              static_cast<unsigned long long>(tiers.text.blobs));
  ASSERT_OK(client->Health().status());
  EXPECT_EQ(client->stats().checksum_failures, 0u);
  // Above the high watermark with nothing demotable, the background mover keeps trying
  // (one WARNING per failed demotion): shown, not asserted (see the store/node report).
  const auto failed_demotions = [&] {
    const std::string log = node->StderrText();
    int n = 0;
    for (size_t at = log.find("demotion of"); at != std::string::npos;
         at = log.find("demotion of", at + 1)) {
      ++n;
    }
    return n;
  };
  const int logged = failed_demotions();
  absl::SleepFor(absl::Seconds(1));
  std::printf("failed demotions logged: %d, one idle second later: %d\n", logged,
              failed_demotions());
}

// The metadata store on a small disk: an idle node's store takes little space (RocksDB used
// to reserve ~35 MiB for its write-ahead log up front, more than this whole disk), and a
// restart once the disk is full exits 1 with a message (RocksDB 7.8 aborted inside
// DB::Open).
TEST_F(FullDiskTest, MetadataOnAFullDiskRefusesToRestartWithAMessage) {
  const std::string data_dir = disk_->path() + "/data";
  const std::vector<std::string> args = {"--grpc_listen=127.0.0.1:0",
                                         "--dataplane_listen=127.0.0.1:0",
                                         "--http_listen=",
                                         "--dram_bytes=16MiB",
                                         "--ssd_bytes=0",
                                         "--data_dir=" + data_dir};
  {
    NodeProcessOptions options;
    options.args = args;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, NodeProcess::Start(options));
    uint64_t meta_bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir + "/meta")) {
      struct stat st {};
      if (::stat(entry.path().c_str(), &st) == 0) meta_bytes += st.st_blocks * 512;
    }
    EXPECT_LT(meta_bytes, uint64_t{2} << 20) << "an idle node's metadata store on disk";
    node->Signal(SIGTERM);
    ASSERT_OK_AND_ASSIGN(const int code, node->WaitExit(absl::Seconds(30)));
    ASSERT_EQ(code, 0) << node->StderrText();
  }
  {
    // Fill the disk.
    const int fd = ::open((disk_->path() + "/fill").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::vector<char> chunk(64 << 10, 'x');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  }
  const ProgramResult result = NodeProcess::RunToExit(args);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("strata-node: cannot start: RESOURCE_EXHAUSTED: metadata store: " +
                            data_dir + "/meta: its filesystem has "),
            std::string::npos)
      << result.err;
}

TEST_F(FullDiskTest, PreallocatedSsdLargerThanTheDiskRefusesToStart) {
  const ProgramResult result = NodeProcess::RunToExit(
      {"--grpc_listen=127.0.0.1:0", "--dataplane_listen=127.0.0.1:0", "--http_listen=127.0.0.1:0",
       "--dram_bytes=16MiB", "--data_dir=" + dir_.path() + "/data", "--ssd_path=" + ssd_path(),
       "--ssd_bytes=32MiB"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("strata-node: cannot start: RESOURCE_EXHAUSTED: SSD tier: "),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.out.find("ready"), std::string::npos) << result.out;
}

// ---------------------------------------------------------------- (c) corrupted extent

// [begin, end) of the file's bytes that are not zero, in 4 KiB blocks.
std::pair<uint64_t, uint64_t> NonZeroRange(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path << ": " << std::strerror(errno);
  std::vector<char> block(4096);
  uint64_t begin = UINT64_MAX, end = 0;
  for (uint64_t at = 0;; at += block.size()) {
    const ssize_t n = ::pread(fd, block.data(), block.size(), static_cast<off_t>(at));
    if (n <= 0) break;
    if (std::any_of(block.begin(), block.begin() + n, [](char c) { return c != 0; })) {
      begin = std::min(begin, at);
      end = at + static_cast<uint64_t>(n);
    }
  }
  ::close(fd);
  return {begin, end};
}

TEST(CorruptSsdExtentTest, ReadIsDataLossBlobBecomesTextOthersAreServed) {
  ScopedDir dir("strata-tier-corrupt");
  ASSERT_FALSE(dir.path().empty());
  const std::string data_dir = dir.path() + "/data";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       StartOn(data_dir, {"--ssd_bytes=16MiB", "--dram_high_watermark=1",
                                          "--dram_low_watermark=1"}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, ConnectTo(*node));
  const Namespace ns = ClientTestNamespace("corrupt");
  constexpr uint32_t kPages = 8;  // 128 KiB blobs
  const uint64_t blob_bytes = PagesBytes(ns.layout(), kPages);
  const std::string ssd_file = data_dir + "/ssd.tier";

  std::vector<std::vector<TokenId>> tokens;
  std::vector<BlobKey> keys;
  const auto put = [&](uint64_t seed) {
    tokens.push_back(RandomTokens(seed, kPages * kPageTokens));
    const std::vector<std::byte> bytes = PatternBytes(seed, blob_bytes);
    absl::StatusOr<WriteResult> written =
        client->Write(ns, std::nullopt, tokens.back(), Source(bytes));
    EXPECT_OK(written);
    keys.push_back(written.ok() ? written->key : BlobKey{});
  };
  const auto read = [&](size_t i) {
    std::vector<std::byte> back(blob_bytes);
    const absl::Status status = client->Read(ns, {ReadRange{keys[i], 0, kPages}}, {Host(back)});
    if (status.ok() && back != PatternBytes(i, blob_bytes)) {
      return absl::InternalError("OK with the wrong bytes");
    }
    return status;
  };

  // The victim alone is demoted first: the file's only non-zero bytes are its extent.
  put(0);
  ASSERT_OK_AND_ASSIGN(EvictResult evicted, client->Evict(Tier::kDram, uint64_t{1} << 30));
  ASSERT_EQ(evicted.blobs_demoted, 1u);
  const auto [begin, end] = NonZeroRange(ssd_file);
  ASSERT_LT(begin, end) << "nothing written to " << ssd_file;
  EXPECT_LE(end - begin, uint64_t{128} << 10);
  // Four more, all demoted; two read back once (promoted: in DRAM and on SSD).
  for (uint64_t i = 1; i <= 4; ++i) put(i);
  ASSERT_OK_AND_ASSIGN(evicted, client->Evict(Tier::kDram, uint64_t{1} << 30));
  ASSERT_EQ(evicted.blobs_demoted, 4u);
  ASSERT_OK(read(1));
  ASSERT_OK(read(2));

  // Flip the first 4 KiB block of the victim's extent (its first chunk) under the node.
  {
    const int fd = ::open(ssd_file.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    std::vector<char> block(4096);
    ASSERT_EQ(::pread(fd, block.data(), block.size(), static_cast<off_t>(begin)), 4096);
    for (char& c : block) c = static_cast<char>(~c);
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), static_cast<off_t>(begin)), 4096);
    ASSERT_EQ(::fdatasync(fd), 0);
    ::close(fd);
  }

  EXPECT_CODE(read(0), absl::StatusCode::kDataLoss);
  ASSERT_OK_AND_ASSIGN(BlobInfo victim, client->Stat(keys[0]));
  EXPECT_EQ(victim.tiers, std::vector<Tier>{Tier::kText});
  ASSERT_OK_AND_ASSIGN(MatchResult match, client->Match(ns, tokens[0]));
  EXPECT_EQ(match.matched_pages, kPages);
  ASSERT_EQ(match.segments.size(), 1u);
  EXPECT_EQ(match.segments[0].tier, Tier::kText);
  EXPECT_EQ(match.segments[0].tokens, tokens[0]);
  EXPECT_CODE(read(0), absl::StatusCode::kNotFound);  // TEXT now: no bytes to read
  EXPECT_NE(node->StderrText().find("promotion of " + keys[0].ToHex() + " failed: DATA_LOSS"),
            std::string::npos)
      << node->StderrText();

  // Everything else is served: from DRAM (1, 2) and from SSD extents the flip missed (3, 4).
  for (size_t i = 1; i <= 4; ++i) EXPECT_OK(read(i)) << i;
  put(5);
  EXPECT_OK(read(5));
  ASSERT_OK(client->Health().status());
}

}  // namespace
}  // namespace strata::integration::tier_fault_test
