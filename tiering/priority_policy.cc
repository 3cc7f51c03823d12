#include "strata/tiering/priority_policy.h"

namespace strata::tiering {

void PriorityPolicy::OnInsert(BlobId id, const BlobTraits& traits) {
  if (index_.Contains(id)) {
    index_.Insert(id, traits, TouchMark());
    return;
  }
  BlobTraits recorded = traits;
  BeforeInsert(id, &recorded);
  index_.Insert(id, recorded, TouchMark());
  AfterInsert(id);
}

void PriorityPolicy::OnErase(BlobId id) {
  const BlobView* blob = index_.Find(id);
  if (blob == nullptr) return;
  BeforeErase(*blob);
  index_.Erase(id);
}

std::optional<double> PriorityPolicy::Score(BlobId id) const {
  const BlobView* blob = index_.Find(id);
  if (blob == nullptr) return std::nullopt;
  return blob->priority;
}

}  // namespace strata::tiering
