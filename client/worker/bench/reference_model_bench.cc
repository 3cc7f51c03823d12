// worker_reference_model_bench: how fast the reference model computes KV.
//
// For each layout, per iteration one blob of kPages pages continuing a state
// that already folded in kPages pages (ComputeNextPages), and folding kPages
// pages into a state without their KV (Advance: what a from-scratch
// ComputeBlob pays for its prefix). Counters:
//   token_layers/s  tokens * num_layers per second (the target is
//                   >= ~1M/s at small layouts)
//   bytes/s         KV bytes written per second (ComputeNextPages)
//   macs/s          multiply-adds per second: D*(2W+D) per token-layer (D*(W+D)
//                   for MLA; D*D for Advance)
// and the same blob's chunk checksums (XXH3-64 per layer-page) for scale.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"

#include "strata/radix/chunk_checksum.h"
#include "strata/radix/kv_layout.h"
#include "strata/worker/reference_model.h"

namespace strata::worker {
namespace {

using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::TokenId;

constexpr uint32_t kPages = 16;

struct NamedLayout {
  const char* name;
  KvLayout layout;
};

KvLayout Make(uint32_t layers, uint32_t heads, uint32_t head_dim, DType dtype, uint32_t page,
              KvFormat format) {
  return KvLayout{.num_layers = layers,
                  .num_kv_heads = heads,
                  .head_dim = head_dim,
                  .dtype = dtype,
                  .page_tokens = page,
                  .format = format,
                  .tp_rank = 0,
                  .tp_world = 1};
}

const std::vector<NamedLayout>& Layouts() {
  static const auto* layouts = new std::vector<NamedLayout>{
      {"small(4L,2x16,fp16,p16)", Make(4, 2, 16, DType::kFloat16, 16, KvFormat::kKeyValue)},
      {"7B(32L,8x128,bf16,p16)", Make(32, 8, 128, DType::kBFloat16, 16, KvFormat::kKeyValue)},
      {"mla(61L,576,bf16,p64)", Make(61, 1, 576, DType::kBFloat16, 64, KvFormat::kMlaLatent)},
  };
  return *layouts;
}

std::vector<TokenId> Tokens(size_t n) {
  std::vector<TokenId> tokens(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<TokenId>((i * 2654435761u) % 128000);
  return tokens;
}

double MacsPerTokenLayer(const KvLayout& layout, bool with_kv) {
  const double d = ReferenceModel::kModelDim;
  const double w = static_cast<double>(layout.num_kv_heads) * layout.head_dim;
  if (!with_kv) return d * d;
  return d * ((layout.format == KvFormat::kKeyValue ? 2 * w : w) + d);
}

void SetCounters(benchmark::State& state, const KvLayout& layout, size_t tokens, bool with_kv) {
  const double token_layers = static_cast<double>(tokens) * layout.num_layers;
  const double iterations = static_cast<double>(state.iterations());
  state.counters["token_layers/s"] =
      benchmark::Counter(token_layers * iterations, benchmark::Counter::kIsRate);
  state.counters["macs/s"] = benchmark::Counter(
      token_layers * MacsPerTokenLayer(layout, with_kv) * iterations, benchmark::Counter::kIsRate);
  if (with_kv) {
    state.counters["bytes/s"] =
        benchmark::Counter(static_cast<double>(kPages * layout.BytesPerPage()) * iterations,
                           benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  }
}

void BM_ComputeNextPages(benchmark::State& state) {
  const NamedLayout& named = Layouts()[state.range(0)];
  const KvLayout& layout = named.layout;
  state.SetLabel(named.name);
  auto model = ReferenceModel::Create(layout, 1);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const size_t page_tokens = layout.page_tokens;
  const std::vector<TokenId> tokens = Tokens(2 * kPages * page_tokens);
  const auto prefix = absl::MakeConstSpan(tokens).first(kPages * page_tokens);
  const auto span = absl::MakeConstSpan(tokens).subspan(kPages * page_tokens);
  ModelState after_prefix = (*model)->InitialState();
  if (!(*model)->Advance(&after_prefix, prefix).ok()) return state.SkipWithError("advance");
  std::vector<std::byte> out(kPages * layout.BytesPerPage());
  for (auto _ : state) {
    ModelState s = after_prefix;
    const absl::Status status = (*model)->ComputeNextPages(&s, span, absl::MakeSpan(out));
    if (!status.ok()) return state.SkipWithError(status.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, layout, span.size(), true);
}

void BM_Advance(benchmark::State& state) {
  const NamedLayout& named = Layouts()[state.range(0)];
  const KvLayout& layout = named.layout;
  state.SetLabel(named.name);
  auto model = ReferenceModel::Create(layout, 1);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const std::vector<TokenId> tokens = Tokens(kPages * layout.page_tokens);
  for (auto _ : state) {
    ModelState s = (*model)->InitialState();
    if (!(*model)->Advance(&s, tokens).ok()) return state.SkipWithError("advance");
    benchmark::DoNotOptimize(s.tokens());
  }
  SetCounters(state, layout, tokens.size(), false);
}

void BM_ChunkChecksums(benchmark::State& state) {
  const NamedLayout& named = Layouts()[state.range(0)];
  const KvLayout& layout = named.layout;
  state.SetLabel(named.name);
  auto model = ReferenceModel::Create(layout, 1);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const std::vector<TokenId> tokens = Tokens(kPages * layout.page_tokens);
  auto blob = (*model)->ComputeBlobBytes(tokens, 0, kPages);
  if (!blob.ok()) return state.SkipWithError(blob.status().ToString().c_str());
  for (auto _ : state) {
    auto sums = radix::ChunkChecksums(*blob, layout, kPages);
    benchmark::DoNotOptimize(sums);
  }
  state.counters["bytes/s"] =
      benchmark::Counter(static_cast<double>(blob->size()) * state.iterations(),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}

BENCHMARK(BM_ComputeNextPages)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Advance)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChunkChecksums)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::worker
