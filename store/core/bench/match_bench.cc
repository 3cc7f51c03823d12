// Match latency with and without the live miss-ratio curve: what SHARDS sampling adds to
// the request path.
//
// For each context length, the program puts one sequence as blobs of `blob_pages` pages
// into an engine, then times Match of the whole sequence (plus a partial page, as a decode
// step asks) `iterations` times on three engines that differ only in
// NodeEngineOptions::mrc_sampled_keys: 0 (no curve: no page hashing), the default 8192, and
// 32768. To model many distinct contexts (the sampler's cost depends on how many of the
// pages it samples), each iteration looks up one of `contexts` distinct sequences.
// Prints one table: median and mean Match time per configuration and the overhead ratio.
//
//   store_core_match_bench [--iterations=200] [--contexts=64] [--page_tokens=16]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
  int iterations = 200;
  int contexts = 64;
  uint32_t page_tokens = 16;
};

// A layout with tiny pages in bytes (the bench is about the index, not the bytes).
radix::KvLayout Layout(uint32_t page_tokens) { return bench::Fp16Layout(1, 1, 8, page_tokens); }

std::vector<radix::TokenId> Tokens(uint64_t context, size_t n) {
  std::vector<radix::TokenId> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<radix::TokenId>(Mix(context * 1'000'003 + i));
  return t;
}

// Puts `tokens` (whole pages) as one blob per `blob_pages` pages.
void PutSequence(NodeEngine& engine, const radix::Namespace& ns,
                 const std::vector<radix::TokenId>& tokens) {
  const uint32_t page_tokens = ns.layout().page_tokens;
  const uint32_t pages = tokens.size() / page_tokens;
  const uint32_t blob_pages = 64;
  std::optional<BlobParent> parent;
  for (uint32_t p = 0; p < pages; p += blob_pages) {
    const uint32_t n = std::min(blob_pages, pages - p);
    const auto own =
        absl::MakeConstSpan(tokens).subspan(size_t{p} * page_tokens, size_t{n} * page_tokens);
    const uint64_t bytes = n * ns.layout().BytesPerPage();
    std::vector<std::byte> data(bytes, std::byte{0});
    auto blob_layout = radix::BlobLayout::Create(ns.layout(), n);
    BENCH_CHECK_OK(blob_layout.status());
    auto checksums_or = ComputeChunkChecksums(*blob_layout, data);
    BENCH_CHECK_OK(checksums_or.status());
    const std::vector<uint64_t>& checksums = *checksums_or;
    PutRequest request;
    request.parent = parent;
    request.tokens = own;
    request.bytes = bytes;
    request.checksums = checksums;
    auto begin = engine.BeginPut(ns, request);
    BENCH_CHECK_OK(begin.status());
    if (begin->exists) {
      parent = BlobParent{begin->key, p + n};
      continue;
    }
    auto target = engine.PutTarget(begin->put_id);
    BENCH_CHECK_OK(target.status());
    std::copy(data.begin(), data.end(), target->data());
    *target = HeldSpan();
    BENCH_CHECK_OK(engine.PutReceived(begin->put_id, 0, bytes));
    auto commit = engine.CommitPut(begin->put_id);
    BENCH_CHECK_OK(commit.status());
    parent = BlobParent{commit->key, p + n};
  }
}

