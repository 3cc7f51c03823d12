#include "client/tools/moe_demo.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"
#include "strata/gpu/moe_reference.h"
#include "strata/gpu/paged_kv.h"
#include "strata/radix/namespace.h"
#include "strata/worker/device_reference_model.h"
#include "strata/worker/reference_model.h"

namespace strata::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// The attention job (strata/gpu/moe_reference.h: the header's attention) over a blob of
// `pages` pages of `layout` at `blob`, into `out`.
gpu::AttentionJob AttentionOver(const radix::KvLayout& layout, const void* blob, uint32_t pages,
                                float* out) {
  gpu::AttentionJob job;
  job.blob = static_cast<const uint8_t*>(blob);
  job.layers = layout.num_layers;
  job.pages = pages;
  job.page_tokens = layout.page_tokens;
  job.heads = layout.num_kv_heads;
  job.head_dim = layout.head_dim;
  job.element = layout.dtype == radix::DType::kBFloat16  ? gpu::reference::Element::kBFloat16
                : layout.dtype == radix::DType::kFloat16 ? gpu::reference::Element::kFloat16
                                                         : gpu::reference::Element::kFloat32;
  job.layer_page_bytes = layout.BytesPerLayerPage();
  job.kv_block_bytes = layout.BytesPerKvBlock();
  job.row_bytes = uint64_t{layout.num_kv_heads} * layout.head_dim * radix::DTypeSize(layout.dtype);
  job.out = out;
  return job;
}

float Unit(std::mt19937_64& rng) {
  const int32_t n = static_cast<int32_t>(rng() >> 40) - (int32_t{1} << 23);
  return 0.25f * (static_cast<float>(n) * 0x1p-23f);
}

// The router and experts (header).
struct Experts {
  Experts(uint32_t width, uint32_t count, uint64_t seed) : w(width), e(count) {
    std::mt19937_64 rng(seed ^ 0x6d6f652d64656d6fULL);
    router.resize(size_t{e} * w);
    for (float& x : router) x = Unit(rng);
    weights.resize(size_t{e} * w * w);
    for (float& x : weights) x = Unit(rng);
  }

  // The job over `o` with these weights (host or device pointers as the caller gives).
  gpu::ExpertsJob Job(const float* o, const float* router_at, const float* weights_at,
                      uint32_t top_k, float* logits, uint32_t* chosen, float* out) const {
    return gpu::ExpertsJob{.o = o,
                           .router = router_at,
                           .weights = weights_at,
                           .width = w,
                           .experts = e,
                           .top_k = top_k,
                           .logits = logits,
                           .chosen = chosen,
                           .out = out};
  }

  // The layer on the CPU (gpu::RunExpertsOnHost: the kernels' arithmetic).
  std::vector<float> Run(const std::vector<float>& o, uint32_t top_k,
                         std::vector<uint32_t>* chosen) const {
    std::vector<float> logits(e);
    std::vector<float> out(w);
    chosen->assign(top_k, 0);
    gpu::RunExpertsOnHost(Job(o.data(), router.data(), weights.data(), top_k, logits.data(),
                              chosen->data(), out.data()));
    return out;
  }

  uint32_t w;
  uint32_t e;
  std::vector<float> router;
  std::vector<float> weights;
};

