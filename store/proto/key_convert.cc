#include "strata/proto/key_convert.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"

namespace strata::proto {

void ToProto(const radix::PrefixHash& hash, v1::PrefixHash* out) {
  out->set_hi(hash.hi);
  out->set_lo(hash.lo);
}

void ToProto(const radix::BlobKey& key, v1::BlobKey* out) {
  out->set_hi(key.hash.hi);
  out->set_lo(key.hash.lo);
}

radix::PrefixHash PrefixHashFromProto(const v1::PrefixHash& hash) {
  return radix::PrefixHash{.hi = hash.hi(), .lo = hash.lo()};
}

radix::BlobKey BlobKeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{.hash = {.hi = key.hi(), .lo = key.lo()}};
}

absl::StatusOr<radix::BlobKey> BlobKeyFromProto(const v1::BlobKey& key, std::string_view field) {
  if (key.hi() == 0 && key.lo() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        base::AbslView(field), ": missing (the all-zero blob key is reserved for unset)"));
  }
  return BlobKeyOf(key);
}

}  // namespace strata::proto
