#include "strata/store/rpc/authorizer.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata::store::rpc {

absl::StatusOr<const auth::Tenant*> Authorizer::Authorize(const grpc::ServerContext& context,
                                                          auth::Role needed,
                                                          std::string_view call) const {
  if (tenants_ == nullptr) return nullptr;
  const auto& metadata = context.client_metadata();
  const auto [first, last] = metadata.equal_range("authorization");
  if (first == last) {
    return absl::UnauthenticatedError(
        "no \"authorization: Bearer <token>\" metadata; this node requires a tenant's token");
  }
  if (std::next(first) != last) {
    return absl::UnauthenticatedError("more than one \"authorization\" metadata entry");
  }
  const std::string_view value(first->second.data(), first->second.size());
  const absl::StatusOr<std::string_view> token = auth::BearerToken(value);
  if (!token.ok()) return token.status();
  const auth::Tenant* tenant = tenants_->Authenticate(*token);
  if (tenant == nullptr) return absl::UnauthenticatedError("the token is no tenant's");
  if (needed == auth::Role::kAdmin && tenant->role != auth::Role::kAdmin) {
    return absl::PermissionDeniedError(
        absl::StrCat(std::string(call), " needs the admin role; tenant \"", tenant->name,
                     "\" has role ", std::string(auth::RoleName(tenant->role))));
  }
  return tenant;
}

}  // namespace strata::store::rpc
