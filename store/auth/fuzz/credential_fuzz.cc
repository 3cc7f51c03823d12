// libFuzzer: data-plane credentials (DataPlaneCredentials), which any process that reaches
// the data-plane port can send in a HELLO before it is authenticated. Arbitrary bytes are
// refused (UNAUTHENTICATED) without a crash; a credential the node issued verifies to its
// tenant, and the same credential with any one bit flipped does not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/time/time.h"

#include "strata/store/auth/data_plane_credential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using strata::store::auth::DataPlaneCredentials;
  static const DataPlaneCredentials* issuer =
      new DataPlaneCredentials(DataPlaneCredentials::Key{7, 7, 7}, absl::Minutes(5));
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  // As presented by a peer.
  const absl::StatusOr<std::string> presented = issuer->Verify({data, size}, now);
  if (presented.ok() || presented.status().code() != absl::StatusCode::kUnauthenticated) {
    std::abort();  // forging an HMAC-SHA256 by fuzzing would be news
  }
  // As a tenant name (its first 255 bytes): issue, verify, flip one bit.
  if (size == 0) return 0;
  const std::string tenant(reinterpret_cast<const char*>(data), size < 255 ? size : 255);
  std::string credential = issuer->Issue(tenant, now);
  const absl::StatusOr<std::string> verified =
      issuer->Verify({reinterpret_cast<const uint8_t*>(credential.data()), credential.size()}, now);
  if (!verified.ok() || *verified != tenant) std::abort();
  const size_t bit = (static_cast<size_t>(data[0]) * 131 + size) % (credential.size() * 8);
  credential[bit / 8] = static_cast<char>(credential[bit / 8] ^ (1 << (bit % 8)));
  if (issuer->Verify({reinterpret_cast<const uint8_t*>(credential.data()), credential.size()}, now)
          .ok()) {
    std::abort();
  }
  return 0;
}
