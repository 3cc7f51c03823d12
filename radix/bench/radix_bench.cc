// radix_bench: RadixTree match latency, insert rate and index memory, next to
// the physical floor of a match (memcmp of the prompt against a copy, and
// XXH3-64 over the prompt's bytes: what any hash-per-page index pays at least).
//
// The index: ~10M cached tokens in 10K branching sequences at 16-token pages,
// a forest of conversations under two namespace roots. 16 shared system
// prompts; conversations start from one, continue (extend a sequence), or
// branch off a random page of an existing sequence (edits, retries, some
// diverging mid-page); 8 agent runs grow turn by turn (1-4K tokens each) past
// 160K tokens, so a 128K-token prompt can match deep. Built once.
//
// Per-iteration times are collected by the benchmark itself: p50/p99 in µs;
// tok/s from the p50; insert rates from the mean; x_memcmp / x_xxh3 = match
// p50 / floor p50, the floors measured on the same prompt right after. The
// Time column is the mean per-operation (manual) time, which on a loaded
// machine includes preemptions that p50 does not.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

#include "strata/radix/prefix_hash.h"
#include "strata/radix/radix_tree.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace strata::radix {
namespace {

constexpr uint32_t kPage = 16;
constexpr int kSequences = 10000;
constexpr int kSystemPrompts = 16;
constexpr int kAgents = 8;
constexpr size_t kAgentTokens = 160 * 1024;
constexpr size_t kPromptTokens = 128 * 1024;
constexpr size_t kMaxConversationTokens = 32 * 1024;

using Clock = std::chrono::steady_clock;
using Tokens = std::vector<TokenId>;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One sequence = its parent's first `parent_tokens` tokens + its own tail.
struct Sequence {
  int parent = -1;
  size_t parent_tokens = 0;
  Tokens tail;
  PrefixHash root;
  size_t size() const { return parent_tokens + tail.size(); }
};

class Forest {
 public:
  Forest() : tree_(kPage) { Build(); }

  RadixTree& tree() { return tree_; }
  const Tokens& agent_path(int a) const { return agent_paths_[a]; }
  const PrefixHash& agent_root(int a) const { return seqs_[agent_last_[a]].root; }
  double build_seconds() const { return build_seconds_; }
  uint64_t sequences() const { return seqs_.size(); }

 private:
  void AppendPrefix(int id, size_t count, Tokens* out) const {
    const Sequence& s = seqs_[id];
    if (s.parent >= 0) AppendPrefix(s.parent, std::min(count, s.parent_tokens), out);
    if (count > s.parent_tokens) {
      out->insert(out->end(), s.tail.begin(), s.tail.begin() + (count - s.parent_tokens));
    }
  }
  Tokens Full(int id) const {
    Tokens out;
    out.reserve(seqs_[id].size());
    AppendPrefix(id, seqs_[id].size(), &out);
    return out;
  }
  Tokens RandomTokens(size_t n) {
    Tokens t(n);
    for (auto& x : t) x = static_cast<TokenId>(rng_() % 150000);
    return t;
  }
  size_t Pages(size_t lo, size_t hi) { return kPage * (lo + rng_() % (hi - lo + 1)); }

  // Adds a sequence and caches its tail (the blob) in the tree.
  int Add(Sequence s) {
    const int id = static_cast<int>(seqs_.size());
    seqs_.push_back(std::move(s));
    const Tokens tokens = Full(id);
    const auto begin = static_cast<uint32_t>(seqs_[id].parent_tokens / kPage);
    const BlobKey blob{PrefixHash{0, static_cast<uint64_t>(id) + 1}};
    auto added = tree_.Insert(seqs_[id].root, tokens, begin, blob);
    if (!added.ok()) {
      std::fprintf(stderr, "forest insert failed: %s\n", added.status().ToString().c_str());
      std::abort();
    }
    return id;
  }

