// TierState names and conversions (node_engine_types.h).
#include "strata/store/core/node_engine_types.h"

#include "glog/logging.h"

namespace strata::store::core {

std::string_view TierStateName(TierState state) {
  switch (state) {
    case TierState::kHbm:
      return "hbm";
    case TierState::kDram:
      return "dram";
    case TierState::kSsd:
      return "ssd";
    case TierState::kText:
      return "text";
  }
  return "unknown";
}

std::string_view LookupPhaseName(LookupPhase phase) {
  switch (phase) {
    case LookupPhase::kUnspecified:
      return "unspecified";
    case LookupPhase::kPrefill:
      return "prefill";
    case LookupPhase::kMidfill:
      return "midfill";
    case LookupPhase::kDecode:
      return "decode";
  }
  return "unknown";
}

tiering::TierKind TierKindOf(TierState state) {
  switch (state) {
    case TierState::kHbm:
      return tiering::TierKind::kHbm;
    case TierState::kDram:
      return tiering::TierKind::kDram;
    case TierState::kSsd:
      return tiering::TierKind::kSsd;
    case TierState::kText:
      break;
  }
  LOG(FATAL) << "TEXT is not a byte tier";
}

TierState TierStateOf(tiering::TierKind kind) {
  switch (kind) {
    case tiering::TierKind::kHbm:
      return TierState::kHbm;
    case tiering::TierKind::kDram:
      return TierState::kDram;
    case tiering::TierKind::kSsd:
      return TierState::kSsd;
  }
  LOG(FATAL) << "unknown tier kind " << static_cast<int>(kind);
}

}  // namespace strata::store::core
