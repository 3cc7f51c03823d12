// Tokens and page-aligned spans of them.
//
// The index matches whole pages of `page_tokens` consecutive tokens; a trailing
// partial page is never cached. A PageSpan names pages [begin, end) of one token
// sequence. All types are plain values; all functions are pure and thread-safe.
#pragma once

#include <cstdint>

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

}  // namespace strata::radix
