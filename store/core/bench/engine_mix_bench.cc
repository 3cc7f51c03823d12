// In-process engine throughput under a mixed load, and how long the engine lock is held.
//
// `threads` threads (8 by default) run against one engine for `seconds` (or until each has
// done `ops` operations), each op drawn at random:
//   match  Match of one of `contexts` preloaded sequences (each `blobs` blobs of
//          `blob_pages` pages) plus a partial page, as a decode step asks;
//   read   Match, then Read of the matched blobs (all layers), ReadSource of every layer
//          range with a copy of its bytes out, and Release;
//   write  BeginPut of a new blob continuing a random preloaded sequence, PutTarget, a copy
//          of its bytes in, PutReceived and CommitPut (the commit verifies every chunk).
// The engine runs with options.measure_lock_hold, so the table also shows the hold-time
// distribution of the engine's index lock over the whole run (preload excluded).
//
//   store_core_engine_mix_bench [--threads=8] [--seconds=3] [--ops=0 (unbounded)]
//       [--match=60] [--read=30] [--write=10] [--contexts=256] [--blobs=8] [--blob_pages=4]
//       [--page_tokens=16] [--layers=4]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"

#include "bench_support.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using bench::Mix;

struct Flags {
  int threads = 8;
  double seconds = 3;
  uint64_t ops = 0;  // per thread; 0: until `seconds`
  int match = 60;
  int read = 30;
  int write = 10;
  int contexts = 256;
  int blobs = 8;
  uint32_t blob_pages = 4;
  uint32_t page_tokens = 16;
  uint32_t layers = 4;
};

enum Op { kMatch = 0, kRead = 1, kWrite = 2, kOps = 3 };
constexpr const char* kOpNames[kOps] = {"match", "read", "write"};

struct Sequence {
  std::vector<radix::TokenId> tokens;  // whole pages
  std::vector<BlobParent> blobs;       // each blob's key and end page
};

std::vector<radix::TokenId> Tokens(uint64_t seed, size_t n) {
  std::vector<radix::TokenId> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<radix::TokenId>(Mix(seed * 1'000'003 + i));
  return t;
}

// Puts one blob (its bytes a pattern of `seed`); false if the tier is full.
std::optional<radix::BlobKey> PutBlob(NodeEngine& engine, const radix::Namespace& ns,
                                      std::optional<BlobParent> parent,
                                      absl::Span<const radix::TokenId> own, uint64_t seed,
                                      std::vector<std::byte>* data) {
  const uint32_t pages = own.size() / ns.layout().page_tokens;
  const uint64_t bytes = pages * ns.layout().BytesPerPage();
  data->resize(bytes);
  for (uint64_t i = 0; i < bytes; i += 8) {
    const uint64_t v = Mix(seed + i);
    std::memcpy(data->data() + i, &v, std::min<uint64_t>(8, bytes - i));
  }
  auto blob_layout = radix::BlobLayout::Create(ns.layout(), pages);
  BENCH_CHECK_OK(blob_layout.status());
  auto checksums = ComputeChunkChecksums(*blob_layout, *data);
  BENCH_CHECK_OK(checksums.status());
  PutRequest request;
  request.parent = parent;
  request.tokens = own;
  request.bytes = bytes;
  request.checksums = *checksums;
  auto begin = engine.BeginPut(ns, request);
  if (absl::IsResourceExhausted(begin.status())) return std::nullopt;
  BENCH_CHECK_OK(begin.status());
  if (begin->exists) return begin->key;
  auto target = engine.PutTarget(begin->put_id);
  BENCH_CHECK_OK(target.status());
  std::memcpy(target->data(), data->data(), bytes);
  *target = HeldSpan();
  BENCH_CHECK_OK(engine.PutReceived(begin->put_id, 0, bytes));
  auto commit = engine.CommitPut(begin->put_id);
  BENCH_CHECK_OK(commit.status());
  return commit->key;
}

