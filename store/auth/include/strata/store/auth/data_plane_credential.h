// DataPlaneCredentials: the short-lived credentials that admit a connection to the data
// plane. The node issues one over the authenticated control plane (Store.OpenDataPlane) to
// the tenant that asked; the client presents it in its connection's HELLO; the data plane
// verifies it before anything else of the connection is acted on. Stateless: a credential
// carries its tenant and expiry under an HMAC-SHA256 with a key the node draws at start
// (so a restarted node refuses the credentials of the one before), and verifying it
// allocates nothing a peer controls.
//
// Format (little-endian):
//   offset  size  field
//   0       1     version  1
//   1       8     expiry   u64, Unix time in milliseconds
//   9       1     n        tenant name length (0: no tenants file, an open node)
//   10      n     tenant name
//   10+n    16    nonce    random
//   26+n    32    mac      HMAC-SHA256(key, bytes 0 .. 26+n)
//
// A credential may be presented any number of times until it expires; connections made
// with it stay up after. Immutable after Create: thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace strata::store::auth {

inline constexpr size_t kMaxCredentialBytes = 10 + 255 + 16 + 32;

class DataPlaneCredentials {
 public:
  using Key = std::array<uint8_t, 32>;

  // With a random key. INTERNAL when the system's random source fails.
  static absl::StatusOr<DataPlaneCredentials> Create(absl::Duration ttl);
  // With `key` (tests).
  DataPlaneCredentials(const Key& key, absl::Duration ttl) : key_(key), ttl_(ttl) {}

  // A credential for `tenant` (at most 255 bytes) valid until now + ttl.
  std::string Issue(std::string_view tenant, absl::Time now) const;
  // The tenant of a valid credential; UNAUTHENTICATED (with the reason: malformed, not
  // issued by this node, expired) otherwise.
  absl::StatusOr<std::string> Verify(absl::Span<const uint8_t> credential, absl::Time now) const;

  absl::Duration ttl() const { return ttl_; }

 private:
  Key key_;
  absl::Duration ttl_;
};

}  // namespace strata::store::auth