  void Build() {
    const auto start = Clock::now();
    for (int p = 0; p < kSystemPrompts; ++p) {
      Sequence s;
      s.root = PrefixHash{0x5eed, static_cast<uint64_t>(p % 2)};
      s.tail = RandomTokens(Pages(64, 256));
      prompts_.push_back(Add(std::move(s)));
    }
    for (int a = 0; a < kAgents; ++a) agent_last_.push_back(prompts_[a]);
    while (static_cast<int>(seqs_.size()) < kSequences) {
      const int a = static_cast<int>(rng_() % kAgents);
      if (rng_() % 100 < 7 && seqs_[agent_last_[a]].size() < kAgentTokens) {
        // Next agent turn: 1-4K new tokens on top of the run so far.
        Sequence s;
        s.parent = agent_last_[a];
        s.parent_tokens = seqs_[s.parent].size();
        s.root = seqs_[s.parent].root;
        s.tail = RandomTokens(Pages(64, 256));
        agent_last_[a] = Add(std::move(s));
        continue;
      }
      Sequence s;
      const int dice = static_cast<int>(rng_() % 100);
      if (dice < 35 || ids_.empty()) {  // new conversation on a system prompt
        s.parent = prompts_[rng_() % prompts_.size()];
        s.parent_tokens = seqs_[s.parent].size();
      } else if (dice < 80) {  // continue a conversation
        s.parent = ids_[rng_() % ids_.size()];
        if (seqs_[s.parent].size() > kMaxConversationTokens) continue;
        s.parent_tokens = seqs_[s.parent].size();
      } else {  // branch off any sequence at a random page
        s.parent = static_cast<int>(rng_() % seqs_.size());
        const size_t pages = seqs_[s.parent].size() / kPage;
        s.parent_tokens = kPage * (1 + rng_() % (pages - 1));
      }
      s.root = seqs_[s.parent].root;
      s.tail = RandomTokens(Pages(1, 115));
      if (dice >= 80 && rng_() % 2 == 0) {
        // Diverge mid-page: the first tokens repeat the parent's next page.
        Tokens next;
        AppendPrefix(s.parent, std::min(seqs_[s.parent].size(), s.parent_tokens + kPage / 2),
                     &next);
        for (size_t i = s.parent_tokens; i < next.size(); ++i) {
          s.tail[i - s.parent_tokens] = next[i];
        }
      }
      ids_.push_back(Add(std::move(s)));
    }
    build_seconds_ = Seconds(Clock::now() - start);
    for (int a = 0; a < kAgents; ++a) agent_paths_.push_back(Full(agent_last_[a]));
  }

  std::mt19937_64 rng_{2024};
  RadixTree tree_;
  std::vector<Sequence> seqs_;
  std::vector<int> prompts_;
  std::vector<int> ids_;  // conversation sequences
  std::vector<int> agent_last_;
  std::vector<Tokens> agent_paths_;
  double build_seconds_ = 0;
};

Forest& GetForest() {
  static Forest* forest = new Forest;
  return *forest;
}

// Latency summary of per-iteration samples (seconds).
struct Latency {
  double p50_us = 0, p99_us = 0, mean_s = 0;
};
Latency Summarize(std::vector<double> samples) {
  Latency l;
  if (samples.empty()) return l;
  double sum = 0;
  for (double s : samples) sum += s;
  l.mean_s = sum / samples.size();
  std::sort(samples.begin(), samples.end());
  l.p50_us = samples[samples.size() / 2] * 1e6;
  l.p99_us = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)] * 1e6;
  return l;
}

void Report(benchmark::State& state, const Latency& l, double tokens) {
  state.counters["p50_us"] = l.p50_us;
  state.counters["p99_us"] = l.p99_us;
  state.counters["tok/s"] = l.p50_us > 0 ? tokens / (l.p50_us * 1e-6) : 0;
}

// The 128K-token prompts: agent path prefixes. "hit": 127K cached tokens + 1K
// new ones; "diverge": 64K cached + 64K new.
std::vector<Tokens> MakePrompts(bool diverge) {
  Forest& forest = GetForest();
  std::mt19937_64 rng(99);
  std::vector<Tokens> prompts;
  const size_t cached = diverge ? kPromptTokens / 2 : kPromptTokens - 1024;
  for (int a = 0; a < kAgents; ++a) {
    const Tokens& path = forest.agent_path(a);
    if (path.size() < kPromptTokens) {
      std::fprintf(stderr, "agent path %d has only %zu tokens\n", a, path.size());
      std::abort();
    }
    Tokens p(path.begin(), path.begin() + cached);
    while (p.size() < kPromptTokens) p.push_back(static_cast<TokenId>(150000 + rng() % 1000));
    prompts.push_back(std::move(p));
  }
  return prompts;
}

