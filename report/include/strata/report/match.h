// Segment and MatchResult: the longest cached prefix of a query, as the node's engine
// answers Match, the wire carries it (strata.v1.MatchResponse) and the client returns it.
//
// Matched pages [seq_page_begin, seq_page_begin + page_count) of the query are pages
// [blob_page_offset, blob_page_offset + page_count) of `blob`, a blob of `blob_pages`
// pages whose bytes are in `tier` (the fastest tier holding them; a Read is served from
// it, promoting SSD bytes into DRAM first). A kText segment has no bytes: `tokens` holds
// the blob's tokens of the matched pages (page_count * page_tokens of them), so a worker
// can recompute the KV (or ask for a rebuild) instead of re-sending the conversation;
// empty for every other tier. Sequence pages count from the start of the token sequence,
// blob pages from a blob's first page.
//
// The segments cover sequence pages [0, matched_pages) in order, without gaps.
// matched_pages counts TEXT pages too (their tokens are cached, their bytes are not): what
// can be read is ReadablePages(), the prefix before the first TEXT segment. `truncated`:
// the answer was cut short on the wire (kMaxMatchSegments, or kMaxMatchTextTokens of TEXT
// tokens); more pages may be cached.
//
// Value types and pure functions; thread-safe. Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/radix/blob_key.h"
#include "strata/radix/token_span.h"
#include "strata/report/tier.h"

namespace strata::report {

struct Segment {
  radix::BlobKey blob;
  uint32_t blob_page_offset = 0;
  uint32_t page_count = 0;
  uint32_t seq_page_begin = 0;
  uint32_t blob_pages = 0;
  Tier tier = Tier::kDram;
  std::vector<radix::TokenId> tokens;  // kText segments only
  // In a cluster: nodes holding this blob's bytes, the answering owner included, when it was
  // pushed to the next nodes of its segment's ranking as a hot replica; 0 otherwise.
  uint32_t replicas = 0;

  friend bool operator==(const Segment&, const Segment&) = default;
};

struct MatchResult {
  uint32_t matched_pages = 0;
  std::vector<Segment> segments;
  bool truncated = false;

  // Pages [0, n) whose bytes a byte tier holds: matched_pages up to the first kText
  // segment (all of them when there is none).
  uint32_t ReadablePages() const;
  // The kText segments, in order (with their tokens).
  std::vector<Segment> TextSegments() const;
};

}  // namespace strata::report
