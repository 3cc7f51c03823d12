// The reference model's job (reference_kv.h): its checks and the CPU run (the host device's
// ReferenceKvAsync, and what the CUDA kernels are compared against). This file is compiled
// with -ffp-contract=off (gpu/CMakeLists.txt): no a*b+c fused.
#include "strata/gpu/reference_kv.h"

#include "absl/strings/str_cat.h"

#include "strata/gpu/moe_reference.h"

namespace strata::gpu {

using reference::kModelDim;

absl::Status CheckReferenceKvJob(const ReferenceKvJob& job) {
  auto bad = [](auto... parts) {
    return absl::InvalidArgumentError(absl::StrCat("reference KV job: ", parts...));
  };
  if (job.weights == nullptr || job.hidden == nullptr || job.projected == nullptr ||
      job.running_mean == nullptr) {
    return bad("weights, hidden, projected and running_mean must be set");
  }
  if (job.tokens == 0 || job.layers == 0) return bad("no tokens or no layers");
  if (job.kv_width == 0 || job.kv_width > job.padded_width ||
      job.kv_columns != job.padded_width * (job.key_value ? 2u : 1u) ||
      uint64_t{job.kv_columns} + kModelDim != job.layer_columns) {
    return bad("columns do not fit: kv_width ", job.kv_width, ", padded ", job.padded_width,
               ", kv_columns ", job.kv_columns, ", layer_columns ", job.layer_columns);
  }
  const uint32_t element = reference::ElementBytes(job.element);
  if (element == 0) return bad("element code ", static_cast<int>(job.element), " is not one");
  if (job.out == nullptr) return absl::OkStatus();
  if (job.page_tokens == 0 || job.blob_pages == 0) return bad("no pages");
  if (job.row_bytes < uint64_t{job.kv_width} * element ||
      uint64_t{job.page_tokens} * job.row_bytes > job.kv_block_bytes ||
      job.kv_block_bytes * (job.key_value ? 2 : 1) > job.layer_page_bytes) {
    return bad("rows do not fit their page: row ", job.row_bytes, " bytes, block ",
               job.kv_block_bytes, ", layer page ", job.layer_page_bytes);
  }
  const uint64_t first_page = job.first_position / job.page_tokens;
  const uint64_t last_page = (job.first_position + job.tokens - 1) / job.page_tokens;
  if (first_page < job.blob_first_page || last_page - job.blob_first_page >= job.blob_pages) {
    return bad("tokens at positions [", job.first_position, ", +", job.tokens,
               ") are outside the blob's pages [", job.blob_first_page, ", +", job.blob_pages, ")");
  }
  return absl::OkStatus();
}

void RunReferenceKvOnHost(const ReferenceKvJob& job) {
  const uint64_t columns = job.layer_columns;
  const uint32_t first_column = job.out != nullptr ? 0 : job.kv_columns;
  const uint32_t element = reference::ElementBytes(job.element);
  for (uint32_t l = 0; l < job.layers; ++l) {
    const float* w = job.weights + uint64_t{l} * kModelDim * columns;
    for (uint64_t t = 0; t < job.tokens; ++t) {
      const float* h = job.hidden + t * kModelDim;
      float* y = job.projected + t * columns;
      for (uint32_t j = first_column; j < columns; ++j) y[j] = reference::Dot(w + j, columns, h);
      if (job.out == nullptr) continue;
      const uint64_t position = job.first_position + t;
      const uint64_t page = position / job.page_tokens - job.blob_first_page;
      uint8_t* row = job.out + (uint64_t{l} * job.blob_pages + page) * job.layer_page_bytes +
                     (position % job.page_tokens) * job.row_bytes;
      for (uint32_t j = 0; j < job.kv_width; ++j) {
        reference::EncodeElement(job.element, y[j], row + uint64_t{j} * element);
        if (job.key_value) {
          reference::EncodeElement(job.element, y[job.padded_width + j],
                                   row + job.kv_block_bytes + uint64_t{j} * element);
        }
      }
    }
    float* s = job.running_mean + uint64_t{l} * kModelDim;
    for (uint64_t t = 0; t < job.tokens; ++t) {
      const float* mix = job.projected + t * columns + job.kv_columns;
      float* h = job.hidden + t * kModelDim;
      for (uint32_t c = 0; c < kModelDim; ++c) reference::MixStep(mix[c], &s[c], &h[c]);
    }
  }
}

absl::Status CheckAttentionJob(const AttentionJob& job) {
  if (job.blob == nullptr || job.out == nullptr) {
    return absl::InvalidArgumentError("attention job: blob and out must be set");
  }
  if (job.layers == 0 || job.pages == 0 || job.page_tokens == 0 || job.heads == 0 ||
      job.head_dim == 0) {
    return absl::InvalidArgumentError("attention job: no layers, pages, tokens, heads or dims");
  }
  const uint32_t element = reference::ElementBytes(job.element);
  if (element == 0) return absl::InvalidArgumentError("attention job: not an element code");
  if (job.row_bytes < uint64_t{job.heads} * job.head_dim * element ||
      uint64_t{job.page_tokens} * job.row_bytes > job.kv_block_bytes ||
      2 * job.kv_block_bytes > job.layer_page_bytes) {
    return absl::InvalidArgumentError("attention job: rows do not fit their page");
  }
  return absl::OkStatus();
}

absl::Status CheckExpertsJob(const ExpertsJob& job) {
  if (job.o == nullptr || job.router == nullptr || job.weights == nullptr ||
      job.logits == nullptr || job.chosen == nullptr || job.out == nullptr) {
    return absl::InvalidArgumentError("experts job: every pointer must be set");
  }
  if (job.width == 0 || job.experts == 0 || job.top_k == 0 || job.top_k > job.experts) {
    return absl::InvalidArgumentError(absl::StrCat("experts job: width ", job.width, ", ",
                                                   job.experts, " experts, top_k ", job.top_k));
  }
  return absl::OkStatus();
}

void RunExpertsOnHost(const ExpertsJob& job) {
  for (uint32_t x = 0; x < job.experts; ++x) job.logits[x] = reference::RouterLogit(job, x);
  reference::ChooseExperts(job.logits, job.experts, job.top_k, job.chosen);
  for (uint32_t c = 0; c < job.width; ++c) job.out[c] = reference::ExpertOutput(job, c);
}

void RunAttentionOnHost(const AttentionJob& job) {
  const uint32_t width = job.heads * job.head_dim;
  for (uint32_t c = 0; c < width; ++c) job.out[c] = reference::AttentionOutput(job, c);
}

}  // namespace strata::gpu
