#include "strata/worker/reference_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "internal/element_encoder.h"
#include "internal/projection.h"
#include "internal/seeded_values.h"
#include "strata/base/status_macros.h"

namespace strata::worker {
namespace {

constexpr uint32_t kDim = ReferenceModel::kModelDim;
static_assert(kDim == internal::kProjectionRows);
// Tokens run through all layers together (layer by layer), so each layer's
// weights are loaded once per block instead of once per token.
constexpr size_t kTokenBlock = 64;

uint32_t RoundUp8(uint32_t n) { return (n + 7) / 8 * 8; }

// Fills row r of one layer's matrix: `count` values 0.25 * U(stream, r, first
// + j) at dst[0, count), zeros up to `padded`.
void FillWeightRow(uint64_t seed, uint64_t stream, uint32_t r, uint64_t first_column,
                   uint32_t count, uint32_t padded, float scale, float* dst) {
  const uint64_t key = internal::RowKey(seed, stream, r);
  for (uint32_t j = 0; j < count; ++j) {
    dst[j] = scale * internal::UnitFloat(internal::ElementBits(key, first_column + j));
  }
  std::fill(dst + count, dst + padded, 0.0f);
}

}  // namespace

ReferenceModel::ReferenceModel(const radix::KvLayout& layout, uint64_t seed)
    : layout_(layout), seed_(seed) {}

absl::StatusOr<std::unique_ptr<ReferenceModel>> ReferenceModel::Create(
    const radix::KvLayout& layout, uint64_t seed) {
  STRATA_RETURN_IF_ERROR(layout.Validate());
  const bool mla = layout.format == radix::KvFormat::kMlaLatent;
  const uint64_t width = uint64_t{layout.num_kv_heads} * layout.head_dim;
  const uint64_t padded = (width + 7) / 8 * 8;
  const uint64_t columns = (mla ? padded : 2 * padded) + kDim;
  const uint64_t weight_bytes = uint64_t{layout.num_layers} * kDim * columns * sizeof(float);
  if (weight_bytes > kMaxWeightBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout too large for the reference model: ", layout.ToString(), " needs ",
                     weight_bytes, " bytes of weights, limit ", kMaxWeightBytes));
  }
  // Every count below is < 2^28 now (weight_bytes <= 2^30).
  auto model = std::unique_ptr<ReferenceModel>(new ReferenceModel(layout, seed));
  model->kv_width_ = static_cast<uint32_t>(width);
  model->padded_width_ = RoundUp8(model->kv_width_);
  model->kv_columns_ = mla ? model->padded_width_ : 2 * model->padded_width_;
  model->layer_columns_ = model->kv_columns_ + kDim;
  model->weights_.resize(weight_bytes / sizeof(float));

  const uint64_t first_column = mla ? 0 : uint64_t{layout.tp_rank} * width;
  const uint32_t w = model->kv_width_;
  const uint32_t pw = model->padded_width_;
  for (uint32_t l = 0; l < layout.num_layers; ++l) {
    float* matrix = model->weights_.data() + size_t{l} * kDim * model->layer_columns_;
    for (uint32_t r = 0; r < kDim; ++r) {
      float* row = matrix + size_t{r} * model->layer_columns_;
      if (mla) {
        FillWeightRow(seed, internal::kLatentWeightStream | l, r, 0, w, pw, 0.25f, row);
      } else {
        FillWeightRow(seed, internal::kKeyWeightStream | l, r, first_column, w, pw, 0.25f, row);
        FillWeightRow(seed, internal::kValueWeightStream | l, r, first_column, w, pw, 0.25f,
                      row + pw);
      }
      FillWeightRow(seed, internal::kMixWeightStream | l, r, 0, kDim, kDim, 0.125f,
                    row + model->kv_columns_);
    }
  }
  return model;
}

ModelState ReferenceModel::InitialState() const { return ModelState(layout_, seed_, kDim); }

