// libFuzzer: the Mooncake request trace (JSONL) that strata-replay and strata-policy-replay
// read (ParseMooncakeTrace). Arbitrary text gives a trace or an error, never a crash; the
// first byte picks the block size and whether a partial last block is dropped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "strata/tiering/sim/mooncake_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  strata::tiering::sim::MooncakeTraceOptions options;
  options.block_tokens = 1 + (data[0] & 0x7f) * 8;
  options.drop_partial_last_block = (data[0] & 0x80) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)strata::tiering::sim::ParseMooncakeTrace(text, options);
  return 0;
}
