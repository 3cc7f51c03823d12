#include "node_engine_test_util.h"

#include <cstring>
#include <random>

#include "strata/base/status_macros.h"
#include "strata/store/core/chunk_checksum.h"

namespace strata::store::core::testing {

radix::KvLayout SmallLayout(uint32_t page_tokens) {
  return radix::KvLayout{.num_layers = 2,
                         .num_kv_heads = 1,
                         .head_dim = 8,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = page_tokens,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

radix::Namespace SmallNamespace(const std::string& tenant, const std::string& model,
                                uint32_t page_tokens) {
  return radix::Namespace::Create(tenant, model, SmallLayout(page_tokens)).value();
}

std::vector<radix::TokenId> MakeTokens(uint32_t pages, uint64_t seed, uint32_t page_tokens) {
  std::mt19937_64 rng(seed);
  std::vector<radix::TokenId> tokens(size_t{pages} * page_tokens);
  for (auto& t : tokens) t = static_cast<radix::TokenId>(rng() % 50000);
  return tokens;
}

std::vector<std::byte> MakeBytes(uint64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x5bd1e995);
  std::vector<std::byte> bytes(size);
  for (auto& b : bytes) b = static_cast<std::byte>(rng());
  return bytes;
}

BlobContent MakeBlob(const radix::Namespace& ns, uint32_t pages, uint64_t seed) {
  BlobContent blob;
  blob.tokens = MakeTokens(pages, seed, ns.layout().page_tokens);
  const radix::BlobLayout layout = radix::BlobLayout::Create(ns.layout(), pages).value();
  blob.bytes = MakeBytes(layout.TotalBytes(), seed);
  blob.checksums = ComputeChunkChecksums(layout, blob.bytes).value();
  return blob;
}

NodeEngineOptions SmallOptions(Clock* clock, uint64_t dram_bytes) {
  NodeEngineOptions options;
  options.dram_bytes = dram_bytes;
  options.dram_granule_bytes = 4096;
  options.dram_try_hugetlb = false;
  options.dram_name = "strata-test";
  options.reap_interval = absl::ZeroDuration();
  options.background_demotion = false;
  options.text_bytes = 0;  // a dropped blob leaves the index (tests of TEXT set a budget)
  // The tests reason about LRU order; other policies are exercised by name where meant.
  options.dram_policy = "lru";
  options.ssd_policy = "lru";
  options.clock = clock;
  return options;
}

PutRequest PutRequestOf(std::optional<BlobParent> parent, const BlobContent& blob) {
  PutRequest request;
  request.parent = parent;
  request.tokens = blob.tokens;
  request.bytes = blob.bytes.size();
  request.checksums = blob.checksums;
  return request;
}

absl::StatusOr<BeginPutReply> BeginBlob(NodeEngine& engine, const radix::Namespace& ns,
                                        std::optional<BlobParent> parent, const BlobContent& blob) {
  return engine.BeginPut(ns, PutRequestOf(parent, blob));
}

absl::Status SendBlob(NodeEngine& engine, uint64_t put_id, const BlobContent& blob) {
  STRATA_ASSIGN_OR_RETURN(HeldSpan target, engine.PutTarget(put_id));
  if (target.size() != blob.bytes.size()) return absl::InternalError("target size");
  const uint64_t half = blob.bytes.size() / 2;
  std::memcpy(target.data() + half, blob.bytes.data() + half, blob.bytes.size() - half);
  std::memcpy(target.data(), blob.bytes.data(), half);
  STRATA_RETURN_IF_ERROR(engine.PutReceived(put_id, half, blob.bytes.size() - half));
  STRATA_RETURN_IF_ERROR(engine.PutReceived(put_id, 0, half));
  return absl::OkStatus();
}

absl::StatusOr<CommitPutReply> PutBlob(NodeEngine& engine, const radix::Namespace& ns,
                                       std::optional<BlobParent> parent, const BlobContent& blob) {
  STRATA_ASSIGN_OR_RETURN(BeginPutReply begin, BeginBlob(engine, ns, parent, blob));
  if (begin.exists) return absl::AlreadyExistsError(begin.key.ToHex());
  STRATA_RETURN_IF_ERROR(SendBlob(engine, begin.put_id, blob));
  return engine.CommitPut(begin.put_id);
}

absl::StatusOr<std::vector<std::byte>> ReadBytes(NodeEngine& engine, uint64_t lease,
                                                 const radix::BlobKey& key, uint64_t offset,
                                                 uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(HeldSpan source, engine.ReadSource(lease, key, offset, length));
  return std::vector<std::byte>(source.data(), source.data() + source.size());
}

ReadRange WholeBlob(const radix::BlobKey& key, uint32_t pages, uint32_t layers) {
  return ReadRange{key, 0, pages, 0, layers};
}

std::unique_ptr<tiering::DramArena> SmallArena(const char* name, uint64_t capacity_bytes) {
  tiering::DramArenaOptions options;
  options.capacity_bytes = capacity_bytes;
  options.granule_bytes = 4096;
  options.try_hugetlb = false;
  options.name = name;
  return tiering::DramArena::Create(options).value();
}

TierPolicies LruTierPolicies() {
  TierPolicies p;
  p.dram = tiering::MakeEvictionPolicy("lru").value();
  p.ssd = tiering::MakeEvictionPolicy("lru").value();
  p.text = tiering::MakeEvictionPolicy("lru").value();
  p.admission = tiering::MakeAdmissionPolicy("always").value();
  return p;
}

}  // namespace strata::store::core::testing
