// ssd_bench: the SSD tier's promotion (SSD -> DRAM arena) and demotion (arena -> SSD +
// Flush) beside fio on the same O_DIRECT file, in one run.
//
// Each row moves 64 MiB per iteration as one ReadBatch / WriteBatch of whole extents of
// extent_MiB, through a tier opened with queue depth 16 and 1 MiB requests, with the DRAM
// arena registered (fixed buffers). Beside it, the row's fio figure: fio --ioengine=io_uring
// --direct=1 --bs=1M --iodepth=16 on the same file, --rw=read for sequential promotion,
// randread for random, write (fdatasync every 64 MiB, like the tier's Flush per batch) for
// demotion, run once per pattern as a child process (--output-format=json). Counters:
//   GB/s      the tier's bytes / wall time (10^9 bytes)
//   fio_GB/s  fio's bandwidth for the same pattern (0 if fio is not on PATH)
//   vs_fio    GB/s / fio_GB/s
//
// Settings, as --benchmark_context=key=value,... (or environment variables):
//   ssd_file      STRATA_SSD_BENCH_FILE   the data file (default: in the build directory);
//                                         created, preallocated and filled on first use
//   ssd_gib       STRATA_SSD_BENCH_GIB    its size in GiB (default 1)
//   fio_seconds   STRATA_SSD_BENCH_FIO_SECONDS  fio's runtime per pattern (default 3)
// The file is filled with bytes once (a marker file "<ssd_file>.filled" remembers it),
// since reading never-written preallocated blocks costs the device nothing.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"

#include "strata/tiering/dram_arena.h"
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
  int fio_seconds = 3;
  std::unique_ptr<SsdTier> tier;
  std::unique_ptr<DramArena> arena;
  std::map<std::string, double> fio_gbps;  // by pattern; < 0: fio missing or failed
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

// Opens the tier and arena; fills the file once.
Setup& GetSetup() {
  static Setup* setup = [] {
    auto* s = new Setup;
    s->path = Setting("ssd_file", "STRATA_SSD_BENCH_FILE", STRATA_SSD_BENCH_DEFAULT_FILE);
    s->bytes = std::stoull(Setting("ssd_gib", "STRATA_SSD_BENCH_GIB", "1")) * kGiB;
    s->fio_seconds = std::stoi(Setting("fio_seconds", "STRATA_SSD_BENCH_FIO_SECONDS", "3"));
    SsdTierOptions options;
    options.path = s->path;
    options.capacity_bytes = s->bytes;
    options.queue_depth = kQueueDepth;
    options.max_io_bytes = kMiB;
    absl::StatusOr<std::unique_ptr<SsdTier>> tier = SsdTier::Open(options);
    if (!tier.ok()) {
      s->error = tier.status().ToString();
      return s;
    }
    s->tier = std::move(*tier);
    DramArenaOptions arena_options;
    arena_options.capacity_bytes = 2 * kBatchBytes;
    arena_options.name = "strata-ssd-bench";
    arena_options.populate = true;
    absl::StatusOr<std::unique_ptr<DramArena>> arena = DramArena::Create(arena_options);
    if (!arena.ok()) {
      s->error = arena.status().ToString();
      return s;
    }
    s->arena = std::move(*arena);
    const std::vector<absl::Span<std::byte>> regions = {{s->arena->base(), s->arena->capacity()}};
    const absl::Status registered = s->tier->RegisterBuffers(regions);
    std::printf("arena: %s pages, %s\n",
                std::string(HugePageModeName(s->arena->huge_page_mode())).c_str(),
                registered.ok() ? "registered with io_uring (fixed buffers)"
                                : ("not registered: " + registered.ToString()).c_str());

    const std::string marker = s->path + ".filled";
    FILE* in = std::fopen(marker.c_str(), "r");
    unsigned long long filled = 0;
    if (in != nullptr) {
      if (std::fscanf(in, "%llu", &filled) != 1) filled = 0;
      std::fclose(in);
    }
    if (filled < s->bytes) {
      std::printf("filling %s (%llu bytes) once...\n", s->path.c_str(),
                  static_cast<unsigned long long>(s->bytes));
      std::fflush(stdout);
      absl::Span<std::byte> source = absl::MakeSpan(s->arena->base(), kBatchBytes);
      std::mt19937_64 rng(1);
      for (std::byte& b : source) b = static_cast<std::byte>(rng());
      for (uint64_t at = 0; at < s->bytes; at += kBatchBytes) {
        const uint64_t length = std::min(kBatchBytes, s->bytes - at);
        std::vector<absl::Status> statuses =
            RunWrites(*s->tier, {{Extent{at, length}, 0, source.first(length)}});
        if (!statuses[0].ok()) {
          s->error = statuses[0].ToString();
          return s;
        }
      }
      const absl::Status flushed = s->tier->Flush();
      if (!flushed.ok()) {
        s->error = flushed.ToString();
        return s;
      }
      if (FILE* out = std::fopen(marker.c_str(), "w")) {
        std::fprintf(out, "%llu\n", static_cast<unsigned long long>(s->bytes));
        std::fclose(out);
      }
    }
    return s;
  }();
  return *setup;
}