absl::Status ReferenceModel::CheckState(const ModelState& state) const {
  if (state.layout_ != layout_ || state.seed_ != seed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("model state belongs to another model: state ", state.layout_.ToString(),
                     " seed ", state.seed_, ", model ", layout_.ToString(), " seed ", seed_));
  }
  return absl::OkStatus();
}

absl::Status ReferenceModel::Advance(ModelState* state,
                                     absl::Span<const radix::TokenId> tokens) const {
  CHECK(state != nullptr);
  STRATA_RETURN_IF_ERROR(CheckState(*state));
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(tokens.size(), layout_.page_tokens));
  Run(state, tokens, nullptr, 0);
  return absl::OkStatus();
}

absl::Status ReferenceModel::ComputeNextPages(ModelState* state,
                                              absl::Span<const radix::TokenId> tokens,
                                              absl::Span<std::byte> out) const {
  CHECK(state != nullptr);
  STRATA_RETURN_IF_ERROR(CheckState(*state));
  if (tokens.empty()) {
    return absl::InvalidArgumentError("no tokens to compute: a blob has at least one page");
  }
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(tokens.size(), layout_.page_tokens));
  const uint64_t pages = tokens.size() / layout_.page_tokens;
  const uint64_t want = pages * layout_.BytesPerPage();
  if (out.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("output buffer of ", out.size(),
                                                   " bytes for a blob of ", pages,
                                                   " pages, which takes ", want, " bytes"));
  }
  Run(state, tokens, out.data(), pages);
  return absl::OkStatus();
}

absl::Status ReferenceModel::CheckBlobRequest(absl::Span<const radix::TokenId> prefix_and_span,
                                              uint32_t first_page, uint32_t num_pages) const {
  if (num_pages == 0) {
    return absl::InvalidArgumentError("num_pages is 0: a blob has at least one page");
  }
  STRATA_RETURN_IF_ERROR(radix::CheckPageAligned(prefix_and_span.size(), layout_.page_tokens));
  const uint64_t available = prefix_and_span.size() / layout_.page_tokens;
  const uint64_t end_page = uint64_t{first_page} + num_pages;
  if (end_page > available) {
    return absl::OutOfRangeError(absl::StrCat("pages [", first_page, ", ", end_page,
                                              ") past the end of a sequence of ", available,
                                              " pages"));
  }
  return absl::OkStatus();
}

absl::Status ReferenceModel::ComputeBlob(absl::Span<const radix::TokenId> prefix_and_span,
                                         uint32_t first_page, uint32_t num_pages,
                                         absl::Span<std::byte> out) const {
  STRATA_RETURN_IF_ERROR(CheckBlobRequest(prefix_and_span, first_page, num_pages));
  const uint64_t want = uint64_t{num_pages} * layout_.BytesPerPage();
  if (out.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("output buffer of ", out.size(),
                                                   " bytes for a blob of ", num_pages,
                                                   " pages, which takes ", want, " bytes"));
  }
  const uint32_t page_tokens = layout_.page_tokens;
  const size_t prefix_tokens = static_cast<size_t>(radix::PageTokenCount(first_page, page_tokens));
  const size_t span_tokens = static_cast<size_t>(radix::PageTokenCount(num_pages, page_tokens));
  ModelState state = InitialState();
  Run(&state, prefix_and_span.first(prefix_tokens), nullptr, 0);
  Run(&state, prefix_and_span.subspan(prefix_tokens, span_tokens), out.data(), num_pages);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::byte>> ReferenceModel::ComputeBlobBytes(
    absl::Span<const radix::TokenId> prefix_and_span, uint32_t first_page,
    uint32_t num_pages) const {
  // Checked before allocating: a bad num_pages must not allocate.
  STRATA_RETURN_IF_ERROR(CheckBlobRequest(prefix_and_span, first_page, num_pages));
  std::vector<std::byte> blob(uint64_t{num_pages} * layout_.BytesPerPage());
  STRATA_RETURN_IF_ERROR(ComputeBlob(prefix_and_span, first_page, num_pages, absl::MakeSpan(blob)));
  return blob;
}

