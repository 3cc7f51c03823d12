// Authorizer: who is calling — the tenant of a gRPC call's bearer token, and whether its
// role may make the call.
//
// On a node with a tenants file every call must carry exactly one "authorization" metadata
// entry "Bearer <token>" whose token is a tenant's (auth::TenantTable::Authenticate, in
// constant time): else UNAUTHENTICATED. A call that needs the admin role (the Admin
// service) by a worker tenant is PERMISSION_DENIED. On an open node (no tenants file) every
// call is admitted, with no tenant.
//
// A caller's scope (core::AccessScope) is its tenant's `namespaces`: the engine answers
// calls outside it as for things that do not exist (issue 12, item 9).
//
// Immutable: thread-safe. The table is shared with whoever else reads it.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "grpcpp/server_context.h"
#include "strata/store/auth/tenant_table.h"
#include "strata/store/core/access_scope.h"

namespace strata::store::rpc {

class Authorizer {
 public:
  // `tenants` null: an open node.
  explicit Authorizer(std::shared_ptr<const auth::TenantTable> tenants);

  struct Caller {
    const auth::Tenant* tenant = nullptr;      // null on an open node
    const core::AccessScope* scope = nullptr;  // the tenant's namespaces; All() when open
  };
  // The caller. `call` ("Admin.Evict") names the call in PERMISSION_DENIED's message.
  absl::StatusOr<Caller> Authorize(const grpc::ServerContext& context, auth::Role needed,
                                   std::string_view call) const;
  // The scope of tenant `name` (All() on an open node); null for a name no tenant has.
  const core::AccessScope* ScopeOf(std::string_view name) const;

  bool open() const { return tenants_ == nullptr; }

 private:
  std::shared_ptr<const auth::TenantTable> tenants_;
  // scopes_[i]: the scope of tenants_->tenants()[i].
  std::vector<core::AccessScope> scopes_;
};

}  // namespace strata::store::rpc
