#include "strata/tiering/admission_policy.h"

#include "absl/strings/str_cat.h"

#include "strata/tiering/reuse_admission.h"

namespace strata::tiering {

absl::StatusOr<std::unique_ptr<AdmissionPolicy>> MakeAdmissionPolicy(std::string_view name) {
  if (name == "always") return std::make_unique<AlwaysAdmission>();
  if (name == "reuse") return std::make_unique<ReuseAdmission>();
  return absl::InvalidArgumentError(absl::StrCat("unknown admission policy \"",
                                                 absl::string_view(name.data(), name.size()),
                                                 "\" (known: always, reuse)"));
}

}  // namespace strata::tiering
