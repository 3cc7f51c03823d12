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
// How it compares with LRU and BranchLruPolicy on replayed traces: tiering/sim/README.md.
// Score(id) = H. Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/leaf_first_index.h"

namespace strata::tiering {

struct GdsfOptions {
  // Context length (tokens) where attention per token equals the other per-token work.
  // REQUIRES: > 0.
  double attention_tokens = 4096;
  // false: cost = tokens only (size/frequency without depth).
  bool depth_aware = true;
};

class GdsfPolicy final : public EvictionPolicy {
 public:
  explicit GdsfPolicy(GdsfOptions options = {}) : options_(options) {}

  using EvictionPolicy::OnInsert;

  std::string_view name() const override { return "gdsf"; }
  void OnInsert(BlobId id, const BlobTraits& traits) override;
  void OnAccess(BlobId id) override;
  void OnErase(BlobId id) override;
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const override {
    index_.CollectVictims(bytes_needed, evictable, victims);
  }
  std::optional<double> Score(BlobId id) const override;
  uint64_t size() const override { return index_.size(); }
  uint64_t tracked_bytes() const override { return index_.tracked_bytes(); }

  // The aging floor L.
  double inflation() const { return inflation_; }
  // cost / bytes for `traits` (see above); exposed for tests.
  double CostPerByte(const BlobTraits& traits) const;

 private:
  // (H, tick of the last touch): ties go to the earlier touch.
  using Key = std::pair<double, uint64_t>;
  struct Extra {
    uint64_t reads = 0;
    double cost_per_byte = 0;
  };

  void Touch(BlobId id, Extra* extra);

  GdsfOptions options_;
  LeafFirstIndex<Key, Extra> index_;
  double inflation_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace strata::tiering
