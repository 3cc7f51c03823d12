// ssd_bench: the SSD tier's promotion (SSD -> DRAM) and demotion (DRAM -> SSD + Flush)
// beside fio on the same O_DIRECT file, in one run.
//
// Each row moves 64 MiB per iteration as one ReadBatch / WriteBatch of whole extents of
// extent_MiB (in address order, wrapping, or random), through a tier opened with queue
// depth 16 and 1 MiB requests. fio runs as a child process just before and just after
// each row (--ioengine=io_uring --direct=1 --bs=1M --iodepth=16 on the same file; --rw=read
// or randread for promotion, write with fdatasync every 64 MiB, like the tier's Flush per
// batch, for demotion; --output-format=json), because this shared disk's bandwidth drifts
// within seconds.
//
// The page size of the DRAM side decides the result as much as the I/O path does: a 1 MiB
// O_DIRECT transfer into 4 KiB pages is up to 256 DMA segments (virtio-blk here takes 254
// per request), into a 2 MiB page one, and the kernel merges only physically adjacent
// pages, so how many there are depends on where the pages happen to lie. Each row
// therefore compares like with like:
//   thp:0  the DramArena (a memfd; hugetlb or THP where the host has them, else 4 KiB
//          pages: see the "arena:" line) vs fio with its default buffers (malloc, 4 KiB
//          pages). Both depend on page placement: expect spread.
//   thp:1  an anonymous buffer with MADV_HUGEPAGE vs fio with
//          GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (its malloc'd buffers on THP too).
// The arena and the THP buffer are both registered with the ring (fixed buffers).
// Counters: GB/s (the tier: bytes / wall time, 10^9 bytes), fio_GB/s (the mean of fio's
// two runs), fio_spread (|after - before| / mean), vs_fio (GB/s / fio_GB/s).
//
// Settings, as --benchmark_context=key=value,... (or environment variables):
//   ssd_file     STRATA_SSD_BENCH_FILE         the data file (default: the build dir);
//                                              created, preallocated and filled once
//   ssd_gib      STRATA_SSD_BENCH_GIB          its size in GiB (default 1)
//   fio_seconds  STRATA_SSD_BENCH_FIO_SECONDS  each fio run's length (default 1)
// The file is filled once (a marker "<ssd_file>.filled" remembers it): reading blocks
// that were preallocated but never written costs the device nothing.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"

#include "strata/tiering/dram_arena.h"
#include "strata/tiering/internal/memory_mapping.h"
#include "strata/tiering/io/ssd_tier.h"

#ifndef STRATA_SSD_BENCH_DEFAULT_FILE
#define STRATA_SSD_BENCH_DEFAULT_FILE "ssd_bench.data"
#endif

