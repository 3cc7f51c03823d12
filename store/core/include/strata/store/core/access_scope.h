// AccessScope: which namespaces a caller may use, by their tenant label
// (radix::Namespace::tenant()). The engine answers a call outside its caller's scope exactly
// as it answers one naming something that does not exist (NOT_FOUND, same message), so a
// caller learns nothing of other tenants' namespaces, blobs, leases or puts; a put into a
// namespace outside the scope is PERMISSION_DENIED (that reveals nothing either).
//
// All() — the node's own work, an open node (no tenants file), and the engine's tests —
// allows every label. A label "*" in Of() allows every label too (an operator's tenant).
// A plain value: immutable after construction, thread-safe to share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace strata::store::core {

class AccessScope {
 public:
  // Every label.
  static const AccessScope& All() {
    static const AccessScope* all = new AccessScope(true, {});
    return *all;
  }
  // The labels given ("*": every label).
  static AccessScope Of(const std::vector<std::string>& labels) {
    absl::flat_hash_set<std::string> set(labels.begin(), labels.end());
    const bool all = set.contains("*");
    return AccessScope(all, std::move(set));
  }

  bool Allows(absl::string_view label) const { return all_ || labels_.contains(label); }
  bool all() const { return all_; }

 private:
  AccessScope(bool all, absl::flat_hash_set<std::string> labels)
      : all_(all), labels_(std::move(labels)) {}
  bool all_;
  absl::flat_hash_set<std::string> labels_;
};

}  // namespace strata::store::core
