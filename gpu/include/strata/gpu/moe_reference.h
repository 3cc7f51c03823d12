// The MoE reference worker's attention (client/tools/moe_demo.h has its specification) as a
// device operation: Device::AttentionAsync runs an AttentionJob on the device — a CUDA kernel
// (one thread per output column) on a GPU, RunAttentionOnHost on the host device — with the
// arithmetic of reference_math.h, so its output is the same bits wherever it runs.
//
// The job: the context as a blob (radix::BlobLayout, as BlobShape in paged_kv.h: layer l of
// page p at (l * pages + p) * layer_page_bytes, K rows then V rows kv_block_bytes after, a row
// row_bytes), its elements encoded as `element`. The query of layer l is the K row of the
// context's last token; for head a and token j in order, score = sum over e in order of
// q[a,e] * k_j[a,e], w_j = 1 / (1 + |score|), and out[a*head_dim + e] = sum over layers in
// order of (sum_j w_j * v_j[a,e]) / (sum_j w_j).
//
// Errors (CheckAttentionJob): INVALID_ARGUMENT a null blob or out, zero layers, pages, tokens,
// heads or head_dim, an element code that is not one, rows that do not fit their page.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

#include "strata/gpu/reference_math.h"

namespace strata::gpu {

struct AttentionJob {
  const uint8_t* blob = nullptr;  // device memory
  uint32_t layers = 0;
  uint32_t pages = 0;
  uint32_t page_tokens = 0;
  uint32_t heads = 0;
  uint32_t head_dim = 0;
  reference::Element element = reference::Element::kBFloat16;
  uint64_t layer_page_bytes = 0;
  uint64_t kv_block_bytes = 0;
  uint64_t row_bytes = 0;
  float* out = nullptr;  // device memory: heads * head_dim floats

  uint64_t BlobBytes() const { return uint64_t{layers} * pages * layer_page_bytes; }
};

// The MoE layer (client/tools/moe_demo.h: router, top_k of `experts`, gated experts) over
// the attention output `o`, every pointer device memory: logits[x] = sum_c R[x][c] * o[c];
// the top_k largest logits (ties: the lower index), in index order, into chosen[0, top_k);
// out[c] = sum over chosen x in index order of g_x * y_x[c], g_x = logit_x / sum over
// chosen |logit| (0 when that sum is 0), y_x[c] = 2t / (2 + |t|), t = sum_d X_x[c][d] * o[d].
struct ExpertsJob {
  const float* o = nullptr;        // width
  const float* router = nullptr;   // experts x width
  const float* weights = nullptr;  // experts x width x width
  uint32_t width = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  float* logits = nullptr;     // experts (written)
  uint32_t* chosen = nullptr;  // top_k (written)
  float* out = nullptr;        // width (written)
};

namespace reference {

// Element (layer l, token t, K (half 0) or V (half 1), column c) of the job's blob.
STRATA_HOST_DEVICE inline float BlobElement(const AttentionJob& j, uint32_t l, uint64_t t,
                                            uint32_t half, uint32_t c) {
  const uint8_t* row = j.blob + (uint64_t{l} * j.pages + t / j.page_tokens) * j.layer_page_bytes +
                       half * j.kv_block_bytes + (t % j.page_tokens) * j.row_bytes;
  return DecodeElement(j.element, row + uint64_t{c} * ElementBytes(j.element));
}

// out[c] of the job (c = a * head_dim + e).
STRATA_HOST_DEVICE inline float AttentionOutput(const AttentionJob& j, uint32_t c) {
  const uint32_t c0 = c / j.head_dim * j.head_dim;
  const uint64_t tokens = uint64_t{j.pages} * j.page_tokens;
  float o = 0.0f;
  for (uint32_t l = 0; l < j.layers; ++l) {
    float acc = 0.0f;
    float weights = 0.0f;
    for (uint64_t t = 0; t < tokens; ++t) {
      float score = 0.0f;
      for (uint32_t e = 0; e < j.head_dim; ++e) {
        score = Add(score,
                    Mul(BlobElement(j, l, tokens - 1, 0, c0 + e), BlobElement(j, l, t, 0, c0 + e)));
      }
      const float w = Div(1.0f, Add(1.0f, Abs(score)));
      weights = Add(weights, w);
      acc = Add(acc, Mul(w, BlobElement(j, l, t, 1, c)));
    }
    o = Add(o, Div(acc, weights));
  }
  return o;
}

// logits[x] of the experts job.
STRATA_HOST_DEVICE inline float RouterLogit(const ExpertsJob& j, uint32_t x) {
  float logit = 0.0f;
  const float* row = j.router + uint64_t{x} * j.width;
  for (uint32_t c = 0; c < j.width; ++c) logit = Add(logit, Mul(row[c], j.o[c]));
  return logit;
}

// chosen[0, top_k) from logits[0, experts): the largest first-come (a stable descending
// order's first top_k), then in index order.
STRATA_HOST_DEVICE inline void ChooseExperts(const float* logits, uint32_t experts, uint32_t top_k,
                                             uint32_t* chosen) {
  for (uint32_t k = 0; k < top_k; ++k) {
    uint32_t best = experts;
    for (uint32_t x = 0; x < experts; ++x) {
      bool taken = false;
      for (uint32_t i = 0; i < k; ++i) taken = taken || chosen[i] == x;
      if (taken) continue;
      if (best == experts || logits[x] > logits[best]) best = x;
    }
    chosen[k] = best;
  }
  for (uint32_t k = 1; k < top_k; ++k) {  // insertion sort: index order
    const uint32_t v = chosen[k];
    uint32_t i = k;
    for (; i > 0 && chosen[i - 1] > v; --i) chosen[i] = chosen[i - 1];
    chosen[i] = v;
  }
}

// out[c] of the experts job, its logits and chosen filled in.
STRATA_HOST_DEVICE inline float ExpertOutput(const ExpertsJob& j, uint32_t c) {
  float norm = 0.0f;
  for (uint32_t k = 0; k < j.top_k; ++k) norm = Add(norm, Abs(j.logits[j.chosen[k]]));
  float out = 0.0f;
  for (uint32_t k = 0; k < j.top_k; ++k) {
    const uint32_t x = j.chosen[k];
    const float gate = norm > 0.0f ? Div(j.logits[x], norm) : 0.0f;
    const float* row = j.weights + (uint64_t{x} * j.width + c) * j.width;
    float t = 0.0f;
    for (uint32_t d = 0; d < j.width; ++d) t = Add(t, Mul(row[d], j.o[d]));
    const float y = Div(Mul(2.0f, t), Add(2.0f, Abs(t)));
    out = Add(out, Mul(gate, y));
  }
  return out;
}

}  // namespace reference

// OK when the job is well-formed (the errors above); does not look at memory.
absl::Status CheckAttentionJob(const AttentionJob& job);
// INVALID_ARGUMENT a null pointer, width or experts 0, top_k not in [1, experts].
absl::Status CheckExpertsJob(const ExpertsJob& job);
// Runs the experts job on the CPU, its pointers host memory. REQUIRES: CheckExpertsJob OK.
void RunExpertsOnHost(const ExpertsJob& job);

// Runs the job on the CPU, its pointers host memory. REQUIRES: CheckAttentionJob OK.
void RunAttentionOnHost(const AttentionJob& job);

}  // namespace strata::gpu
