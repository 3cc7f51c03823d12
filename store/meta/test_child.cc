// store_meta_test_child: the other process of rocks_meta_store_process_test.cc.
//
//   store_meta_test_child hold  <dir> <fd>
//       opens the store at <dir>, writes "R" to <fd>, then waits to be killed.
//   store_meta_test_child write <dir> <fd> [exit_after]
//       opens the store and applies synced batches i = 0, 1, 2, ... (WriterBatch below);
//       after each Apply returns OK it writes i (u64, native order) to <fd>. With exit_after,
//       it _exit(0)s right after reporting batch exit_after (the store never closed);
//       otherwise it runs until killed.
// Exit status 2 on a usage error, 3 on a store error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "glog/logging.h"

#include "store/meta/test_records.h"
#include "strata/store/meta/rocks_meta_store.h"

namespace strata::store::meta {
namespace {

constexpr uint64_t kBlobsPerBatch = 8;

// Batch i: namespace 0 (i == 0); puts blobs i*8 .. i*8+7; deletes blob (i-1)*8.
MetaBatch WriterBatch(uint64_t i) {
  const radix::PrefixHash ns = radix::NamespaceHash(TestNamespace(0));
  MetaBatch batch(/*sync=*/true);
  if (i == 0) batch.PutNamespace(TestNamespace(0));
  for (uint64_t j = 0; j < kBlobsPerBatch; ++j) batch.PutBlob(TestBlob(i * kBlobsPerBatch + j, ns));
  if (i > 0) batch.DeleteBlob(TestBlobKey((i - 1) * kBlobsPerBatch));
  return batch;
}

int Run(int argc, char** argv) {
  if (argc < 4) return 2;
  const std::string mode = argv[1];
  const int fd = std::atoi(argv[3]);
  auto store = RocksMetaStore::Open(RocksMetaStoreOptions{.path = argv[2]});
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 3;
  }
  if (mode == "hold") {
    if (write(fd, "R", 1) != 1) return 3;
    for (;;) pause();
  }
  if (mode != "write") return 2;
  const long exit_after = argc > 4 ? std::atol(argv[4]) : -1;
  for (uint64_t i = 0;; ++i) {
    absl::Status status = (*store)->Apply(WriterBatch(i));
    if (!status.ok()) {
      std::fprintf(stderr, "apply %llu: %s\n", static_cast<unsigned long long>(i),
                   status.ToString().c_str());
      return 3;
    }
    if (write(fd, &i, sizeof(i)) != sizeof(i)) return 3;
    if (exit_after >= 0 && i == static_cast<uint64_t>(exit_after)) _exit(0);
  }
}

}  // namespace
}  // namespace strata::store::meta

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  return strata::store::meta::Run(argc, argv);
}
