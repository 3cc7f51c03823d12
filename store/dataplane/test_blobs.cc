#include "store/dataplane/test_blobs.h"

#include <cstddef>
#include <random>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"

namespace strata::store::dataplane::testing {

radix::KvLayout TestLayout(uint32_t num_layers, uint32_t head_dim) {
  return radix::KvLayout{.num_layers = num_layers,
                         .num_kv_heads = 2,
                         .head_dim = head_dim,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 16,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

radix::Namespace TestNamespace(const std::string& tenant, uint32_t num_layers, uint32_t head_dim) {
  absl::StatusOr<radix::Namespace> ns =
      radix::Namespace::Create(tenant, "org/test-model", TestLayout(num_layers, head_dim));
  CHECK(ns.ok()) << ns.status();
  return *std::move(ns);
}

BlobContent MakeBlob(const radix::Namespace& ns, uint32_t pages, uint64_t seed) {
  std::mt19937_64 rng(seed);
  BlobContent blob;
  blob.tokens.resize(size_t{pages} * ns.layout().page_tokens);
  for (radix::TokenId& token : blob.tokens) token = static_cast<radix::TokenId>(rng() % 50000);
  const absl::StatusOr<radix::BlobLayout> layout = radix::BlobLayout::Create(ns.layout(), pages);
  CHECK(layout.ok()) << layout.status();
  blob.bytes.resize(layout->TotalBytes());
  size_t i = 0;
  for (; i + 8 <= blob.bytes.size(); i += 8) {
    const uint64_t v = rng();
    for (int b = 0; b < 8; ++b) blob.bytes[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  for (; i < blob.bytes.size(); ++i) blob.bytes[i] = static_cast<uint8_t>(rng());
  const absl::Span<const std::byte> bytes(reinterpret_cast<const std::byte*>(blob.bytes.data()),
                                          blob.bytes.size());
  absl::StatusOr<std::vector<uint64_t>> checksums = core::ComputeChunkChecksums(*layout, bytes);
  CHECK(checksums.ok()) << checksums.status();
  blob.checksums = *std::move(checksums);
  return blob;
}

core::PutRequest PutRequestFor(const BlobContent& blob) {
  core::PutRequest request;
  request.tokens = blob.tokens;
  request.bytes = blob.bytes.size();
  request.checksums = blob.checksums;
  return request;
}

core::NodeEngineOptions EngineOptions(core::Clock* clock, uint64_t dram_bytes) {
  core::NodeEngineOptions options;
  options.dram_bytes = dram_bytes;
  options.dram_granule_bytes = uint64_t{64} << 10;
  options.dram_try_hugetlb = false;
  options.dram_name = "strata-dataplane-test";
  options.reap_interval = absl::ZeroDuration();
  options.clock = clock;
  return options;
}

absl::StatusOr<radix::BlobKey> PutOverDataPlane(core::NodeEngine& engine, TestClient& client,
                                                const radix::Namespace& ns, const BlobContent& blob,
                                                uint32_t pieces) {
  STRATA_ASSIGN_OR_RETURN(core::BeginPutReply begin, engine.BeginPut(ns, PutRequestFor(blob)));
  if (begin.exists) return absl::AlreadyExistsError(begin.key.ToHex());
  const uint64_t size = blob.bytes.size();
  for (uint32_t i = pieces; i-- > 0;) {
    const uint64_t begin_byte = size * i / pieces;
    const uint64_t end_byte = size * (i + 1) / pieces;
    const absl::Status put =
        client.Put(begin.put_id, begin_byte,
                   absl::MakeConstSpan(blob.bytes).subspan(begin_byte, end_byte - begin_byte));
    if (!put.ok()) {
      return absl::Status(put.code(), absl::StrCat("PUT_DATA piece ", i, ": ", put.message()));
    }
  }
  STRATA_ASSIGN_OR_RETURN(core::CommitPutReply commit, engine.CommitPut(begin.put_id));
  return commit.key;
}

absl::StatusOr<core::ReadReply> ReadPages(core::NodeEngine& engine, const radix::Namespace& ns,
                                          const radix::BlobKey& key, uint32_t first_page,
                                          uint32_t num_pages) {
  const core::ReadRange range{.blob = key,
                              .first_page = first_page,
                              .num_pages = num_pages,
                              .layer_begin = 0,
                              .layer_end = ns.layout().num_layers};
  return engine.Read(ns, {&range, 1});
}

std::vector<transport::wire::ByteRange> WireRanges(const core::ReadRangeReply& range) {
  std::vector<transport::wire::ByteRange> out;
  for (const radix::ByteRange& r : range.layer_ranges) {
    out.push_back({.offset = r.offset, .length = r.length});
  }
  return out;
}

std::pair<transport::wire::PutHeader, std::vector<uint8_t>> PutMessage(const radix::Namespace& ns,
                                                                       const BlobContent& blob) {
  const core::PutRequest request = PutRequestFor(blob);
  const std::string encoding = ns.CanonicalEncoding();
  const transport::wire::PutHeader header{
      .bytes = blob.bytes.size(),
      .token_count = static_cast<uint32_t>(request.tokens.size()),
      .ns_bytes = static_cast<uint32_t>(encoding.size()),
      .checksum_count = static_cast<uint32_t>(request.checksums.size())};
  return {header, transport::wire::EncodePutPayload(
                      header,
                      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(encoding.data()),
                                          encoding.size()),
                      {}, {}, request.tokens, request.checksums)};
}

}  // namespace strata::store::dataplane::testing
