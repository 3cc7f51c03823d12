#include "strata/report/lookup.h"

namespace strata::report {

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

}  // namespace strata::report
