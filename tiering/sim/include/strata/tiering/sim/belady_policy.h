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
// As a PriorityPolicy (the same index and event code as the engine's policies): the mark of
// a touch is the next use given before it, and Priority(blob) = -mark (pure; kNever is the
// lowest). Ties (equal next use, e.g. never) go to the blob touched earlier.
// Score(id) = -(next use) (lower = sooner). Thread safety: thread-compatible. Errors: none.
#pragma once

#include <cstdint>
#include <string_view>

#include "strata/tiering/priority_policy.h"

namespace strata::tiering::sim {

class BeladyPolicy final : public PriorityPolicy {
 public:
  static constexpr uint64_t kNever = ~uint64_t{0};

  std::string_view name() const override { return "belady"; }
  // The next OnInsert or OnAccess is of a blob next used at `next_use` (a request index
  // below 2^53, or kNever).
  void SetNextUse(uint64_t next_use) { pending_next_use_ = next_use; }
  double Priority(const BlobView& blob) const override { return -blob.mark; }

 private:
  double TouchMark() const override { return static_cast<double>(pending_next_use_); }

  uint64_t pending_next_use_ = kNever;
};

}  // namespace strata::tiering::sim
