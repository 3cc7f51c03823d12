// Authorizer: who is calling — the tenant of a gRPC call's bearer token, and whether its
// role may make the call.
//
// On a node with a tenants file every call must carry exactly one "authorization" metadata
// entry "Bearer <token>" whose token is a tenant's (auth::TenantTable::Authenticate, in
// constant time): else UNAUTHENTICATED. A call that needs the admin role (the Admin
// service) by a worker tenant is PERMISSION_DENIED. On an open node (no tenants file) every
// call is admitted, with no tenant.
//
// Immutable: thread-safe. The table is shared with whoever else reads it.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"

#include "grpcpp/server_context.h"
#include "strata/store/auth/tenant_table.h"

namespace strata::store::rpc {

class Authorizer {
 public:
  // `tenants` null: an open node.
  explicit Authorizer(std::shared_ptr<const auth::TenantTable> tenants)
      : tenants_(std::move(tenants)) {}

  // The calling tenant (null on an open node). `call` ("Admin.Evict") names the call in
  // PERMISSION_DENIED's message.
  absl::StatusOr<const auth::Tenant*> Authorize(const grpc::ServerContext& context,
                                                auth::Role needed, std::string_view call) const;

  bool open() const { return tenants_ == nullptr; }

 private:
  std::shared_ptr<const auth::TenantTable> tenants_;
};

}  // namespace strata::store::rpc
