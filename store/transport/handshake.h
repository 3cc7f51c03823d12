// The connection handshake's message (HELLO, WELCOME, READY): its encoding and decoding.
// messenger_impl.h draws the byte layout and the exchange; this is the codec only, kept
// apart so that it can be tested and fuzzed alone (the bytes of a HELLO come from a peer
// that is not authenticated yet). Functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace strata::store::transport {

// Kinds, flags and sizes: messenger_impl.h, "Handshake header".
inline constexpr uint8_t kHandshakeMagic = 0x48;  // 'H'
inline constexpr uint8_t kHandshakeVersion = 3;
inline constexpr uint8_t kHello = 1;
inline constexpr uint8_t kWelcome = 2;
inline constexpr uint8_t kReady = 3;
inline constexpr uint8_t kFlagDirect = 1;
inline constexpr uint8_t kFlagRefused = 2;
inline constexpr size_t kHandshakeFixedBytes = 8;

// A decoded handshake message; its views point into the decoded bytes.
struct ParsedHandshake {
  uint8_t kind = 0;
  bool direct = false;
  bool refused = false;
  std::string_view host;
  absl::Span<const uint8_t> credential;
  std::string_view worker_address;  // or the refusal's reason
};

// The message: `tail` is the worker address (HELLO, WELCOME direct) or a refusal's reason
// (WELCOME refused). REQUIRES: host and credential shorter than 64 KiB.
std::string HandshakeHeader(uint8_t kind, uint8_t flags, std::string_view host,
                            std::string_view credential, std::string_view tail);

// Decodes `h` into *out (whose views point into `h`). False when it is not a well-formed
// handshake message: bad magic or version, unknown kind, a flag the kind does not have,
// lengths past the end, a credential on anything but HELLO or longer than
// kMaxCredentialBytes.
bool ParseHandshake(absl::Span<const uint8_t> h, ParsedHandshake* out);

}  // namespace strata::store::transport
