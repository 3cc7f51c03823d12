// libFuzzer: each strata.v1 request the node converts into an engine request
// (request_convert.h) — the bytes a gRPC client sends, parsed as the message and converted.
// The first byte picks the message; the rest is its wire encoding. Anything parses or not
// and converts or is INVALID_ARGUMENT, never a crash or a read past a limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "strata/proto/protocol_internal.h"
#include "strata/store/rpc/request_convert.h"

namespace {

template <typename Message, typename Convert>
void Try(const uint8_t* data, size_t size, Convert convert) {
  Message message;
  if (!message.ParseFromArray(data, static_cast<int>(size))) return;
  const auto converted = convert(message);
  if (!converted.ok() && converted.status().code() != absl::StatusCode::kInvalidArgument) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rpc = strata::store::rpc;
  namespace v1 = strata::v1;
  if (size == 0) return 0;
  const uint8_t which = data[0] % 6;
  ++data;
  --size;
  switch (which) {
    case 0:
      Try<v1::BeginPutRequest>(data, size, rpc::PutRequestFromProto);
      break;
    case 1:
      Try<v1::ReadRequest>(data, size, rpc::ReadRequestFromProto);
      break;
    case 2:
      Try<v1::ListRequest>(data, size, rpc::ListRequestFromProto);
      break;
    case 3:
      Try<v1::PrefetchRequest>(data, size, rpc::PrefetchRequestFromProto);
      break;
    case 4:
      Try<v1::RequestRebuildRequest>(data, size, rpc::RequestRebuildFromProto);
      break;
    case 5:
      Try<v1::PullRebuildTasksRequest>(data, size, rpc::PullRebuildTasksFromProto);
      break;
  }
  return 0;
}
