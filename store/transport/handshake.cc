#include "store/transport/handshake.h"

#include "strata/store/transport/messenger.h"

namespace strata::store::transport {

std::string HandshakeHeader(uint8_t kind, uint8_t flags, std::string_view host,
                            std::string_view credential, std::string_view tail) {
  std::string header(kHandshakeFixedBytes, '\0');
  header[0] = static_cast<char>(kHandshakeMagic);
  header[1] = static_cast<char>(kHandshakeVersion);
  header[2] = static_cast<char>(kind);
  header[3] = static_cast<char>(flags);
  header[4] = static_cast<char>(host.size() & 0xff);
  header[5] = static_cast<char>(host.size() >> 8);
  header[6] = static_cast<char>(credential.size() & 0xff);
  header[7] = static_cast<char>(credential.size() >> 8);
  header.append(host);
  header.append(credential);
  header.append(tail);
  return header;
}

bool ParseHandshake(absl::Span<const uint8_t> h, ParsedHandshake* out) {
  if (h.size() < kHandshakeFixedBytes || h[0] != kHandshakeMagic || h[1] != kHandshakeVersion ||
      (h[2] != kHello && h[2] != kWelcome && h[2] != kReady)) {
    return false;
  }
  const uint8_t allowed = h[2] == kWelcome ? (kFlagDirect | kFlagRefused) : kFlagDirect;
  if ((h[3] & ~allowed) != 0 || (h[3] & kFlagDirect && h[3] & kFlagRefused)) return false;
  const size_t host_len = h[4] | (size_t{h[5]} << 8);
  const size_t credential_len = h[6] | (size_t{h[7]} << 8);
  if (credential_len > kMaxCredentialBytes || (credential_len != 0 && h[2] != kHello)) {
    return false;
  }
  if (kHandshakeFixedBytes + host_len + credential_len > h.size()) return false;
  const char* bytes = reinterpret_cast<const char*>(h.data());
  out->kind = h[2];
  out->direct = (h[3] & kFlagDirect) != 0;
  out->refused = (h[3] & kFlagRefused) != 0;
  out->host = std::string_view(bytes + kHandshakeFixedBytes, host_len);
  out->credential = h.subspan(kHandshakeFixedBytes + host_len, credential_len);
  const size_t tail = kHandshakeFixedBytes + host_len + credential_len;
  out->worker_address = std::string_view(bytes + tail, h.size() - tail);
  return true;
}

}  // namespace strata::store::transport
