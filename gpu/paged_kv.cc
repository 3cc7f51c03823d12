#include "strata/gpu/paged_kv.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace strata::gpu {
namespace {

std::vector<void*> Offset(absl::Span<void* const> bases, uint64_t bytes) {
  std::vector<void*> out;
  out.reserve(bases.size());
  for (void* b : bases) out.push_back(b == nullptr ? nullptr : static_cast<std::byte*>(b) + bytes);
  return out;
}

// Token t's K (or latent) and V rows in layer l of the blob.
const std::byte* BlobRow(const std::byte* blob, const BlobShape& s, uint32_t l, uint64_t t,
                         bool v) {
  const uint64_t page = t / s.page_tokens;
  const uint64_t within = t % s.page_tokens;
  return blob + (uint64_t{l} * s.num_pages + page) * s.LayerPageBytes() + (v ? s.BlockBytes() : 0) +
         within * s.row_bytes;
}

template <bool kScatter>
void Move(std::byte* blob, const BlobShape& s, const PagedCache& c,
          absl::Span<const uint64_t> rows) {
  for (uint32_t l = 0; l < s.num_layers; ++l) {
    for (int half = 0; half < (s.key_value ? 2 : 1); ++half) {
      auto* tensor = static_cast<std::byte*>(half == 0 ? c.k[l] : c.v[l]);
      for (uint64_t t = 0; t < s.Tokens(); ++t) {
        std::byte* cache_row = tensor + rows[t] * c.row_stride;
        std::byte* blob_row = const_cast<std::byte*>(BlobRow(blob, s, l, t, half == 1));
        if (kScatter) {
          std::memcpy(cache_row, blob_row, s.row_bytes);
        } else {
          std::memcpy(blob_row, cache_row, s.row_bytes);
        }
      }
    }
  }
}

}  // namespace

PagedCache VllmSeparateCache(absl::Span<void* const> k, absl::Span<void* const> v,
                             uint64_t num_blocks, uint32_t block_size, uint64_t row_bytes) {
  return PagedCache{{k.begin(), k.end()}, {v.begin(), v.end()}, num_blocks * block_size, row_bytes};
}

PagedCache VllmCombinedCache(absl::Span<void* const> kv, uint64_t num_blocks, uint32_t block_size,
                             uint64_t row_bytes) {
  const uint64_t rows = num_blocks * block_size;
  return PagedCache{{kv.begin(), kv.end()}, Offset(kv, rows * row_bytes), rows, row_bytes};
}

PagedCache SglangSlotCache(absl::Span<void* const> k, absl::Span<void* const> v, uint64_t num_slots,
                           uint64_t row_bytes) {
  return PagedCache{{k.begin(), k.end()}, {v.begin(), v.end()}, num_slots, row_bytes};
}

PagedCache MlaCache(absl::Span<void* const> latent, uint64_t rows, uint64_t row_bytes) {
  return PagedCache{{latent.begin(), latent.end()}, {}, rows, row_bytes};
}

absl::Status RowsFromBlockTable(absl::Span<const int32_t> block_table, uint32_t block_size,
                                uint64_t first_token, uint64_t count, std::vector<uint64_t>* rows) {
  if (block_size == 0) return absl::InvalidArgumentError("block_size: 0");
  rows->clear();
  rows->reserve(count);
  for (uint64_t t = first_token; t < first_token + count; ++t) {
    const uint64_t index = t / block_size;
    if (index >= block_table.size()) {
      return absl::InvalidArgumentError(absl::StrCat("block_table: ", block_table.size(),
                                                     " blocks, token ", t, " needs block ", index));
    }
    if (block_table[index] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("block_table[", index, "]: negative block ", block_table[index]));
    }
    rows->push_back(uint64_t(block_table[index]) * block_size + t % block_size);
  }
  return absl::OkStatus();
}

absl::Status RowsFromSlots(absl::Span<const int64_t> slots, std::vector<uint64_t>* rows) {
  rows->clear();
  rows->reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("slots[", i, "]: negative slot ", slots[i]));
    }
    rows->push_back(static_cast<uint64_t>(slots[i]));
  }
  return absl::OkStatus();
}

absl::Status CheckPagedTransfer(const BlobShape& shape, const PagedCache& cache,
                                absl::Span<const uint64_t> rows, bool scatter) {
  if (shape.num_layers == 0 || shape.num_pages == 0 || shape.page_tokens == 0 ||
      shape.row_bytes == 0) {
    return absl::InvalidArgumentError("paged KV: the blob shape has a zero field");
  }
  if (cache.k.size() != shape.num_layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("paged KV: ", cache.k.size(), " K tensors for ", shape.num_layers, " layers"));
  }
  const size_t want_v = shape.key_value ? shape.num_layers : 0;
  if (cache.v.size() != want_v) {
    return absl::InvalidArgumentError(
        absl::StrCat("paged KV: ", cache.v.size(), " V tensors, expected ", want_v,
                     shape.key_value ? "" : " (MLA has only the latent)"));
  }
  for (size_t l = 0; l < cache.k.size(); ++l) {
    if (cache.k[l] == nullptr || (shape.key_value && cache.v[l] == nullptr)) {
      return absl::InvalidArgumentError(absl::StrCat("paged KV: layer ", l, ": a null tensor"));
    }
  }
  if (cache.row_stride < shape.row_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("paged KV: row_stride ", cache.row_stride, " < row_bytes ", shape.row_bytes));
  }
  if (rows.size() != shape.Tokens()) {
    return absl::InvalidArgumentError(
        absl::StrCat("paged KV: ", rows.size(), " rows for ", shape.Tokens(), " tokens"));
  }
  for (size_t t = 0; t < rows.size(); ++t) {
    if (rows[t] >= cache.rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("paged KV: token ", t, " -> row ", rows[t], ", the cache has ", cache.rows));
    }
  }
  if (scatter) {
    std::vector<uint64_t> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end());
    const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
    if (twice != sorted.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("paged KV: two tokens scatter to row ", *twice));
    }
  }
  return absl::OkStatus();
}

void ScatterPagedReference(const void* blob, const BlobShape& shape, const PagedCache& cache,
                           absl::Span<const uint64_t> rows) {
  Move<true>(static_cast<std::byte*>(const_cast<void*>(blob)), shape, cache, rows);
}

void GatherPagedReference(void* blob, const BlobShape& shape, const PagedCache& cache,
                          absl::Span<const uint64_t> rows) {
  Move<false>(static_cast<std::byte*>(blob), shape, cache, rows);
}

}  // namespace strata::gpu
