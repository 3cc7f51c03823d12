#include "strata/store/auth/tenant_table.h"

#include <cstring>
#include <utility>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "nlohmann/json.hpp"
#include "strata/base/absl_view.h"
#include "strata/base/byte_size.h"
#include "strata/base/read_file.h"
#include "strata/base/status_macros.h"

namespace strata::store::auth {
namespace {

constexpr size_t kMaxNameBytes = 64;
constexpr size_t kMaxNamespaceLabelBytes = 255;

absl::Status FileError(std::string_view path, std::string_view where, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(path), ": ", base::AbslView(where),
                                                 where.empty() ? "" : ": ", base::AbslView(why)));
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

bool ParseHash(std::string_view hex, TokenHash* out) {
  if (hex.size() != 2 * out->size()) return false;
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  const std::string bytes = absl::HexStringToBytes(base::AbslView(hex));
  std::memcpy(out->data(), bytes.data(), out->size());
  return true;
}

// "quota": {"dram": <bytes>, "ssd": <bytes>}, each a byte size string or an integer > 0.
absl::Status ParseQuota(const nlohmann::json& quota, std::string_view path,
                        const std::string& where, Tenant* tenant) {
  if (!quota.is_object() || quota.empty()) {
    return FileError(path, where, "quota must be an object with \"dram\" and/or \"ssd\"");
  }
  for (const auto& [tier, value] : quota.items()) {
    uint64_t* out = tier == "dram"  ? &tenant->dram_quota_bytes
                    : tier == "ssd" ? &tenant->ssd_quota_bytes
                                    : nullptr;
    if (out == nullptr) {
      return FileError(path, where,
                       absl::StrCat("quota: unknown tier \"", tier, "\" (expected dram, ssd)"));
    }
    absl::StatusOr<uint64_t> bytes = absl::InvalidArgumentError("not a byte size");
    if (value.is_number_unsigned()) {
      bytes = value.get<uint64_t>();
    } else if (value.is_string()) {
      bytes = base::ParseBytes(value.get<std::string>());
    }
    if (!bytes.ok() || *bytes == 0) {
      return FileError(
          path, where,
          absl::StrCat("quota.", tier,
                       " must be a byte size > 0 (\"8GiB\", \"500MB\" or an integer)"));
    }
    *out = *bytes;
  }
  return absl::OkStatus();
}

absl::StatusOr<Tenant> ParseTenant(const nlohmann::json& entry, std::string_view path,
                                   const std::string& where) {
  if (!entry.is_object()) return FileError(path, where, "not an object");
  Tenant tenant;
  bool has_name = false, has_role = false, has_hash = false;
  for (const auto& [key, value] : entry.items()) {
    if (key == "name") {
      if (!value.is_string() || !ValidName(value.get<std::string>())) {
        return FileError(path, where, "name must be 1..64 of [A-Za-z0-9._-]");
      }
      tenant.name = value.get<std::string>();
      has_name = true;
    } else if (key == "role") {
      const std::string role = value.is_string() ? value.get<std::string>() : "";
      if (role == "worker") {
        tenant.role = Role::kWorker;
      } else if (role == "admin") {
        tenant.role = Role::kAdmin;
      } else {
        return FileError(path, where, "role must be \"worker\" or \"admin\"");
      }
      has_role = true;
    } else if (key == "token_sha256") {
      if (!value.is_string() || !ParseHash(value.get<std::string>(), &tenant.token_sha256)) {
        return FileError(path, where, "token_sha256 must be 64 hex digits (sha256 of the token)");
      }
      has_hash = true;
    } else if (key == "namespaces") {
      if (!value.is_array() || value.empty()) {
        return FileError(path, where, "namespaces must be a non-empty array of strings");
      }
      for (const nlohmann::json& ns : value) {
        if (!ns.is_string() || ns.get<std::string>().empty() ||
            ns.get<std::string>().size() > kMaxNamespaceLabelBytes) {
          return FileError(
              path, where,
              "namespaces must hold strings of 1..255 bytes (Namespace.tenant values)");
        }
        tenant.namespaces.push_back(ns.get<std::string>());
      }
    } else if (key == "quota") {
      STRATA_RETURN_IF_ERROR(ParseQuota(value, path, where, &tenant));
    } else {
      return FileError(path, where,
                       absl::StrCat("unknown key \"", key,
                                    "\" (expected name, role, token_sha256, namespaces, quota)"));
    }
  }
  if (!has_name || !has_role || !has_hash) {
    return FileError(path, where, "name, role and token_sha256 are required");
  }
  if (tenant.namespaces.empty()) tenant.namespaces.push_back(tenant.name);
  return tenant;
}

}  // namespace

std::string_view RoleName(Role role) { return role == Role::kAdmin ? "admin" : "worker"; }

TokenHash Sha256(std::string_view bytes) {
  TokenHash hash;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), hash.data());
  return hash;
}

std::string HashHex(const TokenHash& hash) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
}

absl::StatusOr<std::string_view> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(base::AbslView(authorization.substr(0, kScheme.size())),
                              base::AbslView(kScheme))) {
    return absl::UnauthenticatedError("authorization metadata is not \"Bearer <token>\"");
  }
  return authorization.substr(kScheme.size());
}

absl::StatusOr<TenantTable> TenantTable::Parse(std::string_view json, std::string_view path) {
  if (json.size() > kMaxTenantsFileBytes) {
    return FileError(path, "", absl::StrCat("larger than ", kMaxTenantsFileBytes, " bytes"));
  }
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return FileError(path, "", "not valid JSON");
  if (!doc.is_object() || doc.size() != 1 || !doc.contains("tenants") ||
      !doc["tenants"].is_array()) {
    return FileError(path, "", "expected {\"tenants\": [...]} and nothing else");
  }
  const nlohmann::json& list = doc["tenants"];
  if (list.empty()) return FileError(path, "tenants", "empty: nobody could call the node");
  std::vector<Tenant> tenants;
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<std::string> hashes;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = absl::StrCat("tenants[", i, "]");
    absl::StatusOr<Tenant> tenant = ParseTenant(list[i], path, where);
    if (!tenant.ok()) return tenant.status();
    if (!names.insert(tenant->name).second) {
      return FileError(path, where, absl::StrCat("tenant \"", tenant->name, "\" given twice"));
    }
    if (!hashes.insert(HashHex(tenant->token_sha256)).second) {
      return FileError(path, where, "token_sha256 is another tenant's too");
    }
    tenants.push_back(*std::move(tenant));
  }
  return TenantTable(std::move(tenants));
}

absl::StatusOr<TenantTable> TenantTable::Load(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFileToString(path, kMaxTenantsFileBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("tenants_file ", text.status().message()));
  }
  return Parse(*text, path);
}

const Tenant* TenantTable::Authenticate(std::string_view token) const {
  const TokenHash presented = Sha256(token);
  const Tenant* found = nullptr;
  for (const Tenant& tenant : tenants_) {
    const bool equal =
        CRYPTO_memcmp(presented.data(), tenant.token_sha256.data(), presented.size()) == 0;
    // No branch on the secret comparison's outcome beyond this select.
    found = equal ? &tenant : found;
  }
  return token.size() >= kMinTokenBytes ? found : nullptr;
}

const Tenant* TenantTable::Find(std::string_view name) const {
  for (const Tenant& tenant : tenants_) {
    if (tenant.name == name) return &tenant;
  }
  return nullptr;
}

}  // namespace strata::store::auth
