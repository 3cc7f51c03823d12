// GdsfPolicy ("gdsf"): GreedyDual-Size-Frequency with a depth-aware recompute cost.
//
// Each blob has priority H = L + reads × cost / bytes, where reads counts its touches
// (OnInsert and OnAccess) and cost is what rebuilding its KV would take:
//
//   tokens = pages × page_tokens, start = first_page × page_tokens
//   cost   = tokens + (start × tokens + tokens² / 2) / attention_tokens
//
// i.e. the per-token (MLP, projection) work plus attention over the whole prefix, with
// `attention_tokens` the context length at which a token's attention costs as much as the
// rest of its work. A blob with unknown page_tokens counts its pages as tokens; one with no
// pages costs its bytes (so H grows by reads alone: LFU with aging). L starts at 0 and rises
// to the priority of each blob erased while it was first in eviction order, so blobs not
// read for a while fall behind newly inserted ones (the aging that makes GDSF track recency).
// Lowest H is evicted first, leaves before blobs with a tracked child (LeafFirstIndex);
// ties go to the blob touched earlier. O(log n) per event.
//
// As a PriorityPolicy: the mark of a touch is L at that moment, and
//   Priority(blob) = blob.mark + blob.touches × CostPerByte(blob.traits)
// (pure); BeforeErase raises L. How it compares with LRU and BranchLruPolicy on replayed
// traces: tiering/sim/README.md.
// Score(id) = H. Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <string_view>

#include "strata/tiering/priority_policy.h"

namespace strata::tiering {

struct GdsfOptions {
  // Context length (tokens) where attention per token equals the other per-token work.
  // REQUIRES: > 0.
  double attention_tokens = 4096;
  // false: cost = tokens only (size/frequency without depth).
  bool depth_aware = true;
};

class GdsfPolicy final : public PriorityPolicy {
 public:
  explicit GdsfPolicy(GdsfOptions options = {}) : options_(options) {}

  std::string_view name() const override { return "gdsf"; }
  double Priority(const BlobView& blob) const override;

  // The aging floor L.
  double inflation() const { return inflation_; }
  // cost / bytes for `traits` (see above); exposed for tests.
  double CostPerByte(const BlobTraits& traits) const;

 private:
  double TouchMark() const override { return inflation_; }
  void BeforeErase(const BlobView& blob) override;

  GdsfOptions options_;
  double inflation_ = 0;
};

}  // namespace strata::tiering
