#include "strata/store/auth/data_plane_credential.h"

#include <algorithm>
#include <cstring>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata::store::auth {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kNonceBytes = 16;
constexpr size_t kMacBytes = 32;
constexpr size_t kFixedBytes = 1 + 8 + 1 + kNonceBytes + kMacBytes;

std::array<uint8_t, kMacBytes> Mac(const DataPlaneCredentials::Key& key, const uint8_t* data,
                                   size_t size) {
  std::array<uint8_t, kMacBytes> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data, size, mac.data(), &length);
  return mac;
}

}  // namespace

absl::StatusOr<DataPlaneCredentials> DataPlaneCredentials::Create(absl::Duration ttl) {
  Key key;
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    return absl::InternalError("RAND_bytes failed: no key for data-plane credentials");
  }
  return DataPlaneCredentials(key, ttl);
}

std::string DataPlaneCredentials::Issue(std::string_view tenant, absl::Time now) const {
  tenant = tenant.substr(0, 255);
  const uint64_t expiry =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::ToUnixMillis(now + ttl_)));
  std::string out(kFixedBytes + tenant.size(), '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  p[0] = kVersion;
  for (int i = 0; i < 8; ++i) p[1 + i] = static_cast<uint8_t>(expiry >> (8 * i));
  p[9] = static_cast<uint8_t>(tenant.size());
  std::memcpy(p + 10, tenant.data(), tenant.size());
  uint8_t* nonce = p + 10 + tenant.size();
  // A nonce that cannot be drawn stays zero: it only makes two credentials of one tenant
  // and millisecond equal, which is harmless.
  (void)RAND_bytes(nonce, static_cast<int>(kNonceBytes));
  const size_t signed_bytes = 10 + tenant.size() + kNonceBytes;
  const std::array<uint8_t, kMacBytes> mac = Mac(key_, p, signed_bytes);
  std::memcpy(p + signed_bytes, mac.data(), mac.size());
  return out;
}

absl::StatusOr<std::string> DataPlaneCredentials::Verify(absl::Span<const uint8_t> credential,
                                                         absl::Time now) const {
  if (credential.empty()) {
    return absl::UnauthenticatedError(
        "no data-plane credential (get one from Store.OpenDataPlane with a tenant's token)");
  }
  if (credential.size() < kFixedBytes || credential[0] != kVersion ||
      credential.size() != kFixedBytes + credential[9]) {
    return absl::UnauthenticatedError("malformed data-plane credential");
  }
  const size_t signed_bytes = credential.size() - kMacBytes;
  const std::array<uint8_t, kMacBytes> mac = Mac(key_, credential.data(), signed_bytes);
  if (CRYPTO_memcmp(mac.data(), credential.data() + signed_bytes, kMacBytes) != 0) {
    return absl::UnauthenticatedError(
        "data-plane credential not issued by this node (or by an earlier run of it)");
  }
  uint64_t expiry = 0;
  for (int i = 0; i < 8; ++i) expiry |= uint64_t{credential[1 + i]} << (8 * i);
  if (absl::FromUnixMillis(static_cast<int64_t>(std::min<uint64_t>(expiry, INT64_MAX))) <= now) {
    return absl::UnauthenticatedError("data-plane credential expired; get a new one");
  }
  return std::string(reinterpret_cast<const char*>(credential.data() + 10), credential[9]);
}

}  // namespace strata::store::auth