// The worker's paged cache in device memory: vLLM's layout with K and V apart, one
// engine block per page, the sequence's blocks in a shuffled order.
class PagedCache {
 public:
  static absl::StatusOr<PagedCache> Create(gpu::Device& device, const radix::KvLayout& layout,
                                           uint32_t pages, uint64_t seed) {
    PagedCache c(device, layout);
    const uint64_t row =
        uint64_t{layout.num_kv_heads} * layout.head_dim * radix::DTypeSize(layout.dtype);
    std::vector<void*> k, v;
    for (uint32_t l = 0; l < layout.num_layers; ++l) {
      for (int h = 0; h < 2; ++h) {
        STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer t,
                                device.Allocate(uint64_t{pages} * layout.page_tokens * row));
        (h == 0 ? k : v).push_back(t.data());
        c.tensors_.push_back(std::move(t));
      }
    }
    c.cache_ = gpu::VllmSeparateCache(k, v, pages, layout.page_tokens, row);
    std::vector<int32_t> table(pages);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937_64(seed));
    STRATA_RETURN_IF_ERROR(gpu::RowsFromBlockTable(table, layout.page_tokens, 0,
                                                   uint64_t{pages} * layout.page_tokens, &c.rows_));
    STRATA_ASSIGN_OR_RETURN(c.stream_, device.CreateStream());
    return c;
  }

  // Forgets everything (a fresh worker).
  absl::Status Clear() {
    for (gpu::DeviceBuffer& t : tensors_) {
      STRATA_RETURN_IF_ERROR(device_->MemsetAsync(t.data(), 0, t.size(), stream_));
    }
    return device_->Synchronize(stream_);
  }
  // Pages [first, first + count) of the sequence from / into a blob in device memory.
  absl::Status Scatter(const void* blob, uint32_t first, uint32_t count) {
    STRATA_RETURN_IF_ERROR(
        device_->ScatterPagedAsync(blob, Shape(count), cache_, Rows(first, count), stream_));
    return device_->Synchronize(stream_);
  }
  absl::Status Gather(void* blob, uint32_t first, uint32_t count) {
    STRATA_RETURN_IF_ERROR(
        device_->GatherPagedAsync(blob, Shape(count), cache_, Rows(first, count), stream_));
    return device_->Synchronize(stream_);
  }
  gpu::Stream& stream() { return stream_; }

 private:
  PagedCache(gpu::Device& device, const radix::KvLayout& layout)
      : device_(&device), layout_(layout) {}
  gpu::BlobShape Shape(uint32_t count) const {
    return gpu::BlobShape{
        layout_.num_layers, count, layout_.page_tokens,
        uint64_t{layout_.num_kv_heads} * layout_.head_dim * radix::DTypeSize(layout_.dtype), true};
  }
  absl::Span<const uint64_t> Rows(uint32_t first, uint32_t count) const {
    return absl::MakeConstSpan(rows_).subspan(uint64_t{first} * layout_.page_tokens,
                                              uint64_t{count} * layout_.page_tokens);
  }

  gpu::Device* device_;
  radix::KvLayout layout_;
  std::vector<gpu::DeviceBuffer> tensors_;
  gpu::PagedCache cache_;
  std::vector<uint64_t> rows_;
  gpu::Stream stream_;
};

}  // namespace

