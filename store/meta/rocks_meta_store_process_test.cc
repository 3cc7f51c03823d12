// RocksMetaStore against other processes: a writer killed mid-stream (SIGKILL, or _exit
// without closing) loses no batch it reported synced and leaves no partial batch; and a
// directory held by another process cannot be opened. The other process is
// store_meta_test_child (test_child.cc), started with fork + exec.
#include <cstdint>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

#include "store/meta/rocks_test_util.h"
#include "store/meta/test_records.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/meta/rocks_meta_store.h"

#ifndef STRATA_META_TEST_CHILD
#error "STRATA_META_TEST_CHILD must name the store_meta_test_child binary"
#endif

namespace strata::store::meta {
namespace {

constexpr uint64_t kBlobsPerBatch = 8;  // as in test_child.cc

// A child process whose fd 3 is the write end of a pipe we read.
struct Child {
  pid_t pid = -1;
  int from_child = -1;
};

Child Spawn(std::vector<std::string> args) {
  int fds[2];
  PCHECK(pipe2(fds, O_CLOEXEC) == 0);
  args.insert(args.begin(), STRATA_META_TEST_CHILD);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  PCHECK(pid >= 0);
  if (pid == 0) {
    if (dup2(fds[1], 3) < 0) _exit(126);  // dup2 clears close-on-exec on fd 3
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fds[0]};
}

// Reads exactly n bytes; false at EOF.
bool ReadAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

int Reap(const Child& child) {
  close(child.from_child);
  int status = 0;
  PCHECK(waitpid(child.pid, &status, 0) == child.pid);
  return status;
}

// Reopens `dir` and checks it holds exactly batches 0..M of the writer for some
// M >= last_reported: every record decodes, each blob is byte-for-byte what the writer put,
// and no batch is there in part.
void ExpectWholeBatchesThrough(const std::string& dir, uint64_t last_reported) {
  ASSERT_OK_AND_ASSIGN(auto store, RocksMetaStore::Open(RocksMetaStoreOptions{.path = dir}));
  const radix::PrefixHash ns = radix::NamespaceHash(TestNamespace(0));
  absl::flat_hash_map<uint64_t, BlobMeta> blobs;  // by seed
  MetaLoadCallbacks callbacks{
      .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
      .on_blob =
          [&](BlobMeta meta) {
            const uint64_t seed = meta.generation;
            blobs.emplace(seed, std::move(meta));
            return absl::OkStatus();
          }};
  ASSERT_OK_AND_ASSIGN(MetaLoadSummary summary, store->LoadAll(callbacks));
  EXPECT_EQ(summary.corrupt_blobs, 0u);
  EXPECT_EQ(summary.corrupt_namespaces, 0u);
  EXPECT_EQ(summary.namespaces, 1u);

  uint64_t last = 0;  // the last batch present: its blob 1 is never deleted
  while (blobs.contains((last + 1) * kBlobsPerBatch + 1)) ++last;
  EXPECT_GE(last, last_reported) << "a batch reported synced is missing";
  for (uint64_t i = 0; i <= last; ++i) {
    for (uint64_t j = 0; j < kBlobsPerBatch; ++j) {
      const uint64_t seed = i * kBlobsPerBatch + j;
      // Blob 0 of batch i is deleted by batch i + 1.
      const bool expected = j != 0 || i == last;
      ASSERT_EQ(blobs.contains(seed), expected) << "batch " << i << " blob " << j;
      if (expected) {
        ASSERT_EQ(blobs.at(seed), TestBlob(seed, ns));
      }
    }
  }
  EXPECT_EQ(blobs.size(), last * (kBlobsPerBatch - 1) + kBlobsPerBatch)
      << "blobs past batch " << last;
}

TEST(RocksMetaStoreProcessTest, SigkilledWriterLosesNoSyncedBatch) {
  ScopedTempDir dir;
  Child child = Spawn({"write", dir.path(), "3"});
  uint64_t reported = 0;
  for (int n = 0; n < 60; ++n) {
    ASSERT_TRUE(ReadAll(child.from_child, &reported, sizeof(reported))) << "child died early";
  }
  // Mid-stream: the child is inside its next Apply (or about to be).
  PCHECK(kill(child.pid, SIGKILL) == 0);
  const int status = Reap(child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ExpectWholeBatchesThrough(dir.path(), reported);
}

TEST(RocksMetaStoreProcessTest, WriterThatExitsWithoutClosingLosesNothing) {
  ScopedTempDir dir;
  Child child = Spawn({"write", dir.path(), "3", "41"});
  uint64_t reported = 0, last = 0;
  while (ReadAll(child.from_child, &reported, sizeof(reported))) last = reported;
  const int status = Reap(child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(last, 41u);
  ExpectWholeBatchesThrough(dir.path(), 41);
}

TEST(RocksMetaStoreProcessTest, DirectoryHeldByAnotherProcessIsFailedPrecondition) {
  ScopedTempDir dir;
  Child child = Spawn({"hold", dir.path(), "3"});
  char ready = 0;
  ASSERT_TRUE(ReadAll(child.from_child, &ready, 1)) << "child failed to open";
  absl::StatusOr<std::unique_ptr<RocksMetaStore>> store =
      RocksMetaStore::Open(RocksMetaStoreOptions{.path = dir.path()});
  EXPECT_CODE(store, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(store.status().message(), "another strata-node")) << store.status();
  PCHECK(kill(child.pid, SIGKILL) == 0);
  Reap(child);
  // The kernel dropped the lock with the process.
  EXPECT_OK(RocksMetaStore::Open(RocksMetaStoreOptions{.path = dir.path()}));
}

}  // namespace
}  // namespace strata::store::meta