// Match, Read of the matched blobs, ReadSource + copy of every range, Release. Returns
// false on a miss (a blob evicted meanwhile).
bool ReadSequence(NodeEngine& engine, const radix::Namespace& ns,
                  absl::Span<const radix::TokenId> query, std::vector<std::byte>* out) {
  auto match = engine.Match(ns, query);
  BENCH_CHECK_OK(match.status());
  std::vector<ReadRange> ranges;
  for (const Segment& s : match->segments) {
    if (s.tier == Tier::kText) break;
    ranges.push_back(
        ReadRange{s.blob, s.blob_page_offset, s.page_count, 0, ns.layout().num_layers});
  }
  if (ranges.empty()) return false;
  auto read = engine.Read(ns, ranges);
  if (absl::IsNotFound(read.status())) return false;
  BENCH_CHECK_OK(read.status());
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (const radix::ByteRange& r : read->ranges[i].layer_ranges) {
      auto span = engine.ReadSource(read->lease_id, ranges[i].blob, r.offset, r.length);
      BENCH_CHECK_OK(span.status());
      out->resize(std::max<size_t>(out->size(), r.length));
      std::memcpy(out->data(), span->data(), r.length);
    }
  }
  BENCH_CHECK_OK(engine.Release(read->lease_id));
  return true;
}

struct ThreadCounts {
  std::array<uint64_t, kOps> done{};
  uint64_t misses = 0;  // reads that found a blob gone, writes refused (tier full)
};

