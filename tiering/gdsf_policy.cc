#include "strata/tiering/gdsf_policy.h"

#include <algorithm>

namespace strata::tiering {

double GdsfPolicy::CostPerByte(const BlobTraits& traits) const {
  const double bytes = static_cast<double>(std::max<uint64_t>(traits.bytes, 1));
  if (traits.pages == 0) return 1.0;  // no shape known: cost = bytes
  const double page_tokens = traits.page_tokens == 0 ? 1.0 : traits.page_tokens;
  const double tokens = traits.pages * page_tokens;
  double cost = tokens;
  if (options_.depth_aware) {
    const double start = traits.first_page * page_tokens;
    cost += (start * tokens + tokens * tokens / 2) / options_.attention_tokens;
  }
  return cost / bytes;
}

void GdsfPolicy::OnInsert(BlobId id, const BlobTraits& traits) {
  if (Extra* extra = index_.MutableExtra(id); extra != nullptr) {
    index_.SetBytes(id, traits.bytes);
    index_.SetParent(id, traits.parent);
    extra = index_.MutableExtra(id);
    extra->cost_per_byte = CostPerByte(traits);
    Touch(id, extra);
    return;
  }
  Extra extra{.reads = 1, .cost_per_byte = CostPerByte(traits)};
  index_.Insert(id, traits.parent, traits.bytes, Key(inflation_ + extra.cost_per_byte, ++clock_),
                extra);
}

void GdsfPolicy::OnAccess(BlobId id) {
  if (Extra* extra = index_.MutableExtra(id); extra != nullptr) Touch(id, extra);
}

void GdsfPolicy::Touch(BlobId id, Extra* extra) {
  ++extra->reads;
  const double priority = inflation_ + static_cast<double>(extra->reads) * extra->cost_per_byte;
  index_.SetKey(id, Key(priority, ++clock_));
}

void GdsfPolicy::OnErase(BlobId id) {
  const auto* entry = index_.Find(id);
  if (entry == nullptr) return;
  // Only an eviction in order ages the rest: deleting a valuable blob must not.
  BlobId first = 0;
  if (index_.First(&first) != nullptr && first == id) {
    inflation_ = std::max(inflation_, entry->key.first);
  }
  index_.Erase(id);
}

std::optional<double> GdsfPolicy::Score(BlobId id) const {
  const auto* entry = index_.Find(id);
  if (entry == nullptr) return std::nullopt;
  return entry->key.first;
}

}  // namespace strata::tiering
