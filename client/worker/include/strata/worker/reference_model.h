// ReferenceModel: a deterministic tiny causal transformer that computes real
// KV bytes for tokens in any radix::KvLayout, so tests and demos can check that
// a blob read back from the store, or rebuilt from its tokens, is
// byte-identical to what the model computes.
//
// Properties the store relies on:
//   - Deterministic: the bytes are a pure function of (layout, seed, tokens),
//     identical on every machine and compiler (see "Reproducibility").
//   - Causal: the KV of token i at any layer depends on tokens [0, i] only, so
//     the KV of a prefix never changes when the sequence grows (append-only).
//   - Laid out as the store stores it: a blob of pages [a, a+n) is written
//     layer-major per radix::BlobLayout (kv_layout.h) in the layout's dtype
//     (dtype_encoding.h).
//   - Incremental: a ModelState (model_state.h) carries the causal mix, so a
//     worker that computed pages [0, a) computes [a, b) without the prefix.
//
// The model (its specification; the CUDA version must match it bit for bit)
// ----------------------------------------------------------------------------
// D = kModelDim = 32. W = num_kv_heads * head_dim. U(stream, row, col) is a
// value in [-1, 1) from the counter-based generator (internal/seeded_values.h:
// UnitFloat(ElementBits(RowKey(seed, stream, row), col))). g = tp_rank * W for
// kKeyValue (rank r holds heads [r*H, (r+1)*H) of one model whose residual
// stream every rank shares, so the ranks' KV together equal the KV of the
// same model at tp_world 1 with H * tp_world heads), g = 0 for kMlaLatent (the
// latent is replicated across ranks, as in DeepSeek's MLA).
//
//   embedding   E(t)[d]     = U(1, t, d)                         d < D
//   position    P(i)[d]     = 0.5 * U(2, i, d)
//   mix         M_l[r][c]   = 0.125 * U(3<<32 | l, r, c)         r, c < D
//   key         K_l[r][j]   = 0.25 * U(4<<32 | l, r, g + j)      j < W
//   value       V_l[r][j]   = 0.25 * U(5<<32 | l, r, g + j)
//   latent      C_l[r][j]   = 0.25 * U(6<<32 | l, r, j)          (kMlaLatent)
//
// For token i (position i, id t_i) of the sequence, in order i = 0, 1, ...:
//
//   h_0(i)[d]    = E(t_i)[d] + P(i)[d]
//   for l = 0 .. num_layers-1:
//     k_l(i)[j]  = dot(K_l[.][j], h_l(i))   v_l(i)[j] likewise with V_l
//                  (kMlaLatent: c_l(i)[j] with C_l)
//     u_l(i)[c]  = dot(M_l[.][c], h_l(i))
//     s_l(i)[c]  = 0.875 * s_l(i-1)[c] + 0.125 * u_l(i)[c]     s_l(-1) = 0
//     x          = h_l(i)[c] + s_l(i)[c]
//     h_l+1(i)[c] = (2 * x) / (2 + |x|)
//
//   dot(w, h) = (...((0 + w[0]*h[0]) + w[1]*h[1]) + ...) + w[D-1]*h[D-1]
//
// The K element of (layer l, token i, head a, dim e) is k_l(i)[a*head_dim + e]
// (V and the MLA latent likewise), encoded to the layout's dtype. s_l is a
// decayed running mean of the tokens' value-path projections: the model's
// causal mix, and the only thing carried from token to token (ModelState).
// Values stay in range of every dtype: |h| < 2 after layer 0, |k|, |v| < 16,
// typical |k| ~ 0.5 (int8/uint8 hold [-2, 2), so rare outliers clamp).
//
// Reproducibility: only IEEE-754 binary32 +, -, *, / and |x|, each rounded to
// nearest even, in the order written; no libm, no std:: distributions. This
// target is compiled with -ffp-contract=off so no compiler fuses a*b+c into an
// FMA (clang fuses by default); the vectorised loops keep each element's
// order of operations, so SIMD width does not change a bit. The element
// encodings round in integer arithmetic (dtype_encoding.h).
//
// Cost: per token and layer, D * (2W + D) multiply-adds (kKeyValue; W + D
// for MLA) plus the encoding; a prefix folded in by Advance costs only D * D
// per token and layer (no K/V). Weights: num_layers * D * (2W + D) floats,
// generated at Create (at most kMaxWeightBytes).
//
// Thread safety: a ReferenceModel is immutable after Create; every method is
// const and safe to call from any number of threads at once. A ModelState is
// a value: one thread at a time advances it.
//
// Errors:
//   Create            INVALID_ARGUMENT: invalid layout (KvLayout::Validate's
//                     message), or weights would exceed kMaxWeightBytes.
//   Advance           INVALID_ARGUMENT: tokens not a whole number of pages.
//                     FAILED_PRECONDITION: state of another model.
//   ComputeNextPages  INVALID_ARGUMENT: no tokens, tokens not a whole number of
//                     pages, out.size() != pages * BytesPerPage().
//                     FAILED_PRECONDITION: state of another model.
//   ComputeBlob       INVALID_ARGUMENT: num_pages == 0, tokens not a whole
//                     number of pages, out.size() != num_pages * BytesPerPage().
//                     OUT_OF_RANGE: first_page + num_pages > pages in tokens.
// On error nothing is written and the state is unchanged.
// `out` needs no alignment and may be any memory the caller can write (it is
// written with byte stores only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/radix/kv_layout.h"
#include "strata/radix/token_span.h"
#include "strata/worker/model_state.h"

