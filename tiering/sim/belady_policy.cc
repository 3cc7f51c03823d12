#include "strata/tiering/sim/belady_policy.h"

namespace strata::tiering::sim {

void BeladyPolicy::OnInsert(BlobId id, const BlobTraits& traits) {
  const Key key(~pending_next_use_, ++clock_);
  if (index_.Contains(id)) {
    index_.SetBytes(id, traits.bytes);
    index_.SetParent(id, traits.parent);
    index_.SetKey(id, key);
    return;
  }
  index_.Insert(id, traits.parent, traits.bytes, key);
}

void BeladyPolicy::OnAccess(BlobId id) {
  if (index_.Contains(id)) index_.SetKey(id, Key(~pending_next_use_, ++clock_));
}

std::optional<double> BeladyPolicy::Score(BlobId id) const {
  const auto* entry = index_.Find(id);
  if (entry == nullptr) return std::nullopt;
  return -static_cast<double>(~entry->key.first);
}

}  // namespace strata::tiering::sim
