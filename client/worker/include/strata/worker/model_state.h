// ModelState: where a ReferenceModel (reference_model.h) stands in one token
// sequence after folding in its first pages, so the next pages' KV can be
// computed without recomputing the prefix.
//
// It holds exactly what the model's causal mix carries from token to token:
// one running mean of kModelDim floats per layer, plus the number of tokens
// folded in (always a whole number of pages). It is a plain value: copy it to
// branch a sequence (an edit or a retry continues from a copy), move it
// around freely. Only ReferenceModel makes one (InitialState) or advances one
// (Advance, ComputeNextPages), and only a state of the same model (same
// layout and seed) is accepted back; another model's state is refused with
// FAILED_PRECONDITION.
//
// Thread safety: like any value; concurrent reads are safe, a state being
// advanced must not be touched by another thread.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/radix/kv_layout.h"

namespace strata::worker {

class ReferenceModel;

class ModelState {
 public:
  ModelState(const ModelState&) = default;
  ModelState& operator=(const ModelState&) = default;
  ModelState(ModelState&&) = default;
  ModelState& operator=(ModelState&&) = default;

  // Tokens folded in so far: the position of the next token.
  uint64_t tokens() const { return tokens_; }
  // Pages folded in so far (tokens() / page_tokens).
  uint64_t pages() const { return tokens_ / layout_.page_tokens; }

  // The model this state belongs to.
  const radix::KvLayout& layout() const { return layout_; }
  uint64_t seed() const { return seed_; }

 private:
  friend class ReferenceModel;
  friend class DeviceReferenceModel;

  ModelState(const radix::KvLayout& layout, uint64_t seed, uint32_t model_dim)
      : layout_(layout), seed_(seed), running_mean_(size_t{layout.num_layers} * model_dim, 0.0f) {}

  radix::KvLayout layout_;
  uint64_t seed_;
  uint64_t tokens_ = 0;
  // Layer-major: running_mean_[l * kModelDim + c] = s_l[c] of the last token.
  std::vector<float> running_mean_;
};

}  // namespace strata::worker
