// The MoE reference worker (issue 14, item 5): one run through the four phases the store
// serves, with the KV read from strata landing in a paged cache in device memory through the
// paged-KV kernels (gpu/paged_kv.h) and new KV written back from it.
//
//   prefill          the prompt's KV computed on the device (worker::DeviceReferenceModel:
//                    CUDA kernels on a GPU), scattered into the paged cache, gathered into a
//                    blob and written from device memory
//   midfill          a fresh worker (empty cache) matches prompt + new input, reads the
//                    cached prompt layer by layer into device memory, scatters it into its
//                    cache, computes only the new pages and writes them continuing the prompt
//   decode attention each step reads the whole context into the (emptied) cache, appends
//                    the step's page, and runs attention over the cache for the last token
//   decode experts   a router picks top_k of `experts` experts for that attention output and
//                    mixes their outputs
// Each phase's device memory is the Device the Client's open_device gives (the host device
// in CI; a GPU's on a GPU machine). The model's KV is computed on that device (midfill's
// and decode's new pages too, from a ModelState advanced on it), and so is the attention
// (Device::AttentionAsync over the context gathered from the cache in device memory: a CUDA
// kernel on a GPU), and so is the MoE layer over the attention's output where it already is
// (Device::ExpertsAsync: router, top-k, gated experts; kernels on a GPU).
//
// The demo checks itself: the prompt read back from the cache (computed on the device,
// written through strata) is byte-identical to the CPU model's KV, and the last decode's
// expert output computed from KV that came through strata equals, bit for bit, the one
// computed from KV the CPU model recomputed from the tokens alone, with the attention run on
// the CPU (gpu::RunAttentionOnHost, gpu::RunExpertsOnHost: the kernels' arithmetic).
//
// Attention and experts (only IEEE binary32 +, -, *, / and |x|, in the order written, so a
// CUDA port can match bit for bit): with W = num_kv_heads * head_dim, the query of layer l
// is the K row of the last token; for each head a and cached token j (in order),
// score = sum_e q[a,e] * k_j[a,e], w_j = 1 / (1 + |score|), and
// o_l[a,e] = (sum_j w_j * v_j[a,e]) / (sum_j w_j); o = sum over layers (in order) of o_l.
// Router logits r_x = sum_c R[x][c] * o[c]; the top_k largest (ties: lower index); gates
// g_x = r_x / sum_selected |r|; expert x: y_x[c] = 2t / (2 + |t|), t = sum_c' X_x[c][c'] *
// o[c']; out = sum over selected x (in index order) of g_x * y_x. R and X are
// 0.25 * U with U = (int(bits >> 40) - 2^23) * 2^-23 drawn from mt19937_64(seed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/radix/kv_layout.h"

namespace strata::tools {

struct MoeDemoOptions {
  // The shard's KV layout: kKeyValue, dtype bf16, fp16 or f32.
  radix::KvLayout layout;
  // The namespace: a run writes from page 0 and continues its own blobs, so it wants a
  // namespace no earlier run with other page counts wrote into (strata-moe-demo names the
  // model after the time).
  std::string tenant = "moe-demo";
  std::string model = "org/moe-demo";
  uint32_t prompt_pages = 8;
  uint32_t midfill_pages = 2;
  uint32_t decode_steps = 2;  // one page each
  uint32_t experts = 8;
  uint32_t top_k = 2;
  uint64_t seed = 42;
  // The device the Client's ClientOptions::open_device gives for ordinal `device_ordinal`.
  std::shared_ptr<gpu::Device> device;
  int device_ordinal = 0;
};

struct MoePhase {
  std::string name;
  uint32_t pages_read = 0;
  uint32_t pages_written = 0;
  double milliseconds = 0;
};

struct MoeDemoResult {
  std::vector<MoePhase> phases;
  std::vector<float> output;  // the last decode step's expert output (W floats)
  std::vector<uint32_t> experts_chosen;
};

// Errors: INVALID_ARGUMENT options (MLA, another dtype, top_k > experts, zero pages); the
// Client's and the Device's errors; DATA_LOSS when a check above fails (naming which).
absl::StatusOr<MoeDemoResult> RunMoeDemo(Client& client, const MoeDemoOptions& options);

}  // namespace strata::tools
