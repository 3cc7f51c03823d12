// Tokens and page-aligned spans of them.
//
// The index matches whole pages of `page_tokens` consecutive tokens; a trailing
// partial page is never cached. A PageSpan names pages [begin, end) of one token
// sequence. All types are plain values; all functions are pure and thread-safe
// and allocate nothing.
//
// Page arithmetic is done in 64 bits, so no product here overflows. A zero
// page size is nonsense (KvLayout::Validate rejects it); the helpers treat it
// as "no whole pages" instead of dividing by zero, and CheckPageAligned
// reports it as INVALID_ARGUMENT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace strata::radix {

// A token id as produced by the model's tokenizer.
using TokenId = uint32_t;

// Pages [begin, end) of a token sequence. Invariant: begin <= end.
struct PageSpan {
  uint32_t begin = 0;
  uint32_t end = 0;

  uint32_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
  friend bool operator==(const PageSpan&, const PageSpan&) = default;
};

// Number of whole pages in `num_tokens` tokens (a trailing partial page does
// not count). 0 when page_tokens == 0. Saturates at UINT32_MAX, which no real
// sequence reaches (it would be > 4 billion pages).
inline uint32_t WholePages(size_t num_tokens, uint32_t page_tokens) {
  if (page_tokens == 0) return 0;
  const uint64_t pages = static_cast<uint64_t>(num_tokens) / page_tokens;
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  return static_cast<uint32_t>(pages < kMax ? pages : kMax);
}

// Number of tokens in `num_pages` pages.
inline uint64_t PageTokenCount(uint32_t num_pages, uint32_t page_tokens) {
  return static_cast<uint64_t>(num_pages) * page_tokens;
}

// OK when `num_tokens` is a whole number of pages (0 included).
// INVALID_ARGUMENT "N tokens is not a multiple of page_tokens P" otherwise,
// and INVALID_ARGUMENT when page_tokens == 0.
inline absl::Status CheckPageAligned(size_t num_tokens, uint32_t page_tokens) {
  if (page_tokens == 0) {
    return absl::InvalidArgumentError("page_tokens must be > 0, got 0");
  }
  if (num_tokens % page_tokens != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(num_tokens, " tokens is not a multiple of page_tokens ", page_tokens, " (",
                     num_tokens / page_tokens, " whole pages and ", num_tokens % page_tokens,
                     " tokens left over)"));
  }
  return absl::OkStatus();
}

// The tokens of pages `span` of `tokens`: tokens[begin*P, end*P). Returns an
// empty span when `span` is empty, page_tokens == 0, or `span` does not lie
// wholly inside `tokens` (so a caller can never read past the end).
inline absl::Span<const TokenId> PageSpanTokens(absl::Span<const TokenId> tokens, PageSpan span,
                                                uint32_t page_tokens) {
  if (span.begin >= span.end || page_tokens == 0) return {};
  const uint64_t first = PageTokenCount(span.begin, page_tokens);
  const uint64_t last = PageTokenCount(span.end, page_tokens);
  if (last > tokens.size()) return {};
  return tokens.subspan(static_cast<size_t>(first), static_cast<size_t>(last - first));
}

// The tokens of page `page_index` of `tokens`: exactly page_tokens tokens, or
// an empty span when that page is not whole inside `tokens`.
inline absl::Span<const TokenId> PageTokens(absl::Span<const TokenId> tokens, uint32_t page_index,
                                            uint32_t page_tokens) {
  if (page_index == std::numeric_limits<uint32_t>::max()) return {};
  return PageSpanTokens(tokens, PageSpan{page_index, page_index + 1}, page_tokens);
}

// The whole-page prefix of `tokens`: the first WholePages(size, P) * P tokens.
inline absl::Span<const TokenId> WholePagePrefix(absl::Span<const TokenId> tokens,
                                                 uint32_t page_tokens) {
  const uint64_t n = PageTokenCount(WholePages(tokens.size(), page_tokens), page_tokens);
  return tokens.first(static_cast<size_t>(n));
}

}  // namespace strata::radix