void ReferenceModel::Run(ModelState* state, absl::Span<const radix::TokenId> tokens, std::byte* out,
                         uint64_t blob_pages) const {
  const uint32_t page_tokens = layout_.page_tokens;
  const uint64_t first_position = state->tokens_;
  const uint64_t first_page = first_position / page_tokens;
  const size_t element_bytes = radix::DTypeSize(layout_.dtype);
  const uint64_t kv_block_bytes = layout_.BytesPerKvBlock();
  const uint64_t layer_page_bytes = layout_.BytesPerLayerPage();
  const uint64_t row_bytes = uint64_t{kv_width_} * element_bytes;
  const bool key_value = layout_.format == radix::KvFormat::kKeyValue;
  // With KV: all columns [K | V | M] (or [C | M]); without: only M's.
  const uint32_t first_column = out != nullptr ? 0 : kv_columns_;
  const uint32_t columns = layer_columns_ - first_column;

  std::vector<float> hidden(kTokenBlock * kDim);
  // Projections of up to 4 tokens: projected[t * layer_columns_ + column].
  std::vector<float> projected(4 * size_t{layer_columns_});

  for (size_t begin = 0; begin < tokens.size(); begin += kTokenBlock) {
    const size_t count = std::min(kTokenBlock, tokens.size() - begin);
    for (size_t t = 0; t < count; ++t) {
      const uint64_t embedding_key =
          internal::RowKey(seed_, internal::kEmbeddingStream, tokens[begin + t]);
      const uint64_t position_key =
          internal::RowKey(seed_, internal::kPositionStream, first_position + begin + t);
      float* h = hidden.data() + t * kDim;
      for (uint32_t d = 0; d < kDim; ++d) {
        h[d] = internal::UnitFloat(internal::ElementBits(embedding_key, d)) +
               0.5f * internal::UnitFloat(internal::ElementBits(position_key, d));
      }
    }
    for (uint32_t l = 0; l < layout_.num_layers; ++l) {
      const float* w = weights_.data() + size_t{l} * kDim * layer_columns_ + first_column;
      float* s = state->running_mean_.data() + size_t{l} * kDim;
      for (size_t t0 = 0; t0 < count; t0 += 4) {
        // The projections need only h_l, known for every token of the block:
        // four tokens at once. The running mean then goes token by token.
        const size_t group = std::min<size_t>(4, count - t0);
        float* const y0 = projected.data() + first_column;
        if (group == 4) {
          internal::ProjectFour(w, layer_columns_, columns, hidden.data() + t0 * kDim, y0,
                                layer_columns_);
        } else {
          for (size_t t = 0; t < group; ++t) {
            internal::Project(w, layer_columns_, columns, hidden.data() + (t0 + t) * kDim,
                              y0 + t * layer_columns_);
          }
        }
        for (size_t t = 0; t < group; ++t) {
          const float* y = projected.data() + t * layer_columns_;
          float* h = hidden.data() + (t0 + t) * kDim;
          if (out != nullptr) {
            const uint64_t position = first_position + begin + t0 + t;
            const uint64_t blob_page = position / page_tokens - first_page;
            const uint64_t offset = (l * blob_pages + blob_page) * layer_page_bytes +
                                    (position % page_tokens) * row_bytes;
            internal::EncodeRow(layout_.dtype, y, kv_width_, out + offset);
            if (key_value) {
              internal::EncodeRow(layout_.dtype, y + padded_width_, kv_width_,
                                  out + offset + kv_block_bytes);
            }
          }
          const float* mix = y + kv_columns_;
          for (uint32_t c = 0; c < kDim; ++c) {
            s[c] = 0.875f * s[c] + 0.125f * mix[c];
            const float x = h[c] + s[c];
            h[c] = (2.0f * x) / (2.0f + std::fabs(x));
          }
        }
      }
    }
  }
  state->tokens_ += tokens.size();
}

}  // namespace strata::worker