namespace strata::tiering::io {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kBatchBytes = 64 * kMiB;
constexpr uint32_t kQueueDepth = 16;
// Batches per row: a fixed count, so that each row runs once, between its fio runs.
constexpr int kPromoteBatches = 24;  // 1.5 GiB
constexpr int kDemoteBatches = 16;   // 1 GiB

std::string Setting(const char* context_key, const char* env, const std::string& fallback) {
  const std::map<std::string, std::string>* context = benchmark::internal::GetGlobalContext();
  if (context != nullptr) {
    if (auto it = context->find(context_key); it != context->end()) return it->second;
  }
  const char* value = std::getenv(env);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct Setup {
  std::string path;
  uint64_t bytes = 0;
  int fio_seconds = 1;
  std::unique_ptr<SsdTier> tier;
  std::unique_ptr<DramArena> arena;
  internal::MemoryMapping thp_buffer;  // anonymous, MADV_HUGEPAGE
  bool fio_missing = false;
  bool fio_command_printed = false;
  std::string error;
};

std::vector<absl::Status> RunWrites(SsdTier& tier, std::vector<TierWrite> writes) {
  absl::Notification finished;
  std::vector<absl::Status> result;
  tier.WriteBatch(std::move(writes), [&](std::vector<absl::Status> statuses) {
    result = std::move(statuses);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

// This process's anonymous memory on transparent hugepages, in MiB.
uint64_t AnonHugeMiB() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("AnonHugePages:", 0) == 0) return std::stoull(line.substr(14)) / 1024;
  }
  return 0;
}

// Fills [0, bytes) of the file once, from the arena.
absl::Status FillOnce(Setup& s) {
  const std::string marker = s.path + ".filled";
  unsigned long long filled = 0;
  if (FILE* in = std::fopen(marker.c_str(), "r")) {
    if (std::fscanf(in, "%llu", &filled) != 1) filled = 0;
    std::fclose(in);
  }
  if (filled >= s.bytes) return absl::OkStatus();
  std::printf("filling %s (%llu bytes) once...\n", s.path.c_str(),
              static_cast<unsigned long long>(s.bytes));
  std::fflush(stdout);
  const absl::Span<std::byte> source = absl::MakeSpan(s.arena->base(), kBatchBytes);
  std::mt19937_64 rng(1);
  for (std::byte& b : source) b = static_cast<std::byte>(rng());
  for (uint64_t at = 0; at < s.bytes; at += kBatchBytes) {
    const uint64_t length = std::min(kBatchBytes, s.bytes - at);
    absl::Status written = RunWrites(*s.tier, {{Extent{at, length}, 0, source.first(length)}})[0];
    if (!written.ok()) return written;
  }
  if (absl::Status flushed = s.tier->Flush(); !flushed.ok()) return flushed;
  if (FILE* out = std::fopen(marker.c_str(), "w")) {
    std::fprintf(out, "%llu\n", static_cast<unsigned long long>(s.bytes));
    std::fclose(out);
  }
  return absl::OkStatus();
}

absl::Status OpenAll(Setup& s) {
  SsdTierOptions options;
  options.path = s.path;
  options.capacity_bytes = s.bytes;
  options.queue_depth = kQueueDepth;
  options.max_io_bytes = kMiB;
  absl::StatusOr<std::unique_ptr<SsdTier>> tier = SsdTier::Open(options);
  if (!tier.ok()) return tier.status();
  s.tier = std::move(*tier);
  DramArenaOptions arena_options;
  arena_options.capacity_bytes = kBatchBytes;
  arena_options.name = "strata-ssd-bench";
  arena_options.populate = true;
  absl::StatusOr<std::unique_ptr<DramArena>> arena = DramArena::Create(arena_options);
  if (!arena.ok()) return arena.status();
  s.arena = std::move(*arena);
  void* thp =
      ::mmap(nullptr, kBatchBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (thp == MAP_FAILED) return absl::ResourceExhaustedError("mmap of the THP buffer");
  s.thp_buffer = internal::MemoryMapping(thp, kBatchBytes);
  ::madvise(thp, kBatchBytes, MADV_HUGEPAGE);
  std::memset(thp, 1, kBatchBytes);
  const std::vector<absl::Span<std::byte>> regions = {{s.arena->base(), s.arena->capacity()},
                                                      {s.thp_buffer.data(), s.thp_buffer.size()}};
  const absl::Status registered = s.tier->RegisterBuffers(regions);
  std::printf("arena: %s pages; THP buffer: %llu of %llu MiB on hugepages; %s\n",
              std::string(HugePageModeName(s.arena->huge_page_mode())).c_str(),
              static_cast<unsigned long long>(AnonHugeMiB()),
              static_cast<unsigned long long>(kBatchBytes / kMiB),
              registered.ok() ? "both registered with io_uring (fixed buffers)"
                              : ("not registered: " + registered.ToString()).c_str());
  return FillOnce(s);
}

Setup& GetSetup() {
  static Setup* setup = [] {
    auto* s = new Setup;
    s->path = Setting("ssd_file", "STRATA_SSD_BENCH_FILE", STRATA_SSD_BENCH_DEFAULT_FILE);
    s->bytes = std::stoull(Setting("ssd_gib", "STRATA_SSD_BENCH_GIB", "1")) * kGiB;
    s->fio_seconds = std::stoi(Setting("fio_seconds", "STRATA_SSD_BENCH_FIO_SECONDS", "1"));
    const absl::Status opened = OpenAll(*s);
    if (!opened.ok()) s->error = opened.ToString();
    return s;
  }();
  return *setup;
}

// fio's bandwidth in GB/s for `rw`, its buffers on THP if `thp`, or -1 (and a printed
// reason).
double FioGbps(Setup& s, const std::string& rw, bool thp) {
  if (s.fio_missing) return -1;
  if (std::system("command -v fio >/dev/null 2>&1") != 0) {
    std::printf("fio is not on PATH: the vs_fio ratios are missing\n");
    s.fio_missing = true;
    return -1;
  }
  std::string command = std::string(thp ? "GLIBC_TUNABLES=glibc.malloc.hugetlb=1 " : "") +
                        "fio --name=strata-ssd-bench --filename=" + s.path +
                        " --ioengine=io_uring --direct=1 --rw=" + rw +
                        " --bs=1M --iodepth=" + std::to_string(kQueueDepth) +
                        " --size=" + std::to_string(s.bytes) +
                        " --time_based=1 --runtime=" + std::to_string(s.fio_seconds) +
                        " --randrepeat=0 --output-format=json";
  if (rw == "write") command += " --fdatasync=" + std::to_string(kBatchBytes / kMiB);
  if (!s.fio_command_printed) std::printf("fio (e.g.): %s\n", command.c_str());
  s.fio_command_printed = true;
  std::fflush(stdout);
  std::string output;
  if (FILE* pipe = ::popen((command + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
    ::pclose(pipe);
  }
  // {"jobs" : [{ ... "read" : { ... "bw_bytes" : N, ...
  const std::string direction = rw == "write" ? "write" : "read";
  const size_t jobs = output.find("\"jobs\"");
  const size_t section =
      jobs == std::string::npos ? jobs : output.find("\"" + direction + "\" : {", jobs);
  const size_t field =
      section == std::string::npos ? section : output.find("\"bw_bytes\" : ", section);
  if (field == std::string::npos) {
    std::printf("could not parse fio's output:\n%s\n", output.substr(0, 2000).c_str());
    return -1;
  }
  return std::strtod(output.c_str() + field + std::strlen("\"bw_bytes\" : "), nullptr) / 1e9;
}

// Runs `run_batch` (64 MiB each) once per iteration, between two fio runs of `fio_rw`.
template <typename RunBatch>
void Measure(benchmark::State& state, Setup& s, const std::string& fio_rw, bool thp,
             RunBatch run_batch) {
  const double fio_before = FioGbps(s, fio_rw, thp);
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::Status status = run_batch();
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
    bytes += kBatchBytes;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double fio_after = FioGbps(s, fio_rw, thp);
  const double gbps = static_cast<double>(bytes) / seconds / 1e9;
  const bool have_fio = fio_before > 0 && fio_after > 0;
  const double fio = have_fio ? (fio_before + fio_after) / 2 : 0;
  state.counters["GB/s"] = gbps;
  state.counters["fio_GB/s"] = fio;
  state.counters["fio_spread"] = have_fio ? std::abs(fio_after - fio_before) / fio : 0;
  state.counters["vs_fio"] = have_fio ? gbps / fio : 0;
  state.SetLabel(std::string(thp ? "THP" : "arena") + " vs fio --rw=" + fio_rw +
                 (thp ? " (malloc on THP)" : ""));
}

// Whole extents of `extent_bytes` covering the file, in address order.
std::vector<Extent> FileExtents(const Setup& s, uint64_t extent_bytes) {
  std::vector<Extent> extents;
  for (uint64_t at = 0; at + extent_bytes <= s.bytes; at += extent_bytes) {
    extents.push_back({at, extent_bytes});
  }
  return extents;
}

std::byte* DramSide(Setup& s, bool thp) { return thp ? s.thp_buffer.data() : s.arena->base(); }

// range(0): extent MiB; range(1): 0 address order, 1 random extents; range(2): thp.
void BM_Promote(benchmark::State& state) {
  Setup& s = GetSetup();
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  const uint64_t extent_bytes = static_cast<uint64_t>(state.range(0)) * kMiB;
  const bool random = state.range(1) != 0;
  const bool thp = state.range(2) != 0;
  std::byte* const destination = DramSide(s, thp);
  const std::vector<Extent> extents = FileExtents(s, extent_bytes);
  std::mt19937_64 rng(7);
  size_t next = 0;
  Measure(state, s, random ? "randread" : "read", thp, [&] {
    std::vector<TierRead> reads;
    for (uint64_t at = 0; at < kBatchBytes; at += extent_bytes) {
      const Extent& from =
          random ? extents[rng() % extents.size()] : extents[next++ % extents.size()];
      reads.push_back({from, 0, absl::MakeSpan(destination + at, extent_bytes)});
    }
    absl::Notification finished;
    absl::Status failed;
    s.tier->ReadBatch(std::move(reads), [&](std::vector<absl::Status> statuses) {
      for (absl::Status& status : statuses) {
        if (!status.ok()) failed = std::move(status);
      }
      finished.Notify();
    });
    finished.WaitForNotification();
    return failed;
  });
}

// range(0): extent MiB (address order); range(1): thp. Each batch ends with Flush.
void BM_Demote(benchmark::State& state) {
  Setup& s = GetSetup();
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  const uint64_t extent_bytes = static_cast<uint64_t>(state.range(0)) * kMiB;
  const bool thp = state.range(1) != 0;
  const std::byte* const source = DramSide(s, thp);
  const std::vector<Extent> extents = FileExtents(s, extent_bytes);
  size_t next = 0;
  Measure(state, s, "write", thp, [&] {
    std::vector<TierWrite> writes;
    for (uint64_t at = 0; at < kBatchBytes; at += extent_bytes) {
      writes.push_back(
          {extents[next++ % extents.size()], 0, absl::MakeConstSpan(source + at, extent_bytes)});
    }
    for (absl::Status& status : RunWrites(*s.tier, std::move(writes))) {
      if (!status.ok()) return status;
    }
    return s.tier->Flush();
  });
}

BENCHMARK(BM_Promote)
    ->ArgNames({"extent_MiB", "random", "thp"})
    ->ArgsProduct({{1, 16}, {0, 1}, {0}})
    ->ArgsProduct({{1, 4, 16}, {0, 1}, {1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(kPromoteBatches);
BENCHMARK(BM_Demote)
    ->ArgNames({"extent_MiB", "thp"})
    ->Args({16, 0})
    ->Args({1, 1})
    ->Args({16, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(kDemoteBatches);

}  // namespace
}  // namespace strata::tiering::io
