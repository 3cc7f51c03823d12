// HeldSpan (held_span.h): a hold is dropped through its engine (NodeEngine::DropHold).
#include "strata/store/core/held_span.h"

#include <utility>

#include "strata/store/core/node_engine.h"

namespace strata::store::core {

HeldSpan& HeldSpan::operator=(HeldSpan&& other) noexcept {
  if (this != &other) {
    Reset();
    engine_ = std::exchange(other.engine_, nullptr);
    record_id_ = std::exchange(other.record_id_, 0);
    span_ = std::exchange(other.span_, {});
  }
  return *this;
}

void HeldSpan::Reset() {
  if (engine_ == nullptr) return;
  std::exchange(engine_, nullptr)->DropHold(record_id_);
  record_id_ = 0;
  span_ = {};
}

}  // namespace strata::store::core
