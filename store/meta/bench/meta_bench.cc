// meta_bench: the metadata half of a node restart, and the cost of durable writes.
//
//   BM_TokenCodec/<stream>   bytes per token of each token codec and of the per-record
//                            choice, on 1M tokens cut into records like the node's
//   BM_BlobMetaCodec/<0|1>   encode / decode alone, records per second
//   BM_Restart               write --records realistic records in batches of --batch (sync),
//                            close, reopen, LoadAll + decode everything; open and scan timed
//                            apart (restart time-to-ready, metadata half)
//   BM_SyncApply/<batch>     Apply throughput with sync = true, 1 / 8 / 64 records a batch,
//                            1 and 4 threads (group commit), beside BM_Fdatasync (the
//                            disk's floor: one 4 KiB write + fdatasync) and a sync = false
//                            baseline
//
// Flags (before Google Benchmark's own): --records=N (1000000) --batch=N (1000)
// --page_tokens=N (32) --max_pages=N (4) --layers=N (32) --dir=PATH (a new directory under
// $TMPDIR or /tmp, removed at exit) --compare_compression (BM_Restart also with lz4, zstd
// and lz4+zstd; the default is none) --keep (leave the stores on disk, e.g. to read RocksDB's LOG).
// Own main (not base/bench_main.cc, which rejects unknown flags); it prints the command line and
// the date first, like every strata benchmark.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "benchmark/benchmark.h"
#include "glog/logging.h"

#include "store/meta/bench/bench_records.h"
#include "strata/radix/namespace.h"
#include "strata/store/meta/blob_meta_codec.h"
#include "strata/store/meta/rocks_meta_store.h"
#include "strata/store/meta/token_codec.h"