// p50 of `fn` over `reps` runs, in seconds.
template <typename Fn>
double MedianSeconds(int reps, Fn&& fn) {
  std::vector<double> s;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    fn();
    s.push_back(Seconds(Clock::now() - t0));
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

void BM_Match128K(benchmark::State& state) {
  const bool diverge = state.range(0) != 0;
  const bool pin = state.range(1) != 0;
  Forest& forest = GetForest();
  const std::vector<Tokens> prompts = MakePrompts(diverge);
  std::vector<double> samples;
  uint64_t matched = 0;
  uint64_t segments = 0;
  int a = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    {
      MatchResult r = forest.tree().Match(forest.agent_root(a), prompts[a], pin);
      matched += r.matched_pages;
      segments += r.segments.size();
      benchmark::DoNotOptimize(r.segments.data());
    }  // a pinned handle is released here, inside the timed region
    const double s = Seconds(Clock::now() - t0);
    state.SetIterationTime(s);
    samples.push_back(s);
    a = (a + 1) % kAgents;
  }
  const Latency l = Summarize(std::move(samples));
  Report(state, l, kPromptTokens);
  state.counters["matched_pages"] = static_cast<double>(matched) / state.iterations();
  state.counters["segments"] = static_cast<double>(segments) / state.iterations();
  // The floors on the same prompts, measured now.
  const Tokens copy = prompts[0];
  const double memcmp_s = MedianSeconds(201, [&] {
    benchmark::DoNotOptimize(
        std::memcmp(prompts[0].data(), copy.data(), kPromptTokens * sizeof(TokenId)));
  });
  const double xxh3_s = MedianSeconds(201, [&] {
    benchmark::DoNotOptimize(XXH3_64bits(prompts[0].data(), kPromptTokens * sizeof(TokenId)));
  });
  state.counters["x_memcmp"] = l.p50_us * 1e-6 / memcmp_s;
  state.counters["x_xxh3"] = l.p50_us * 1e-6 / xxh3_s;
}
BENCHMARK(BM_Match128K)
    ->ArgNames({"diverge", "pin"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_FloorMemcmp128K(benchmark::State& state) {
  const std::vector<Tokens> prompts = MakePrompts(false);
  std::vector<Tokens> copies = prompts;
  std::vector<double> samples;
  int a = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(
        std::memcmp(prompts[a].data(), copies[a].data(), kPromptTokens * sizeof(TokenId)));
    const double s = Seconds(Clock::now() - t0);
    state.SetIterationTime(s);
    samples.push_back(s);
    a = (a + 1) % kAgents;
  }
  Report(state, Summarize(std::move(samples)), kPromptTokens);
}
BENCHMARK(BM_FloorMemcmp128K)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_FloorXxh3_128K(benchmark::State& state) {
  const std::vector<Tokens> prompts = MakePrompts(false);
  std::vector<double> samples;
  int a = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    benchmark::DoNotOptimize(XXH3_64bits(prompts[a].data(), kPromptTokens * sizeof(TokenId)));
    const double s = Seconds(Clock::now() - t0);
    state.SetIterationTime(s);
    samples.push_back(s);
    a = (a + 1) % kAgents;
  }
  Report(state, Summarize(std::move(samples)), kPromptTokens);
}
BENCHMARK(BM_FloorXxh3_128K)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Insert rate: 64 live conversations under 16 system prompts; each insert is
// one blob of 1-64 pages that extends a conversation (85%) or branches it at
// a random page (15%, splitting a node). Conversations restart past 32K
// tokens; past 1M cached pages the tree is rebuilt outside the timed region.
class InsertWorkload {
 public:
  InsertWorkload() { Reset(); }

  RadixTree& tree() { return *tree_; }
  void Reset() {
    tree_ = std::make_unique<RadixTree>(kPage);
    system_prompts_.clear();
    for (int p = 0; p < kSystemPrompts; ++p) {
      system_prompts_.push_back(RandomTokens(kPage * (64 + rng_() % 193)));
      (void)tree_->Insert(kRoot, system_prompts_.back(), 0, BlobKey{PrefixHash{1, rng_()}});
    }
    conversations_.assign(64, {});
    for (auto& c : conversations_) c = system_prompts_[rng_() % kSystemPrompts];
  }
  // Prepares the next blob: `tokens` is the whole sequence, pages from
  // `begin` on are the blob.
  const Tokens& Next(uint32_t* begin) {
    current_ = &conversations_[rng_() % conversations_.size()];
    Tokens& c = *current_;
    if (c.size() > kMaxConversationTokens) c = system_prompts_[rng_() % kSystemPrompts];
    const size_t pages = c.size() / kPage;
    size_t keep = pages;
    if (rng_() % 100 < 15 && pages > 1) keep = 1 + rng_() % (pages - 1);
    c.resize(keep * kPage);
    const Tokens tail = RandomTokens(kPage * (1 + rng_() % 64));
    c.insert(c.end(), tail.begin(), tail.end());
    *begin = static_cast<uint32_t>(keep);
    return c;
  }
  BlobKey NextBlob() { return BlobKey{PrefixHash{1, rng_()}}; }

  static constexpr PrefixHash kRoot{0x5eed, 7};