int Main(int argc, char** argv) {
  Flags f;
  std::string command;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command, i == 0 ? "" : " ", argv[i]);
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const auto value = [&](absl::string_view name) { return bench::FlagValue(arg, name); };
    // Parses --name=VALUE into *field; false if arg is not --name=... or VALUE is bad.
    const auto parse = [&](absl::string_view name, auto* field) {
      const absl::string_view v = value(name);
      if (v.empty()) return false;
      if constexpr (std::is_floating_point_v<std::remove_pointer_t<decltype(field)>>) {
        return absl::SimpleAtod(v, field);
      } else {
        return absl::SimpleAtoi(v, field);
      }
    };
    const bool ok = parse("threads", &f.threads) || parse("seconds", &f.seconds) ||
                    parse("ops", &f.ops) || parse("match", &f.match) || parse("read", &f.read) ||
                    parse("write", &f.write) || parse("contexts", &f.contexts) ||
                    parse("blobs", &f.blobs) || parse("blob_pages", &f.blob_pages) ||
                    parse("page_tokens", &f.page_tokens) || parse("layers", &f.layers);
    if (!ok) {
      std::fprintf(stderr, "bad argument %s\n", argv[i]);
      return 2;
    }
  }
  CHECK_GT(f.threads, 0);
  CHECK_GT(f.contexts, 0);
  CHECK_GT(f.blobs, 0);
  CHECK_GT(f.match + f.read + f.write, 0);
  std::printf("command: %s\ndate: %s\n", command.c_str(),
              absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(), absl::UTCTimeZone()).c_str());

  auto ns =
      radix::Namespace::Create("bench", "mix", bench::Fp16Layout(f.layers, 1, 32, f.page_tokens));
  BENCH_CHECK_OK(ns.status());
  NodeEngineOptions options;
  options.dram_bytes = uint64_t{1} << 30;
  options.dram_granule_bytes = 4096;
  options.dram_try_hugetlb = false;
  options.measure_lock_hold = true;
  auto engine_or = NodeEngine::Create(options);
  BENCH_CHECK_OK(engine_or.status());
  NodeEngine& engine = **engine_or;

  // Preload.
  const size_t blob_tokens = size_t{f.blob_pages} * f.page_tokens;
  std::vector<Sequence> sequences(f.contexts);
  std::vector<std::byte> scratch;
  for (int c = 0; c < f.contexts; ++c) {
    Sequence& s = sequences[c];
    s.tokens = Tokens(c + 1, blob_tokens * f.blobs);
    std::optional<BlobParent> parent;
    for (int b = 0; b < f.blobs; ++b) {
      const auto own = absl::MakeConstSpan(s.tokens).subspan(b * blob_tokens, blob_tokens);
      auto key = PutBlob(engine, *ns, parent, own, Mix(c * 977 + b), &scratch);
      CHECK(key.has_value()) << "the DRAM tier is too small for the preload";
      parent = BlobParent{*key, static_cast<uint32_t>((b + 1) * f.blob_pages)};
      s.blobs.push_back(*parent);
    }
    s.tokens.push_back(7);  // a decode step's partial page
  }
  const LockHoldStats preload = engine.lock_hold();

  std::atomic<bool> stop{false};
  std::vector<ThreadCounts> counts(f.threads);
  std::vector<std::thread> threads;
  const int total_weight = f.match + f.read + f.write;
  const absl::Time start = absl::Now();
  for (int t = 0; t < f.threads; ++t) {
    threads.emplace_back([&, t] {
      ThreadCounts& mine = counts[t];
      std::vector<std::byte> buffer;
      std::vector<radix::TokenId> own(blob_tokens);
      for (uint64_t i = 0; (f.ops == 0 || i < f.ops) && !stop.load(std::memory_order_relaxed);
           ++i) {
        const uint64_t r = Mix((uint64_t{static_cast<uint32_t>(t)} << 40) + i);
        const Sequence& s = sequences[r % sequences.size()];
        const int pick = static_cast<int>((r >> 32) % total_weight);
        if (pick < f.match) {
          BENCH_CHECK_OK(engine.Match(*ns, s.tokens).status());
          ++mine.done[kMatch];
        } else if (pick < f.match + f.read) {
          if (!ReadSequence(engine, *ns, s.tokens, &buffer)) ++mine.misses;
          ++mine.done[kRead];
        } else {
          // A new blob after a random blob of the sequence: fresh tokens every time.
          const BlobParent& parent = s.blobs[(r >> 16) % s.blobs.size()];
          for (size_t k = 0; k < own.size(); ++k) {
            own[k] = static_cast<radix::TokenId>(Mix(r + k + 1));
          }
          if (!PutBlob(engine, *ns, parent, own, r, &buffer).has_value()) ++mine.misses;
          ++mine.done[kWrite];
        }
        if (f.ops == 0 && (i & 63) == 0 && absl::Now() - start >= absl::Seconds(f.seconds)) break;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  const LockHoldStats all = engine.lock_hold();

  std::array<uint64_t, kOps> done{};
  uint64_t misses = 0;
  for (const ThreadCounts& c : counts) {
    for (int k = 0; k < kOps; ++k) done[k] += c.done[k];
    misses += c.misses;
  }
  uint64_t total = 0;
  for (const uint64_t d : done) total += d;
  std::printf("\nthreads %d, %.2f s, %d contexts x %d blobs x %u pages, %u layers, mix %d/%d/%d\n",
              f.threads, elapsed, f.contexts, f.blobs, f.blob_pages, f.layers, f.match, f.read,
              f.write);
  std::printf("%-8s %12s %12s\n", "op", "ops", "ops/s");
  for (int k = 0; k < kOps; ++k) {
    std::printf("%-8s %12llu %12.0f\n", kOpNames[k], static_cast<unsigned long long>(done[k]),
                done[k] / elapsed);
  }
  std::printf("%-8s %12llu %12.0f\n", "total", static_cast<unsigned long long>(total),
              total / elapsed);
  std::printf("misses (reads of evicted blobs, refused writes): %llu\n",
              static_cast<unsigned long long>(misses));
  // The run's holds: everything recorded minus the preload's (counts only; quantiles are
  // over the whole histogram, the preload is a small share of it).
  std::printf(
      "\nengine lock holds: %llu (%.0f/s), mean %.2f us, p50 %.2f us, p99 %.2f us, max %.1f us\n",
      static_cast<unsigned long long>(all.count - preload.count),
      (all.count - preload.count) / elapsed, all.mean_us, all.p50_us, all.p99_us, all.max_us);
  return 0;
}

}  // namespace
}  // namespace strata::store::core

int main(int argc, char** argv) { return strata::store::core::Main(argc, argv); }
