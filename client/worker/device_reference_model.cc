// DeviceReferenceModel (device_reference_model.h). Compiled with -ffp-contract=off like
// the model: h_0 is computed here on the host exactly as ReferenceModel::Run does.
#include "strata/worker/device_reference_model.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "internal/seeded_values.h"
#include "strata/base/status_macros.h"
#include "strata/gpu/reference_kv.h"

namespace strata::worker {
namespace {

constexpr uint32_t kModelDim = ReferenceModel::kModelDim;
static_assert(kModelDim == gpu::reference::kModelDim);
// Tokens one job runs: bounds the scratch (tokens x (layer_columns + kModelDim) floats).
constexpr uint64_t kTokensPerJob = 4096;

gpu::reference::Element ElementOf(radix::DType dtype) {
  switch (dtype) {
    case radix::DType::kFloat16:
      return gpu::reference::Element::kFloat16;
    case radix::DType::kBFloat16:
      return gpu::reference::Element::kBFloat16;
    case radix::DType::kFloat32:
      return gpu::reference::Element::kFloat32;
    case radix::DType::kFloat8E4M3:
      return gpu::reference::Element::kFloat8E4M3;
    case radix::DType::kFloat8E5M2:
      return gpu::reference::Element::kFloat8E5M2;
    case radix::DType::kInt8:
      return gpu::reference::Element::kInt8;
    case radix::DType::kUInt8:
      return gpu::reference::Element::kUInt8;
  }
  LOG(FATAL) << "not a dtype: " << static_cast<int>(dtype);
  return gpu::reference::Element::kFloat32;
}

absl::Status CheckOut(uint64_t pages, const radix::KvLayout& layout, const void* out,
                      uint64_t out_bytes) {
  const uint64_t want = pages * layout.BytesPerPage();
  if (out == nullptr || out_bytes != want) {
    return absl::InvalidArgumentError(absl::StrCat("output buffer of ", out_bytes,
                                                   " bytes for a blob of ", pages,
                                                   " pages, which takes ", want, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

DeviceReferenceModel::DeviceReferenceModel(const ReferenceModel& model,
                                           std::shared_ptr<gpu::Device> device,
                                           gpu::DeviceBuffer weights, gpu::Stream stream)
    : model_(model),
      device_(std::move(device)),
      weights_(std::move(weights)),
      stream_(std::move(stream)) {}

absl::StatusOr<std::unique_ptr<DeviceReferenceModel>> DeviceReferenceModel::Create(
    const ReferenceModel& model, std::shared_ptr<gpu::Device> device) {
  if (device == nullptr) return absl::InvalidArgumentError("no device");
  const uint64_t bytes = model.weights_.size() * sizeof(float);
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer weights, device->Allocate(bytes));
  STRATA_ASSIGN_OR_RETURN(gpu::Stream stream, device->CreateStream());
  STRATA_RETURN_IF_ERROR(
      device->CopyToDeviceAsync(weights.data(), model.weights_.data(), bytes, stream));
  STRATA_RETURN_IF_ERROR(device->Synchronize(stream));
  return std::unique_ptr<DeviceReferenceModel>(
      new DeviceReferenceModel(model, std::move(device), std::move(weights), std::move(stream)));
}

absl::Status DeviceReferenceModel::Run(ModelState* state, absl::Span<const radix::TokenId> tokens,
                                       uint8_t* out, uint64_t blob_pages) {
  const ReferenceModel& m = model_;
  const radix::KvLayout& layout = m.layout_;
  const uint64_t chunk = std::min<uint64_t>(tokens.size(), kTokensPerJob);
  const uint64_t mean_bytes = uint64_t{layout.num_layers} * kModelDim * sizeof(float);
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer hidden,
                          device_->Allocate(chunk * kModelDim * sizeof(float)));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer projected,
                          device_->Allocate(chunk * m.layer_columns_ * sizeof(float)));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer running, device_->Allocate(mean_bytes));
  std::vector<float> means = state->running_mean_;
  STRATA_RETURN_IF_ERROR(
      device_->CopyToDeviceAsync(running.data(), means.data(), mean_bytes, stream_));

  gpu::ReferenceKvJob job;
  job.weights = static_cast<const float*>(weights_.data());
  job.layers = layout.num_layers;
  job.layer_columns = m.layer_columns_;
  job.kv_columns = m.kv_columns_;
  job.padded_width = m.padded_width_;
  job.kv_width = m.kv_width_;
  job.key_value = layout.format == radix::KvFormat::kKeyValue;
  job.element = ElementOf(layout.dtype);
  job.hidden = static_cast<float*>(hidden.data());
  job.projected = static_cast<float*>(projected.data());
  job.running_mean = static_cast<float*>(running.data());
  job.out = out;
  job.page_tokens = layout.page_tokens;
  job.blob_first_page = state->tokens_ / layout.page_tokens;
  job.blob_pages = blob_pages;
  job.layer_page_bytes = layout.BytesPerLayerPage();
  job.kv_block_bytes = layout.BytesPerKvBlock();
  job.row_bytes = uint64_t{m.kv_width_} * radix::DTypeSize(layout.dtype);

  std::vector<float> h0(chunk * kModelDim);
  for (uint64_t begin = 0; begin < tokens.size(); begin += chunk) {
    const uint64_t count = std::min<uint64_t>(chunk, tokens.size() - begin);
    const uint64_t first_position = state->tokens_ + begin;
    for (uint64_t t = 0; t < count; ++t) {
      const uint64_t embedding_key =
          internal::RowKey(m.seed_, internal::kEmbeddingStream, tokens[begin + t]);
      const uint64_t position_key =
          internal::RowKey(m.seed_, internal::kPositionStream, first_position + t);
      float* h = h0.data() + t * kModelDim;
      for (uint32_t d = 0; d < kModelDim; ++d) {
        h[d] = internal::UnitFloat(internal::ElementBits(embedding_key, d)) +
               0.5f * internal::UnitFloat(internal::ElementBits(position_key, d));
      }
    }
    // The copy of h_0 must have left the host buffer before it is refilled.
    STRATA_RETURN_IF_ERROR(device_->CopyToDeviceAsync(hidden.data(), h0.data(),
                                                      count * kModelDim * sizeof(float), stream_));
    job.tokens = count;
    job.first_position = first_position;
    STRATA_RETURN_IF_ERROR(device_->ReferenceKvAsync(job, stream_));
    STRATA_RETURN_IF_ERROR(device_->Synchronize(stream_));
  }
  STRATA_RETURN_IF_ERROR(
      device_->CopyToHostAsync(means.data(), running.data(), mean_bytes, stream_));
  STRATA_RETURN_IF_ERROR(device_->Synchronize(stream_));
  state->running_mean_ = std::move(means);
  state->tokens_ += tokens.size();
  return absl::OkStatus();
}

absl::Status DeviceReferenceModel::ComputeNextPages(ModelState* state,
                                                    absl::Span<const radix::TokenId> tokens,
                                                    void* out, uint64_t out_bytes) {
  CHECK(state != nullptr);
  STRATA_RETURN_IF_ERROR(model_.CheckState(*state));
  const radix::KvLayout& layout = model_.layout();
  if (tokens.empty()) {
    return absl::InvalidArgumentError("no tokens to compute: a blob has at least one page");
  }
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(tokens.size(), layout.page_tokens));
  const uint64_t pages = tokens.size() / layout.page_tokens;
  STRATA_RETURN_IF_ERROR(CheckOut(pages, layout, out, out_bytes));
  absl::MutexLock lock(&mu_);
  ModelState next = *state;
  STRATA_RETURN_IF_ERROR(Run(&next, tokens, static_cast<uint8_t*>(out), pages));
  *state = std::move(next);
  return absl::OkStatus();
}

absl::Status DeviceReferenceModel::Advance(ModelState* state,
                                           absl::Span<const radix::TokenId> tokens) {
  CHECK(state != nullptr);
  STRATA_RETURN_IF_ERROR(model_.CheckState(*state));
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(tokens.size(), model_.layout().page_tokens));
  if (tokens.empty()) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  ModelState next = *state;
  STRATA_RETURN_IF_ERROR(Run(&next, tokens, nullptr, 0));
  *state = std::move(next);
  return absl::OkStatus();
}

absl::Status DeviceReferenceModel::ComputeBlob(absl::Span<const radix::TokenId> prefix_and_span,
                                               uint32_t first_page, uint32_t num_pages, void* out,
                                               uint64_t out_bytes) {
  STRATA_RETURN_IF_ERROR(model_.CheckBlobRequest(prefix_and_span, first_page, num_pages));
  const radix::KvLayout& layout = model_.layout();
  STRATA_RETURN_IF_ERROR(CheckOut(num_pages, layout, out, out_bytes));
  const size_t prefix_tokens = radix::PageTokenCount(first_page, layout.page_tokens);
  const size_t span_tokens = radix::PageTokenCount(num_pages, layout.page_tokens);
  ModelState state = model_.InitialState();
  absl::MutexLock lock(&mu_);
  if (prefix_tokens > 0) {
    STRATA_RETURN_IF_ERROR(Run(&state, prefix_and_span.first(prefix_tokens), nullptr, 0));
  }
  return Run(&state, prefix_and_span.subspan(prefix_tokens, span_tokens),
             static_cast<uint8_t*>(out), num_pages);
}

}  // namespace strata::worker
