#include "strata/testing/wire_requests.h"

#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/prefix_hash.h"

namespace strata::testing {

radix::KvLayout TinyLayout(uint32_t num_layers) {
  return radix::KvLayout{.num_layers = num_layers,
                         .num_kv_heads = 1,
                         .head_dim = 4,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 4,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

radix::Namespace TinyNamespace(const std::string& tenant, const std::string& model,
                               uint32_t num_layers) {
  return radix::Namespace::Create(tenant, model, TinyLayout(num_layers)).value();
}

v1::Namespace ToWire(const radix::Namespace& ns) {
  v1::Namespace wire;
  proto::ToProto(ns, &wire);
  return wire;
}

v1::BlobKey ToWire(const radix::BlobKey& key) {
  v1::BlobKey wire;
  proto::ToProto(key, &wire);
  return wire;
}

radix::BlobKey FromWire(const v1::BlobKey& key) {
  return radix::BlobKey{.hash = {.hi = key.hi(), .lo = key.lo()}};
}

std::vector<uint32_t> TokenRun(uint32_t first, uint32_t count) {
  std::vector<uint32_t> tokens(count);
  for (uint32_t i = 0; i < count; ++i) tokens[i] = first + i;
  return tokens;
}

v1::BeginPutRequest BeginPutFor(const radix::Namespace& ns, absl::Span<const uint32_t> tokens,
                                absl::Span<const uint64_t> checksums) {
  v1::BeginPutRequest request;
  *request.mutable_ns() = ToWire(ns);
  proto::TokensToProto(tokens, request.mutable_tokens());
  const uint64_t pages = tokens.size() / ns.layout().page_tokens;
  request.set_bytes(pages * ns.layout().BytesPerPage());
  if (checksums.empty()) {
    request.mutable_chunk_checksums()->Resize(static_cast<int>(pages * ns.layout().num_layers), 0);
  } else {
    proto::ChecksumsToProto(checksums, request.mutable_chunk_checksums());
  }
  return request;
}

radix::BlobKey KeyFromRoot(const radix::Namespace& ns, absl::Span<const uint32_t> tokens) {
  return radix::BlobKey{
      .hash = radix::PrefixHashAt(radix::NamespaceHash(ns), tokens, ns.layout().page_tokens)};
}

}  // namespace strata::testing