int Main(int argc, char** argv) {
  Flags flags;
  std::string command;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command, i == 0 ? "" : " ", argv[i]);
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const auto value = [&](absl::string_view name) { return bench::FlagValue(arg, name); };
    if (!value("iterations").empty()) {
      CHECK(absl::SimpleAtoi(value("iterations"), &flags.iterations));
    } else if (!value("contexts").empty()) {
      CHECK(absl::SimpleAtoi(value("contexts"), &flags.contexts));
    } else if (!value("page_tokens").empty()) {
      CHECK(absl::SimpleAtoi(value("page_tokens"), &flags.page_tokens));
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::printf("command: %s\ndate: %s\n", command.c_str(),
              absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(), absl::UTCTimeZone()).c_str());
  auto ns = radix::Namespace::Create("bench", "match", Layout(flags.page_tokens));
  BENCH_CHECK_OK(ns.status());

  const uint32_t configs[] = {0, 8192, 32768};
  std::printf("\n%9s %8s | %11s %11s | %11s %11s %6s %7s | %11s %11s %6s %7s\n", "tokens", "pages",
              "off p50 us", "off mean", "8192 p50", "8192 mean", "ratio", "ns/page", "32768 p50",
              "32768 mean", "ratio", "ns/page");
  for (const size_t context_tokens :
       {size_t{4096}, size_t{32768}, size_t{131072}, size_t{524288}}) {
    const size_t whole = context_tokens / flags.page_tokens * flags.page_tokens;
    // At most a quarter of the 1 GiB DRAM tier, so nothing is evicted.
    const uint64_t context_bytes = whole / flags.page_tokens * ns->layout().BytesPerPage();
    const int contexts = static_cast<int>(std::max<uint64_t>(
        1, std::min<uint64_t>(flags.contexts, (uint64_t{256} << 20) / context_bytes)));
    std::vector<std::vector<radix::TokenId>> sequences;
    for (int c = 0; c < contexts; ++c) sequences.push_back(Tokens(c + 1, whole));
    double p50[3], mean[3];
    for (int k = 0; k < 3; ++k) {
      NodeEngineOptions options;
      options.dram_bytes = uint64_t{1} << 30;
      options.dram_try_hugetlb = false;
      options.reap_interval = absl::ZeroDuration();
      options.background_demotion = false;
      options.text_bytes = 0;
      options.mrc_sampled_keys = configs[k];
      auto engine = NodeEngine::Create(options);
      BENCH_CHECK_OK(engine.status());
      for (const auto& s : sequences) PutSequence(**engine, *ns, s);
      std::vector<std::vector<radix::TokenId>> queries;
      for (const auto& s : sequences) {
        std::vector<radix::TokenId> q = s;
        q.push_back(7);  // a decode step's partial page
        queries.push_back(std::move(q));
      }
      // Warm the sampler so the fixed-size threshold has settled.
      for (int i = 0; i < contexts; ++i) BENCH_CHECK_OK((*engine)->Match(*ns, queries[i]).status());
      std::vector<double> us;
      us.reserve(flags.iterations);
      for (int i = 0; i < flags.iterations; ++i) {
        const auto& q = queries[Mix(i) % queries.size()];
        const absl::Time t0 = absl::Now();
        auto m = (*engine)->Match(*ns, q);
        const double t = absl::ToDoubleMicroseconds(absl::Now() - t0);
        BENCH_CHECK_OK(m.status());
        CHECK_EQ(m->matched_pages, whole / flags.page_tokens);
        us.push_back(t);
      }
      std::sort(us.begin(), us.end());
      p50[k] = us[us.size() / 2];
      double sum = 0;
      for (const double t : us) sum += t;
      mean[k] = sum / us.size();
    }
    const double pages = static_cast<double>(whole / flags.page_tokens);
    std::printf(
        "%9zu %8zu | %11.1f %11.1f | %11.1f %11.1f %6.2f %7.1f | %11.1f %11.1f %6.2f %7.1f\n",
        whole, whole / flags.page_tokens, p50[0], mean[0], p50[1], mean[1], mean[1] / mean[0],
        (mean[1] - mean[0]) * 1000 / pages, p50[2], mean[2], mean[2] / mean[0],
        (mean[2] - mean[0]) * 1000 / pages);
  }
  std::printf(
      "\nratio = mean Match time with the curve / without (mrc_sampled_keys 0); ns/page = what\n"
      "the curve adds per page looked up (page keys + SHARDS filter + sampled updates)\n");
  return 0;
}

}  // namespace
}  // namespace strata::store::core

int main(int argc, char** argv) { return strata::store::core::Main(argc, argv); }
