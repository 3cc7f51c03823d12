// BeladyPolicy ("belady"): the offline optimum, for the replay only.
//
// Evicts the blob whose next use is farthest in the future (never-again first), told by the
// replay before each touch (SetNextUse). Blobs without a tracked child come first
// (LeafFirstIndex), which costs nothing here: every request reads its whole prefix, so a
// parent is always used no later than any of its children and the farthest-used blob can
// always be taken among the leaves. This leaf-first Belady is therefore the bound that
// matters for a leaf-first engine. With equal block sizes and every missing block inserted
// this is Belady's MIN, the optimum; prefix_cache_replay_test checks on random traces that
// no policy beats it.
// Ties (equal next use, e.g. never) go to the blob touched earlier.
// Score(id) = -(next use) (lower = sooner). Thread safety: thread-compatible. Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/leaf_first_index.h"

namespace strata::tiering::sim {

class BeladyPolicy final : public EvictionPolicy {
 public:
  static constexpr uint64_t kNever = ~uint64_t{0};

  using EvictionPolicy::OnInsert;

  std::string_view name() const override { return "belady"; }
  // The next OnInsert or OnAccess is of a blob next used at `next_use` (a request index,
  // or kNever).
  void SetNextUse(uint64_t next_use) { pending_next_use_ = next_use; }
  void OnInsert(BlobId id, const BlobTraits& traits) override;
  void OnAccess(BlobId id) override;
  void OnErase(BlobId id) override { index_.Erase(id); }
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const override {
    index_.CollectVictims(bytes_needed, evictable, victims);
  }
  std::optional<double> Score(BlobId id) const override;
  uint64_t size() const override { return index_.size(); }
  uint64_t tracked_bytes() const override { return index_.tracked_bytes(); }

 private:
  // (~next use: farthest first, tick of the touch).
  using Key = std::pair<uint64_t, uint64_t>;

  LeafFirstIndex<Key> index_;
  uint64_t pending_next_use_ = kNever;
  uint64_t clock_ = 0;
};

}  // namespace strata::tiering::sim