namespace strata::store::meta::bench {
namespace {

struct Flags {
  int64_t records = 1'000'000;
  int64_t batch = 1000;
  RecordShape shape;
  std::string dir;
  bool compare_compression = false;
  bool keep = false;  // leave the stores on disk (RocksDB's LOG says where time went)
};
Flags flags;

using Clock = std::chrono::steady_clock;
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds of the calling thread: what a step costs apart from waiting for the (shared,
// loaded) machine. RocksDB reads and decodes on the calling thread; compactions are not in it.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

radix::Namespace BenchNamespace() {
  const radix::KvLayout layout{.num_layers = flags.shape.num_layers,
                               .num_kv_heads = 8,
                               .head_dim = 128,
                               .dtype = radix::DType::kBFloat16,
                               .page_tokens = flags.shape.page_tokens,
                               .format = radix::KvFormat::kKeyValue,
                               .tp_rank = 0,
                               .tp_world = 1};
  return *radix::Namespace::Create("bench", "Qwen/Qwen2.5-7B-Instruct", layout);
}

// A fresh store directory under flags.dir, removed on destruction.
class BenchDir {
 public:
  explicit BenchDir(std::string_view name) : path_(flags.dir + "/" + std::string(name)) {
    std::filesystem::remove_all(path_);
  }
  ~BenchDir() {
    if (!flags.keep) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void CheckOk(const absl::Status& status) { CHECK(status.ok()) << status; }

std::unique_ptr<RocksMetaStore> OpenOrDie(RocksMetaStoreOptions options) {
  auto store = RocksMetaStore::Open(options);
  CHECK(store.ok()) << store.status();
  return *std::move(store);
}

void BM_TokenCodec(benchmark::State& state) {
  const auto stream = static_cast<TokenStream>(state.range(0));
  // 1M tokens in records of 1..max_pages pages, the codec chosen per record as the store does.
  TokenSource source(stream, 7);
  std::mt19937_64 rng(8);
  std::vector<std::vector<radix::TokenId>> records;
  size_t tokens = 0;
  while (tokens < 1'000'000) {
    if (records.size() % 8 == 0) source.NewSession();
    records.emplace_back();
    source.Append(flags.shape.page_tokens * (1 + rng() % flags.shape.max_pages), &records.back());
    tokens += records.back().size();
  }
  double size[4] = {0, 0, 0, 0};  // varint, delta, bitpacked, chosen (+ 9 B record header)
  for (const auto& r : records) {
    for (int c = 0; c < 3; ++c) size[c] += TokenPayloadSize(static_cast<TokenCodec>(c + 1), r);
    size[3] += TokenPayloadSize(SmallestTokenCodec(r), r);
  }
  std::string payload;
  std::vector<radix::TokenId> decoded;
  for (auto _ : state) {
    for (const auto& r : records) {
      payload.clear();
      const TokenCodec codec = SmallestTokenCodec(r);
      AppendTokenPayload(codec, r, &payload);
      CHECK(DecodeTokenPayload(codec, static_cast<uint32_t>(r.size()), payload, &decoded).ok());
    }
  }
  const double n = static_cast<double>(tokens);
  state.counters["varint_B_per_tok"] = size[0] / n;
  state.counters["delta_B_per_tok"] = size[1] / n;
  state.counters["bitpacked_B_per_tok"] = size[2] / n;
  state.counters["chosen_B_per_tok"] = size[3] / n;
  state.counters["chosen_vs_raw_u32"] = size[3] / (4 * n);
  state.counters["tokens_per_s"] =
      benchmark::Counter(n * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(TokenStreamName(stream));
}
BENCHMARK(BM_TokenCodec)->DenseRange(0, 2)->ArgName("stream")->Unit(benchmark::kMillisecond);

// Encode and decode alone, on the benchmark's records: the CPU floor of writing and of the
// start-up scan.
void BM_BlobMetaCodec(benchmark::State& state) {
  RecordSource source(flags.shape, radix::PrefixHash{1, 2}, 5);
  std::vector<BlobMeta> metas;
  std::vector<std::string> encoded;
  size_t bytes = 0;
  for (int i = 0; i < 1000; ++i) {
    metas.push_back(source.Next());
    encoded.push_back(EncodeBlobMeta(metas.back()));
    bytes += encoded.back().size();
  }
  const bool decode = state.range(0) == 1;
  std::string out;
  for (auto _ : state) {
    for (size_t i = 0; i < metas.size(); ++i) {
      if (decode) {
        auto meta = DecodeBlobMeta(encoded[i]);
        CHECK(meta.ok()) << meta.status();
        benchmark::DoNotOptimize(meta);
      } else {
        out.clear();
        AppendBlobMeta(metas[i], &out);
        benchmark::DoNotOptimize(out);
      }
    }
  }
  const double records = static_cast<double>(state.iterations() * metas.size());
  state.counters["records_per_s"] = benchmark::Counter(records, benchmark::Counter::kIsRate);
  state.counters["B_per_record"] = static_cast<double>(bytes) / 1000.0;
  state.SetLabel(decode ? "decode" : "encode");
}
BENCHMARK(BM_BlobMetaCodec)->ArgName("decode")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

const char* CompressionName(MetaCompression c) {
  switch (c) {
    case MetaCompression::kAuto:
      return "auto(lz4+zstd)";
    case MetaCompression::kNone:
      return "none";
    case MetaCompression::kLz4:
      return "lz4";
    case MetaCompression::kZstd:
      return "zstd";
  }
  return "?";
}

void BM_Restart(benchmark::State& state) {
  const auto compression = static_cast<MetaCompression>(state.range(0));
  const radix::Namespace ns = BenchNamespace();
  for (auto _ : state) {
    BenchDir dir("restart");
    const RocksMetaStoreOptions options{.path = dir.path(), .compression = compression};
    RecordSource source(flags.shape, radix::NamespaceHash(ns), 42);
    auto store = OpenOrDie(options);
    Clock::duration write{};
    uint64_t value_bytes = 0, tokens = 0, token_bytes = 0;
    std::vector<BlobMeta> metas;
    MetaBatch last_batch;
    for (int64_t done = 0; done < flags.records;) {
      metas.clear();
      for (int64_t i = 0; i < flags.batch && done + i < flags.records; ++i) {
        metas.push_back(source.Next());
        tokens += metas.back().tokens.size();
        token_bytes +=
            TokenPayloadSize(SmallestTokenCodec(metas.back().tokens), metas.back().tokens);
      }
      const auto start = Clock::now();
      MetaBatch batch(/*sync=*/true);
      if (done == 0) batch.PutNamespace(ns);
      for (const BlobMeta& m : metas) batch.PutBlob(m);
      CheckOk(store->Apply(batch));
      write += Clock::now() - start;
      value_bytes += batch.value_bytes();
      done += static_cast<int64_t>(metas.size());
      last_batch = std::move(batch);
    }
    auto start = Clock::now();
    CheckOk(store->Close());
    const double close_s = Seconds(Clock::now() - start);
    store.reset();

    start = Clock::now();
    double cpu = ThreadCpuSeconds();
    store = OpenOrDie(options);
    const double open_s = Seconds(Clock::now() - start);
    const double open_cpu_s = ThreadCpuSeconds() - cpu;
    start = Clock::now();
    cpu = ThreadCpuSeconds();
    uint64_t loaded = 0;
    MetaLoadCallbacks callbacks{
        .on_namespace = [](const radix::PrefixHash&, radix::Namespace) { return absl::OkStatus(); },
        .on_blob =
            [&](BlobMeta meta) {
              benchmark::DoNotOptimize(meta);
              ++loaded;
              return absl::OkStatus();
            }};
    auto summary = store->LoadAll(callbacks);
    const double scan_s = Seconds(Clock::now() - start);
    const double scan_cpu_s = ThreadCpuSeconds() - cpu;
    CheckOk(summary.status());
    CHECK_EQ(loaded, static_cast<uint64_t>(flags.records));
    CHECK_EQ(summary->corrupt_blobs, 0u);
    const MetaStoreStats stats = store->Stats();
    // Our share of the scan: decoding alone, on the last batch's records (in cache).
    start = Clock::now();
    uint64_t decoded = 0;
    for (int round = 0; round < 10; ++round) {
      for (const MetaBatch::Op& op : last_batch.ops()) {
        if (op.kind != MetaBatch::OpKind::kPutBlob) continue;
        auto meta = DecodeBlobMeta(op.value);
        CHECK(meta.ok()) << meta.status();
        benchmark::DoNotOptimize(meta);
        ++decoded;
      }
    }
    const double decode_s = Seconds(Clock::now() - start);

    const double n = static_cast<double>(flags.records);
    state.SetIterationTime(open_s + scan_s);
    state.counters["records"] = n;
    state.counters["write_records_per_s"] = n / Seconds(write);
    state.counters["write_s"] = Seconds(write);
    state.counters["close_s"] = close_s;
    state.counters["open_s"] = open_s;
    state.counters["scan_s"] = scan_s;
    state.counters["open_cpu_s"] = open_cpu_s;
    state.counters["scan_cpu_s"] = scan_cpu_s;
    state.counters["scan_records_per_s"] = n / scan_s;
    state.counters["decode_us_per_record"] = decode_s * 1e6 / static_cast<double>(decoded);
    state.counters["restart_s_per_1M"] = (open_s + scan_s) * 1e6 / n;
    state.counters["value_B_per_record"] = static_cast<double>(value_bytes) / n;
    state.counters["disk_B_per_record"] = static_cast<double>(stats.bytes_on_disk) / n;
    state.counters["token_B_per_tok"] =
        static_cast<double>(token_bytes) / static_cast<double>(tokens);
  }
  state.SetLabel(CompressionName(compression));
}

// Several threads apply to one store: thread 0 opens it before the (barriered) loop
// starts and closes it after the loop's closing barrier.
std::unique_ptr<BenchDir> apply_dir;
std::unique_ptr<RocksMetaStore> apply_store;
std::atomic<uint64_t> apply_seq{0};

void ApplyBench(benchmark::State& state, bool sync) {
  const int64_t per_batch = state.range(0);
  const radix::Namespace ns = BenchNamespace();
  if (state.thread_index() == 0) {
    apply_dir = std::make_unique<BenchDir>("apply");
    apply_store = OpenOrDie(RocksMetaStoreOptions{.path = apply_dir->path()});
    MetaBatch first(/*sync=*/true);
    first.PutNamespace(ns);
    CheckOk(apply_store->Apply(first));
  }
  RecordSource source(flags.shape, radix::NamespaceHash(ns),
                      100 + static_cast<uint64_t>(state.thread_index()));
  std::vector<BlobMeta> pool;
  for (int i = 0; i < 256; ++i) pool.push_back(source.Next());
  size_t next = 0;
  for (auto _ : state) {
    MetaBatch batch(sync);
    for (int64_t i = 0; i < per_batch; ++i) {
      BlobMeta& m = pool[next++ % pool.size()];
      m.key.hash.lo = apply_seq.fetch_add(1, std::memory_order_relaxed);  // a new key
      batch.PutBlob(m);
    }
    CheckOk(apply_store->Apply(batch));
  }
  state.counters["records_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * per_batch), benchmark::Counter::kIsRate);
  state.counters["applies_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  if (state.thread_index() == 0) {
    apply_store.reset();
    apply_dir.reset();
  }
}

void BM_SyncApply(benchmark::State& state) { ApplyBench(state, /*sync=*/true); }
void BM_NoSyncApply(benchmark::State& state) { ApplyBench(state, /*sync=*/false); }

BENCHMARK(BM_SyncApply)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->UseRealTime()
    ->MinTime(1.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SyncApply)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(64)
    ->Threads(4)
    ->UseRealTime()
    ->MinTime(1.0)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NoSyncApply)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(64)
    ->UseRealTime()
    ->MinTime(1.0)
    ->Unit(benchmark::kMicrosecond);

// The floor under a synced Apply: one 4 KiB write and fdatasync on the same file system,
// appending (the file grows: each sync also commits its size), or into space allocated
// beforehand (as RocksDB preallocates its WAL).
void BM_Fdatasync(benchmark::State& state) {
  const bool preallocated = state.range(0) == 1;
  BenchDir dir("fdatasync");
  std::filesystem::create_directories(dir.path());
  const std::string path = dir.path() + "/f";
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  PCHECK(fd >= 0);
  constexpr off_t kFile = 64 << 20;
  const std::string block(4096, 'x');
  if (preallocated) {
    for (off_t at = 0; at < kFile; at += 1 << 20) {
      const std::string mib(1 << 20, 'p');
      PCHECK(pwrite(fd, mib.data(), mib.size(), at) == static_cast<ssize_t>(mib.size()));
    }
    PCHECK(fsync(fd) == 0);
  }
  off_t at = 0;
  for (auto _ : state) {
    PCHECK(pwrite(fd, block.data(), block.size(), at) == static_cast<ssize_t>(block.size()));
    PCHECK(fdatasync(fd) == 0);
    at += static_cast<off_t>(block.size());
    if (preallocated && at == kFile) at = 0;
  }
  close(fd);
  state.counters["syncs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(preallocated ? "overwrite" : "append");
}
BENCHMARK(BM_Fdatasync)
    ->ArgName("preallocated")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->MinTime(1.0)
    ->Unit(benchmark::kMicrosecond);

// Strips our flags from argv; false on a malformed one.
bool ParseFlags(int* argc, char** argv) {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name, int64_t* v) {
      if (arg.substr(0, name.size()) != name) return false;
      *v = std::stoll(std::string(arg.substr(name.size())));
      return true;
    };
    int64_t v = 0;
    if (value("--records=", &flags.records) || value("--batch=", &flags.batch)) continue;
    if (value("--page_tokens=", &v)) {
      flags.shape.page_tokens = static_cast<uint32_t>(v);
    } else if (value("--max_pages=", &v)) {
      flags.shape.max_pages = static_cast<uint32_t>(v);
    } else if (value("--layers=", &v)) {
      flags.shape.num_layers = static_cast<uint32_t>(v);
    } else if (arg.substr(0, 6) == "--dir=") {
      flags.dir = std::string(arg.substr(6));
    } else if (arg == "--compare_compression") {
      flags.compare_compression = true;
    } else if (arg == "--keep") {
      flags.keep = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return flags.records > 0 && flags.batch > 0 && flags.shape.page_tokens > 0 &&
         flags.shape.max_pages > 0 && flags.shape.num_layers > 0;
}

}  // namespace
}  // namespace strata::store::meta::bench

int main(int argc, char** argv) {
  using namespace strata::store::meta::bench;  // NOLINT
  FLAGS_minloglevel = google::GLOG_WARNING;
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  std::printf("command: %s\ndate: %s\n", command.c_str(), date);
  std::fflush(stdout);
  if (!ParseFlags(&argc, argv)) {
    std::fprintf(stderr, "bad flag value (see the top of meta_bench.cc)\n");
    return 2;
  }
  const bool own_dir = flags.dir.empty();
  if (own_dir) {
    const char* tmp = std::getenv("TMPDIR");
    flags.dir = std::string(tmp ? tmp : "/tmp") + "/strata_meta_bench_" + std::to_string(getpid());
  }
  std::filesystem::create_directories(flags.dir);
  auto* restart = benchmark::RegisterBenchmark("BM_Restart", BM_Restart);
  restart->ArgName("compression")
      ->Arg(static_cast<int>(strata::store::meta::MetaCompression::kNone));
  if (flags.compare_compression) {
    for (auto c :
         {strata::store::meta::MetaCompression::kLz4, strata::store::meta::MetaCompression::kZstd,
          strata::store::meta::MetaCompression::kAuto}) {
      restart->Arg(static_cast<int>(c));
    }
  }
  restart->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (own_dir && !flags.keep) std::filesystem::remove_all(flags.dir);
  return 0;
}