namespace strata::worker {

class ReferenceModel {
 public:
  // Width of the model's residual stream.
  static constexpr uint32_t kModelDim = 32;
  // Largest weight set Create builds (num_layers * D * (2W + D) * 4 bytes):
  // 1 GiB, i.e. num_layers * W up to ~4M (e.g. 128 layers of 256 heads x 128).
  static constexpr uint64_t kMaxWeightBytes = uint64_t{1} << 30;

  // A model for `layout` with weights drawn from `seed`. INVALID_ARGUMENT if
  // the layout is invalid or too large (kMaxWeightBytes).
  static absl::StatusOr<std::unique_ptr<ReferenceModel>> Create(const radix::KvLayout& layout,
                                                                uint64_t seed);

  ReferenceModel(const ReferenceModel&) = delete;
  ReferenceModel& operator=(const ReferenceModel&) = delete;

  const radix::KvLayout& layout() const { return layout_; }
  uint64_t seed() const { return seed_; }
  // Bytes of the generated weights.
  uint64_t weight_bytes() const { return weights_.size() * sizeof(float); }

  // The state before the first token of any sequence.
  ModelState InitialState() const;

  // Folds `tokens` (the next whole pages of the sequence) into *state without
  // computing their KV. Empty `tokens` is a no-op.
  // REQUIRES: state != nullptr.
  absl::Status Advance(ModelState* state, absl::Span<const radix::TokenId> tokens) const;

  // Computes the KV of `tokens`, the next n = tokens.size() / page_tokens
  // whole pages of the sequence (pages [state->pages(), state->pages() + n)),
  // writes them to `out` as one blob of n pages (radix::BlobLayout), and folds
  // them into *state. REQUIRES: state != nullptr.
  absl::Status ComputeNextPages(ModelState* state, absl::Span<const radix::TokenId> tokens,
                                absl::Span<std::byte> out) const;

  // From scratch: writes the blob of pages [first_page, first_page +
  // num_pages) of the sequence `prefix_and_span` (whole pages; pages past the
  // blob's are ignored, as causality makes them irrelevant) to `out`.
  // Equivalent to Advance over pages [0, first_page) then ComputeNextPages.
  absl::Status ComputeBlob(absl::Span<const radix::TokenId> prefix_and_span, uint32_t first_page,
                           uint32_t num_pages, absl::Span<std::byte> out) const;

  // ComputeBlob into a new buffer of num_pages * BytesPerPage() bytes. Same
  // errors, all checked before anything is allocated.
  absl::StatusOr<std::vector<std::byte>> ComputeBlobBytes(
      absl::Span<const radix::TokenId> prefix_and_span, uint32_t first_page,
      uint32_t num_pages) const;

 private:
  friend class DeviceReferenceModel;  // runs the same model on a gpu::Device

  ReferenceModel(const radix::KvLayout& layout, uint64_t seed);

  // Runs tokens [0, tokens.size()) at positions state->tokens() + i through
  // every layer. With out != nullptr (a blob of `blob_pages` pages whose page
  // 0 is the state's current page) also computes and writes their KV; else
  // only the running means. Advances the state.
  void Run(ModelState* state, absl::Span<const radix::TokenId> tokens, std::byte* out,
           uint64_t blob_pages) const;
  absl::Status CheckState(const ModelState& state) const;
  // ComputeBlob's checks of its tokens and page range (not of `out`).
  absl::Status CheckBlobRequest(absl::Span<const radix::TokenId> prefix_and_span,
                                uint32_t first_page, uint32_t num_pages) const;

  radix::KvLayout layout_;
  uint64_t seed_;
  uint32_t kv_width_;       // W = num_kv_heads * head_dim
  uint32_t padded_width_;   // W rounded up to a multiple of 8 (zero columns)
  uint32_t kv_columns_;     // 2 * padded_width_ (kKeyValue) or padded_width_ (MLA)
  uint32_t layer_columns_;  // kv_columns_ + kModelDim: [K | V | M] or [C | M]
  // Per layer l, a kModelDim x layer_columns_ row-major matrix at
  // weights_[l * kModelDim * layer_columns_]: row r holds K_l[r][.] (padded),
  // V_l[r][.] (padded), M_l[r][.]; for MLA C_l[r][.] (padded), M_l[r][.].
  std::vector<float> weights_;
};

}  // namespace strata::worker
