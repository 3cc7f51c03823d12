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

double GdsfPolicy::Priority(const BlobView& blob) const {
  return blob.mark + static_cast<double>(blob.touches) * CostPerByte(blob.traits);
}

void GdsfPolicy::BeforeErase(const BlobView& blob) {
  // Only an eviction in order ages the rest: deleting a valuable blob must not.
  if (index().First() == &blob) inflation_ = std::max(inflation_, blob.priority);
}

}  // namespace strata::tiering
