// libFuzzer: the canonical encoding of a namespace, as the data plane receives it in READ
// and PUT (radix::Namespace::FromCanonicalEncoding). Arbitrary bytes decode to a namespace
// or an error, never a crash; a namespace that decodes encodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "strata/radix/namespace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto ns = strata::radix::Namespace::FromCanonicalEncoding(bytes);
  if (ns.ok() && ns->CanonicalEncoding() != bytes) std::abort();
  return 0;
}