// fio's bandwidth in GB/s for `rw` on the bench file, or -1 (and a printed reason).
double FioGbps(Setup& s, const std::string& rw) {
  if (auto it = s.fio_gbps.find(rw); it != s.fio_gbps.end()) return it->second;
  double gbps = -1;
  if (std::system("command -v fio >/dev/null 2>&1") != 0) {
    std::printf("fio is not on PATH: the vs_fio ratios are missing\n");
  } else {
    const std::string direction = rw == "write" ? "write" : "read";
    std::string command = "fio --name=strata-ssd-bench --filename=" + s.path +
                          " --ioengine=io_uring --direct=1 --rw=" + rw +
                          " --bs=1M --iodepth=" + std::to_string(kQueueDepth) +
                          " --size=" + std::to_string(s.bytes) +
                          " --time_based=1 --runtime=" + std::to_string(s.fio_seconds) +
                          " --randrepeat=0 --output-format=json";
    if (rw == "write") command += " --fdatasync=" + std::to_string(kBatchBytes / kMiB);
    std::printf("fio: %s\n", command.c_str());
    std::fflush(stdout);
    std::string output;
    if (FILE* pipe = ::popen((command + " 2>&1").c_str(), "r")) {
      char buffer[4096];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
      ::pclose(pipe);
    }
    // {"jobs" : [{ ... "read" : { ... "bw_bytes" : N, ...
    const size_t jobs = output.find("\"jobs\"");
    const size_t section =
        jobs == std::string::npos ? jobs : output.find("\"" + direction + "\" : {", jobs);
    const size_t field =
        section == std::string::npos ? section : output.find("\"bw_bytes\" : ", section);
    if (field == std::string::npos) {
      std::printf("could not parse fio's output:\n%s\n", output.substr(0, 2000).c_str());
    } else {
      gbps = std::strtod(output.c_str() + field + std::strlen("\"bw_bytes\" : "), nullptr) / 1e9;
    }
  }
  s.fio_gbps[rw] = gbps;
  return gbps;
}

// Whole extents of `extent_bytes` covering the file, in address order.
std::vector<Extent> FileExtents(const Setup& s, uint64_t extent_bytes) {
  std::vector<Extent> extents;
  for (uint64_t at = 0; at + extent_bytes <= s.bytes; at += extent_bytes) {
    extents.push_back({at, extent_bytes});
  }
  return extents;
}

void Report(benchmark::State& state, Setup& s, uint64_t bytes, double seconds,
            const std::string& fio_rw) {
  const double gbps = static_cast<double>(bytes) / seconds / 1e9;
  const double fio = FioGbps(s, fio_rw);
  state.counters["GB/s"] = gbps;
  state.counters["fio_GB/s"] = fio > 0 ? fio : 0;
  state.counters["vs_fio"] = fio > 0 ? gbps / fio : 0;
  state.SetLabel("fio --rw=" + fio_rw);
}

// ReadBatch of 64 MiB of whole extents straight into the arena. range(0): extent MiB;
// range(1): 0 sequential (address order, wrapping), 1 random extents.
void BM_Promote(benchmark::State& state) {
  Setup& s = GetSetup();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  const uint64_t extent_bytes = static_cast<uint64_t>(state.range(0)) * kMiB;
  const bool random = state.range(1) != 0;
  const std::vector<Extent> extents = FileExtents(s, extent_bytes);
  const size_t per_batch = kBatchBytes / extent_bytes;
  std::mt19937_64 rng(7);
  size_t next = 0;
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::vector<TierRead> reads;
    for (size_t i = 0; i < per_batch; ++i) {
      const Extent& from =
          random ? extents[rng() % extents.size()] : extents[next++ % extents.size()];
      reads.push_back({from, 0, absl::MakeSpan(s.arena->base() + i * extent_bytes, extent_bytes)});
    }
    absl::Notification finished;
    bool ok = true;
    s.tier->ReadBatch(std::move(reads), [&](std::vector<absl::Status> statuses) {
      for (const absl::Status& status : statuses) ok = ok && status.ok();
      finished.Notify();
    });
    finished.WaitForNotification();
    if (!ok) {
      state.SkipWithError("a read failed");
      return;
    }
    bytes += per_batch * extent_bytes;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Report(state, s, bytes, seconds, random ? "randread" : "read");
}

// WriteBatch of 64 MiB of whole extents from the arena, then Flush.
void BM_Demote(benchmark::State& state) {
  Setup& s = GetSetup();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  const uint64_t extent_bytes = static_cast<uint64_t>(state.range(0)) * kMiB;
  const std::vector<Extent> extents = FileExtents(s, extent_bytes);
  const size_t per_batch = kBatchBytes / extent_bytes;
  size_t next = 0;
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::vector<TierWrite> writes;
    for (size_t i = 0; i < per_batch; ++i) {
      writes.push_back({extents[next++ % extents.size()], 0,
                        absl::MakeConstSpan(s.arena->base() + i * extent_bytes, extent_bytes)});
    }
    for (const absl::Status& status : RunWrites(*s.tier, std::move(writes))) {
      if (!status.ok()) {
        state.SkipWithError(status.ToString().c_str());
        return;
      }
    }
    const absl::Status flushed = s.tier->Flush();
    if (!flushed.ok()) {
      state.SkipWithError(flushed.ToString().c_str());
      return;
    }
    bytes += per_batch * extent_bytes;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Report(state, s, bytes, seconds, "write");
}

BENCHMARK(BM_Promote)
    ->ArgNames({"extent_MiB", "random"})
    ->ArgsProduct({{1, 4, 16}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK(BM_Demote)
    ->ArgNames({"extent_MiB"})
    ->Args({1})
    ->Args({4})
    ->Args({16})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

}  // namespace
}  // namespace strata::tiering::io