 private:
  Tokens RandomTokens(size_t n) {
    Tokens t(n);
    for (auto& x : t) x = static_cast<TokenId>(rng_() % 150000);
    return t;
  }

  std::mt19937_64 rng_{5};
  std::unique_ptr<RadixTree> tree_;
  std::vector<Tokens> system_prompts_;
  std::vector<Tokens> conversations_;
  Tokens* current_ = nullptr;
};

void BM_Insert(benchmark::State& state) {
  InsertWorkload work;
  std::vector<double> samples;
  uint64_t pages = 0;
  for (auto _ : state) {
    uint32_t begin = 0;
    const Tokens& tokens = work.Next(&begin);
    const BlobKey blob = work.NextBlob();
    const auto t0 = Clock::now();
    auto added = work.tree().Insert(InsertWorkload::kRoot, tokens, begin, blob);
    const double s = Seconds(Clock::now() - t0);
    state.SetIterationTime(s);
    samples.push_back(s);
    if (!added.ok()) {
      state.SkipWithError(added.status().ToString().c_str());
      break;
    }
    pages += *added;
    if (work.tree().Stats().pages > (1u << 20)) work.Reset();
  }
  const Latency l = Summarize(samples);
  state.counters["p50_us"] = l.p50_us;
  state.counters["p99_us"] = l.p99_us;
  state.counters["blobs/s"] = l.mean_s > 0 ? 1 / l.mean_s : 0;
  state.counters["pages/s"] = l.mean_s > 0 ? pages / (l.mean_s * samples.size()) : 0;
  state.counters["pages/blob"] = static_cast<double>(pages) / samples.size();
}
BENCHMARK(BM_Insert)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Index memory of the 10M-token forest (and Stats() latency as the timing).
void BM_IndexMemory(benchmark::State& state) {
  Forest& forest = GetForest();
  RadixTreeStats s;
  for (auto _ : state) {
    s = forest.tree().Stats();
    benchmark::DoNotOptimize(s);
  }
  state.counters["sequences"] = static_cast<double>(forest.sequences());
  state.counters["cached_tokens"] = static_cast<double>(s.pages) * kPage;
  state.counters["nodes"] = static_cast<double>(s.nodes);
  state.counters["token_MB"] = s.token_bytes / 1e6;
  state.counters["index_MB"] = s.index_bytes / 1e6;
  state.counters["B/page_over_tokens"] =
      static_cast<double>(s.index_bytes - s.token_bytes) / static_cast<double>(s.pages);
  state.counters["B/node_over_tokens"] =
      static_cast<double>(s.index_bytes - s.token_bytes) / static_cast<double>(s.nodes);
  state.counters["build_s"] = forest.build_seconds();
}
BENCHMARK(BM_IndexMemory);

// Client-side cost of naming a prompt: the chained prefix hashes h_1..h_n of a
// 128K-token prompt (PrefixHashes), next to unchained XXH3-128 over the same
// bytes (the floor: one hash call per page with no chaining).
void BM_PrefixHashes128K(benchmark::State& state) {
  const uint32_t page_tokens = static_cast<uint32_t>(state.range(0));
  std::mt19937 rng(7);
  Tokens prompt(kPromptTokens);
  for (TokenId& t : prompt) t = rng() % 128000;
  const PrefixHash root{0x1234, 0x5678};
  const size_t pages = kPromptTokens / page_tokens;
  std::vector<PrefixHash> hashes;
  hashes.reserve(pages);
  double chained = 0, floor = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    AppendPrefixHashes(root, prompt, page_tokens, &hashes);
    auto t1 = Clock::now();
    uint64_t sink = 0;
    for (size_t p = 0; p < pages; ++p) {
      sink ^= XXH3_128bits_withSeed(prompt.data() + p * page_tokens, page_tokens * sizeof(TokenId),
                                    kPrefixHashSeed)
                  .low64;
    }
    auto t2 = Clock::now();
    benchmark::DoNotOptimize(sink);
    benchmark::DoNotOptimize(hashes.data());
    hashes.clear();
    chained += Seconds(t1 - t0);
    floor += Seconds(t2 - t1);
    state.SetIterationTime(Seconds(t1 - t0));
  }
  const double n = static_cast<double>(state.iterations()) * static_cast<double>(pages);
  state.counters["ns/page"] = chained / n * 1e9;
  state.counters["floor_ns/page"] = floor / n * 1e9;
  state.counters["x_floor"] = chained / floor;
  state.counters["GB/s"] = n * page_tokens * sizeof(TokenId) / chained / 1e9;
}
BENCHMARK(BM_PrefixHashes128K)->Arg(16)->Arg(512)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::radix
