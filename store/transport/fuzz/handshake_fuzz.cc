// libFuzzer: the connection handshake's message (handshake.h), the first thing a listener
// reads from a peer that is not authenticated yet. Arbitrary bytes decode or are refused,
// never a crash or a read past the input; what decodes encodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/transport/handshake.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::store::transport;  // NOLINT: the codec's names
  ParsedHandshake parsed;
  if (!ParseHandshake({data, size}, &parsed)) return 0;
  const uint8_t flags = (parsed.direct ? kFlagDirect : 0) | (parsed.refused ? kFlagRefused : 0);
  const std::string again =
      HandshakeHeader(parsed.kind, flags, parsed.host,
                      std::string_view(reinterpret_cast<const char*>(parsed.credential.data()),
                                       parsed.credential.size()),
                      parsed.worker_address);
  if (again != std::string_view(reinterpret_cast<const char*>(data), size)) std::abort();
  return 0;
}