absl::StatusOr<MoeDemoResult> RunMoeDemo(Client& client, const MoeDemoOptions& o) {
  const radix::KvLayout& layout = o.layout;
  STRATA_RETURN_IF_ERROR(layout.Validate());
  if (layout.format != radix::KvFormat::kKeyValue ||
      (layout.dtype != radix::DType::kBFloat16 && layout.dtype != radix::DType::kFloat16 &&
       layout.dtype != radix::DType::kFloat32)) {
    return absl::InvalidArgumentError("moe demo: a key_value layout of bf16, fp16 or f32");
  }
  if (o.device == nullptr || o.prompt_pages == 0 || o.top_k == 0 || o.top_k > o.experts) {
    return absl::InvalidArgumentError(
        "moe demo: a device, prompt_pages >= 1 and 1 <= top_k <= experts");
  }
  gpu::Device& device = *o.device;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<worker::ReferenceModel> model,
                          worker::ReferenceModel::Create(layout, o.seed));
  // The worker's model runs on its device (CUDA kernels on a GPU); the CPU model only checks.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<worker::DeviceReferenceModel> on_device,
                          worker::DeviceReferenceModel::Create(*model, o.device));
  STRATA_ASSIGN_OR_RETURN(const radix::Namespace ns,
                          radix::Namespace::Create(o.tenant, o.model, layout));
  const uint32_t pt = layout.page_tokens;
  const uint32_t total = o.prompt_pages + o.midfill_pages + o.decode_steps;
  std::mt19937_64 rng(o.seed);
  std::vector<TokenId> tokens(size_t{total} * pt);
  for (TokenId& t : tokens) t = static_cast<TokenId>(rng() % 50000);
  auto span = [&](uint32_t first, uint32_t count) {
    return absl::MakeConstSpan(tokens).subspan(size_t{first} * pt, size_t{count} * pt);
  };
  STRATA_ASSIGN_OR_RETURN(PagedCache cache, PagedCache::Create(device, layout, total, o.seed));
  auto to_host = [&](const gpu::DeviceBuffer& b) -> absl::StatusOr<std::vector<std::byte>> {
    std::vector<std::byte> out(b.size());
    STRATA_RETURN_IF_ERROR(device.CopyToHostAsync(out.data(), b.data(), b.size(), cache.stream()));
    STRATA_RETURN_IF_ERROR(device.Synchronize(cache.stream()));
    return out;
  };
  auto descriptor = [&](const gpu::DeviceBuffer& b) {
    return MemoryDescriptor::CudaDevice(b.data(), b.size(), o.device_ordinal);
  };
  // Pages [first, first + count) from the cache written to strata, continuing `parent`.
  auto write_from_cache = [&](uint32_t first, uint32_t count,
                              std::optional<Parent> parent) -> absl::StatusOr<BlobKey> {
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer blob, device.Allocate(PagesBytes(layout, count)));
    STRATA_RETURN_IF_ERROR(cache.Gather(blob.data(), first, count));
    STRATA_ASSIGN_OR_RETURN(const WriteResult w,
                            client.Write(ns, parent, span(first, count), descriptor(blob)));
    return w.key;
  };
  // The first `pages` pages of the sequence from strata into the (emptied) cache.
  auto load = [&](uint32_t pages) -> absl::Status {
    STRATA_RETURN_IF_ERROR(cache.Clear());
    STRATA_ASSIGN_OR_RETURN(const MatchResult match, client.Match(ns, span(0, pages)));
    if (match.ReadablePages() < pages) {
      return absl::DataLossError(absl::StrCat("moe demo: strata holds ", match.ReadablePages(),
                                              " of the context's ", pages, " pages"));
    }
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer landing, device.Allocate(PagesBytes(layout, pages)));
    STRATA_RETURN_IF_ERROR(client.ReadLayers(ns, match.segments, pages, descriptor(landing),
                                             [](uint32_t) { return absl::OkStatus(); }));
    return cache.Scatter(landing.data(), 0, pages);
  };

  MoeDemoResult result;
  // Prefill: the prompt's KV computed on the device, into the cache, written from it.
  Clock::time_point t0 = Clock::now();
  {
    const uint64_t bytes = PagesBytes(layout, o.prompt_pages);
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer computed, device.Allocate(bytes));
    STRATA_RETURN_IF_ERROR(
        on_device->ComputeBlob(span(0, o.prompt_pages), 0, o.prompt_pages, computed.data(), bytes));
    STRATA_RETURN_IF_ERROR(cache.Scatter(computed.data(), 0, o.prompt_pages));
  }
  STRATA_ASSIGN_OR_RETURN(BlobKey last, write_from_cache(0, o.prompt_pages, std::nullopt));
  result.phases.push_back({"prefill", 0, o.prompt_pages, Ms(t0)});
  // What the CPU model computes for the prompt: the device's KV, through strata, must be it.
  STRATA_ASSIGN_OR_RETURN(const std::vector<std::byte> prompt_kv,
                          model->ComputeBlobBytes(span(0, o.prompt_pages), 0, o.prompt_pages));

  // Midfill, on a fresh worker: the prompt from strata, only the new pages computed.
  t0 = Clock::now();
  STRATA_RETURN_IF_ERROR(load(o.prompt_pages));
  {
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer check,
                            device.Allocate(PagesBytes(layout, o.prompt_pages)));
    STRATA_RETURN_IF_ERROR(cache.Gather(check.data(), 0, o.prompt_pages));
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::byte> loaded, to_host(check));
    if (loaded != prompt_kv) {
      return absl::DataLossError("moe demo: the prompt's KV read back differs from the model's");
    }
  }
  worker::ModelState state = model->InitialState();
  STRATA_RETURN_IF_ERROR(on_device->Advance(&state, span(0, o.prompt_pages)));
  uint32_t pages = o.prompt_pages;
  auto append = [&](uint32_t count) -> absl::Status {
    const uint64_t bytes = PagesBytes(layout, count);
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer computed, device.Allocate(bytes));
    STRATA_RETURN_IF_ERROR(
        on_device->ComputeNextPages(&state, span(pages, count), computed.data(), bytes));
    STRATA_RETURN_IF_ERROR(cache.Scatter(computed.data(), pages, count));
    STRATA_ASSIGN_OR_RETURN(last, write_from_cache(pages, count, Parent{last, pages}));
    pages += count;
    return absl::OkStatus();
  };
  if (o.midfill_pages > 0) STRATA_RETURN_IF_ERROR(append(o.midfill_pages));
  result.phases.push_back({"midfill", o.prompt_pages, o.midfill_pages, Ms(t0)});

  // Decode: each step reads the whole context, appends a page, attends; then the experts.
  const uint32_t width = layout.num_kv_heads * layout.head_dim;
  const Experts experts(width, o.experts, o.seed);
  // The experts' weights in device memory, and the layer's scratch there.
  auto upload = [&](const std::vector<float>& v) -> absl::StatusOr<gpu::DeviceBuffer> {
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, device.Allocate(v.size() * sizeof(float)));
    STRATA_RETURN_IF_ERROR(
        device.CopyToDeviceAsync(b.data(), v.data(), v.size() * sizeof(float), cache.stream()));
    STRATA_RETURN_IF_ERROR(device.Synchronize(cache.stream()));
    return b;
  };
  STRATA_ASSIGN_OR_RETURN(const gpu::DeviceBuffer router, upload(experts.router));
  STRATA_ASSIGN_OR_RETURN(const gpu::DeviceBuffer expert_weights, upload(experts.weights));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer logits, device.Allocate(o.experts * sizeof(float)));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer chosen, device.Allocate(o.top_k * sizeof(uint32_t)));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer mixed, device.Allocate(width * sizeof(float)));
  for (uint32_t step = 0; step < o.decode_steps; ++step) {
    t0 = Clock::now();
    const uint32_t context = pages;
    STRATA_RETURN_IF_ERROR(load(context));
    STRATA_RETURN_IF_ERROR(append(1));
    // Attention on the device, over the context gathered from the cache in device memory.
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer all, device.Allocate(PagesBytes(layout, pages)));
    STRATA_RETURN_IF_ERROR(cache.Gather(all.data(), 0, pages));
    STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer out, device.Allocate(width * sizeof(float)));
    STRATA_RETURN_IF_ERROR(device.AttentionAsync(
        AttentionOver(layout, all.data(), pages, static_cast<float*>(out.data())), cache.stream()));
    STRATA_RETURN_IF_ERROR(device.Synchronize(cache.stream()));
    result.phases.push_back({"decode attention", context, 1, Ms(t0)});
    // The MoE layer on the device over the attention's output, where it already is.
    t0 = Clock::now();
    STRATA_RETURN_IF_ERROR(device.ExpertsAsync(
        experts.Job(static_cast<const float*>(out.data()), static_cast<const float*>(router.data()),
                    static_cast<const float*>(expert_weights.data()), o.top_k,
                    static_cast<float*>(logits.data()), static_cast<uint32_t*>(chosen.data()),
                    static_cast<float*>(mixed.data())),
        cache.stream()));
    result.output.resize(width);
    result.experts_chosen.resize(o.top_k);
    STRATA_RETURN_IF_ERROR(device.CopyToHostAsync(result.output.data(), mixed.data(),
                                                  width * sizeof(float), cache.stream()));
    STRATA_RETURN_IF_ERROR(device.CopyToHostAsync(result.experts_chosen.data(), chosen.data(),
                                                  o.top_k * sizeof(uint32_t), cache.stream()));
    STRATA_RETURN_IF_ERROR(device.Synchronize(cache.stream()));
    result.phases.push_back({"decode experts", 0, 0, Ms(t0)});
  }

  // The same outputs from KV recomputed from the tokens alone, bit for bit.
  if (o.decode_steps > 0) {
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::byte> recomputed,
                            model->ComputeBlobBytes(span(0, pages), 0, pages));
    std::vector<uint32_t> chosen;
    std::vector<float> recomputed_attention(width);
    gpu::RunAttentionOnHost(
        AttentionOver(layout, recomputed.data(), pages, recomputed_attention.data()));
    const std::vector<float> want = experts.Run(recomputed_attention, o.top_k, &chosen);
    if (chosen != result.experts_chosen ||
        std::memcmp(want.data(), result.output.data(), want.size() * sizeof(float)) != 0) {
      return absl::DataLossError(
          "moe demo: the decode output from strata's KV differs from the recomputed one");
    }
  }
  return result;
}

}  // namespace strata::tools
