// libFuzzer: the tenants file (TenantTable::Parse), which an operator writes and the node
// reads at start. Arbitrary bytes parse to a table or an INVALID_ARGUMENT, never a crash;
// a table that parses holds only what the contract promises (non-empty unique names, a role,
// at least one namespace each), and a token authenticates only to the tenant whose hash it has.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "strata/store/auth/tenant_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using strata::store::auth::TenantTable;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<TenantTable> table = TenantTable::Parse(text, "fuzz.json");
  if (!table.ok()) {
    if (table.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  std::set<std::string> names;
  for (const strata::store::auth::Tenant& tenant : table->tenants()) {
    if (tenant.name.empty() || tenant.namespaces.empty()) std::abort();
    if (!names.insert(tenant.name).second) std::abort();
    if (table->Find(tenant.name) != &tenant) std::abort();
  }
  // The input itself as a token: it authenticates to a tenant only if that tenant's hash is
  // the input's hash.
  const strata::store::auth::Tenant* found = table->Authenticate(text);
  if (found != nullptr && found->token_sha256 != strata::store::auth::Sha256(text)) std::abort();
  return 0;
}
