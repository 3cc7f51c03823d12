#include "strata/store/rpc/authorizer.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata::store::rpc {

Authorizer::Authorizer(std::shared_ptr<const auth::TenantTable> tenants)
    : tenants_(std::move(tenants)) {
  if (tenants_ == nullptr) return;
  scopes_.reserve(tenants_->tenants().size());
  for (const auth::Tenant& tenant : tenants_->tenants()) {
    scopes_.push_back(core::AccessScope::Of(tenant.namespaces));
  }
}

const core::AccessScope* Authorizer::ScopeOf(std::string_view name) const {
  if (tenants_ == nullptr) return &core::AccessScope::All();
  const auth::Tenant* tenant = tenants_->Find(name);
  return tenant == nullptr ? nullptr : &scopes_[tenant - tenants_->tenants().data()];
}

absl::StatusOr<Authorizer::Caller> Authorizer::Authorize(const grpc::ServerContext& context,
                                                         auth::Role needed,
                                                         std::string_view call) const {
  if (tenants_ == nullptr) return Caller{nullptr, &core::AccessScope::All()};
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
  return Caller{tenant, &scopes_[tenant - tenants_->tenants().data()]};
}

}  // namespace strata::store::rpc
