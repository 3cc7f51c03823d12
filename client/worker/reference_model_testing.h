// Shared by the reference model's tests: layouts, tokens, and reading
// elements out of a blob. Header-only; tests only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "glog/logging.h"

#include "strata/radix/kv_layout.h"
#include "strata/radix/token_span.h"
#include "strata/worker/dtype_encoding.h"
#include "strata/worker/reference_model.h"

namespace strata::worker::model_testing {

using radix::DType;
using radix::KvFormat;
using radix::KvLayout;
using radix::TokenId;
using Bytes = std::vector<std::byte>;

inline KvLayout Layout(DType dtype, uint32_t layers, uint32_t heads, uint32_t head_dim,
                       uint32_t page_tokens, KvFormat format = KvFormat::kKeyValue,
                       uint32_t tp_rank = 0, uint32_t tp_world = 1) {
  return KvLayout{.num_layers = layers,
                  .num_kv_heads = heads,
                  .head_dim = head_dim,
                  .dtype = dtype,
                  .page_tokens = page_tokens,
                  .format = format,
                  .tp_rank = tp_rank,
                  .tp_world = tp_world};
}

// Small enough for ASan, odd widths so padding is exercised.
inline KvLayout Small(DType dtype = DType::kFloat32) { return Layout(dtype, 3, 3, 5, 4); }

inline std::vector<TokenId> RandomTokens(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<TokenId> tokens(n);
  for (TokenId& t : tokens) t = rng() % 128000;
  return tokens;
}

inline std::unique_ptr<ReferenceModel> MustCreate(const KvLayout& layout, uint64_t seed) {
  auto model = ReferenceModel::Create(layout, seed);
  CHECK(model.ok()) << model.status();
  return std::move(model).value();
}

inline Bytes MustCompute(const ReferenceModel& model, absl::Span<const TokenId> tokens,
                         uint32_t first_page, uint32_t num_pages) {
  auto blob = model.ComputeBlobBytes(tokens, first_page, num_pages);
  CHECK(blob.ok()) << blob.status();
  return std::move(blob).value();
}

// The bytes of pages [first, first+count) of `layer` in a blob of `pages` pages.
inline Bytes LayerPages(const Bytes& blob, const KvLayout& layout, uint32_t pages, uint32_t layer,
                        uint32_t first, uint32_t count) {
  auto blob_layout = radix::BlobLayout::Create(layout, pages);
  CHECK(blob_layout.ok());
  auto range = blob_layout->LayerPageRange(layer, first, count);
  CHECK(range.ok()) << range.status();
  return Bytes(blob.begin() + range->offset, blob.begin() + range->end());
}

// Element `column` of token `token` (in page) of `page`, layer `layer`: K (or
// the latent) when !value, else V, decoded to float.
inline float Element(const Bytes& blob, const KvLayout& layout, uint32_t pages, uint32_t layer,
                     uint32_t page, uint32_t token, uint32_t column, bool value) {
  const uint64_t size = radix::DTypeSize(layout.dtype);
  const uint64_t width = uint64_t{layout.num_kv_heads} * layout.head_dim;
  const uint64_t offset = (uint64_t{layer} * pages + page) * layout.BytesPerLayerPage() +
                          (value ? layout.BytesPerKvBlock() : 0) + (token * width + column) * size;
  float out;
  CHECK(DecodeElements(layout.dtype, absl::MakeConstSpan(blob).subspan(offset, size),
                       absl::MakeSpan(&out, 1))
            .ok());
  return out;
}

inline uint32_t FloatBits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

}  // namespace strata::worker::model_testing
