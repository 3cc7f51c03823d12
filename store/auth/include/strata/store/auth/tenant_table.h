// TenantTable: who may call a node — the tenants file, read once at start.
//
// A tenant is a name, a role, the SHA-256 of its bearer token (the token itself is never
// stored by the node) and the namespaces it may use. The file is JSON:
//
//   {"tenants": [
//     {"name": "acme", "role": "worker",
//      "token_sha256": "<64 hex digits: sha256 of the token's bytes>",
//      "namespaces": ["acme", "shared-prompts"],
//      "quota": {"dram": "8GiB", "ssd": "200GiB"}},
//     {"name": "ops", "role": "admin", "token_sha256": "<64 hex digits>"}
//   ]}
//
//   name          1..64 of [A-Za-z0-9._-]; unique
//   role          "worker" (the Store service) or "admin" (the Store and Admin services)
//   token_sha256  lowercase or uppercase hex; unique (two tenants cannot share a token)
//   namespaces    the Namespace.tenant values this tenant may use (optional; default: its
//                 own name). A value listed by several tenants is shared by them.
//   quota         byte quotas per tier, "dram" and/or "ssd" (optional; a byte size as the
//                 options take it — "8GiB", "500MB" — or an integer; > 0): the blobs of
//                 the namespaces labelled with the tenant's name may hold at most this much
//                 of the tier (core::TenantQuota). Shared labels named after no tenant have
//                 no quota.
//
// Any other key, a duplicate, a missing field or an empty list is INVALID_ARGUMENT naming
// the file and the entry. Tokens should be at least 32 random bytes, e.g.
// `openssl rand -hex 32`, hashed with `printf %s "$TOKEN" | sha256sum`; a token shorter than
// 16 bytes never authenticates.
//
// Authenticate compares the presented token's hash against every tenant's in constant time
// (CRYPTO_memcmp, no early exit), so its time does not depend on which tenant, if any,
// matched or on how many bytes did.
//
// Immutable after construction: every method is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::store::auth {

enum class Role { kWorker, kAdmin };

std::string_view RoleName(Role role);

using TokenHash = std::array<uint8_t, 32>;

struct Tenant {
  std::string name;
  Role role = Role::kWorker;
  TokenHash token_sha256{};
  std::vector<std::string> namespaces;  // never empty once parsed
  uint64_t dram_quota_bytes = 0;        // 0: none
  uint64_t ssd_quota_bytes = 0;         // 0: none
};

// Tokens shorter than this never authenticate.
inline constexpr size_t kMinTokenBytes = 16;
// The tenants file is at most this large.
inline constexpr size_t kMaxTenantsFileBytes = size_t{4} << 20;

class TenantTable {
 public:
  // Parses the file's text; `path` names it in errors.
  static absl::StatusOr<TenantTable> Parse(std::string_view json, std::string_view path);
  // Reads and parses `path`. NOT_FOUND / PERMISSION_DENIED from opening it.
  static absl::StatusOr<TenantTable> Load(const std::string& path);

  // The tenant whose token `token` is, or null.
  const Tenant* Authenticate(std::string_view token) const;
  // The tenant named `name`, or null.
  const Tenant* Find(std::string_view name) const;

  const std::vector<Tenant>& tenants() const { return tenants_; }

 private:
  explicit TenantTable(std::vector<Tenant> tenants) : tenants_(std::move(tenants)) {}
  std::vector<Tenant> tenants_;
};

// SHA-256 of `bytes`.
TokenHash Sha256(std::string_view bytes);
// Lowercase hex of `hash`.
std::string HashHex(const TokenHash& hash);

// The token of an "authorization" header value "Bearer <token>" (scheme case-insensitive,
// one space); UNAUTHENTICATED when it has another form.
absl::StatusOr<std::string_view> BearerToken(std::string_view authorization);

}  // namespace strata::store::auth
