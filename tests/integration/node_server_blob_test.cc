// The calls that need committed blobs, end to end over a real gRPC channel: Match, Read,
// RenewLease, Release, Stat, List pagination, Pin/Unpin/Delete, Evict, DATA_LOSS, layout
// mismatch. It runs the node's NodeServer in-process and writes each put's bytes through
// the engine exactly as the data plane does (PutTarget, PutReceived), so it needs no UCX
// client; every other step goes over gRPC.
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/grpc_limits.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/store/node/node_server.h"
#include "strata/testing/node_process.h"
#include "strata/testing/temp_dir.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::node_server_blob_test {

using strata::testing::BeginPutFor;
using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::FromWire;
using strata::testing::KeyFromRoot;
using strata::testing::ScopedTempDir;
using strata::testing::TinyNamespace;
using strata::testing::TokenRun;
using strata::testing::ToWire;

namespace {

struct PutBlob {
  radix::BlobKey key;
  std::vector<std::byte> bytes;
  std::vector<uint64_t> checksums;
};

class NodeServerBlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::node::NodeConfig config;
    config.grpc_listen = "127.0.0.1:0";
    config.dataplane_listen = "127.0.0.1:0";
    config.http_listen = "127.0.0.1:0";
    config.dram_bytes = uint64_t{64} << 20;
    config.data_dir = dir_;
    absl::StatusOr<std::unique_ptr<store::node::NodeServer>> server =
        store::node::NodeServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    grpc::ChannelArguments args;
    proto::ApplyMessageLimits(&args);
    auto channel = grpc::CreateCustomChannel(server_->grpc_address(),
                                             grpc::InsecureChannelCredentials(), args);
    store_ = v1::Store::NewStub(channel);
    admin_ = v1::Admin::NewStub(channel);
  }
  void TearDown() override { server_.reset(); }

  // BeginPut over gRPC, bytes through the engine (the data plane's part), CommitPut over
  // gRPC. `corrupt` flips one byte after the checksums were computed.
  absl::StatusOr<PutBlob> Put(const radix::Namespace& ns, const std::vector<uint32_t>& tokens,
                              std::optional<v1::Parent> parent = std::nullopt,
                              bool corrupt = false) {
    const uint32_t pages = static_cast<uint32_t>(tokens.size() / ns.layout().page_tokens);
    PutBlob blob;
    blob.bytes.resize(pages * ns.layout().BytesPerPage());
    for (size_t i = 0; i < blob.bytes.size(); ++i) {
      blob.bytes[i] = static_cast<std::byte>((i * 131 + tokens[0] * 7) & 0xFF);
    }
    absl::StatusOr<radix::BlobLayout> layout = radix::BlobLayout::Create(ns.layout(), pages);
    if (!layout.ok()) return layout.status();
    absl::StatusOr<std::vector<uint64_t>> checksums =
        store::core::ComputeChunkChecksums(*layout, blob.bytes);
    if (!checksums.ok()) return checksums.status();
    blob.checksums = *checksums;

    v1::BeginPutRequest request = BeginPutFor(ns, tokens, blob.checksums);
    if (parent.has_value()) *request.mutable_parent() = *parent;
    v1::BeginPutResponse begun;
    absl::Status s = Call(store_->BeginPut(ContextWithDeadline().get(), request, &begun));
    if (!s.ok()) return s;
    if (begun.exists()) return absl::AlreadyExistsError("exists");
    {
      absl::StatusOr<store::core::HeldSpan> target = server_->engine().PutTarget(begun.put_id());
      if (!target.ok()) return target.status();
      std::memcpy(target->data(), blob.bytes.data(), blob.bytes.size());
      if (corrupt) target->data()[blob.bytes.size() / 2] ^= std::byte{1};
    }
    s = server_->engine().PutReceived(begun.put_id(), 0, blob.bytes.size());
    if (!s.ok()) return s;
    v1::CommitPutRequest commit;
    commit.set_put_id(begun.put_id());
    v1::CommitPutResponse committed;
    s = Call(store_->CommitPut(ContextWithDeadline().get(), commit, &committed));
    if (!s.ok()) return s;
    blob.key = FromWire(committed.key());
    if (blob.key != FromWire(begun.key())) return absl::InternalError("key changed at commit");
    if (committed.indexed_pages() != pages) return absl::InternalError("not all pages indexed");
    return blob;
  }

  absl::StatusOr<v1::MatchResponse> Match(const radix::Namespace& ns,
                                          const std::vector<uint32_t>& tokens) {
    v1::MatchRequest request;
    *request.mutable_ns() = ToWire(ns);
    proto::TokensToProto(tokens, request.mutable_tokens());
    v1::MatchResponse response;
    absl::Status s = Call(store_->Match(ContextWithDeadline().get(), request, &response));
    if (!s.ok()) return s;
    return response;
  }

  absl::StatusOr<v1::ReadResponse> Read(const radix::Namespace& ns, const radix::BlobKey& key,
                                        uint32_t first_page, uint32_t num_pages,
                                        uint32_t layer_begin, uint32_t layer_end) {
    v1::ReadRequest request;
    *request.mutable_ns() = ToWire(ns);
    v1::ReadRange* range = request.add_ranges();
    *range->mutable_blob() = ToWire(key);
    range->set_first_page(first_page);
    range->set_num_pages(num_pages);
    range->set_layer_begin(layer_begin);
    range->set_layer_end(layer_end);
    v1::ReadResponse response;
    absl::Status s = Call(store_->Read(ContextWithDeadline().get(), request, &response));
    if (!s.ok()) return s;
    return response;
  }

  absl::Status Release(uint64_t lease_id) {
    v1::ReleaseRequest request;
    request.set_lease_id(lease_id);
    v1::ReleaseResponse response;
    return Call(store_->Release(ContextWithDeadline().get(), request, &response));
  }

  absl::StatusOr<v1::BlobInfo> Stat(const radix::BlobKey& key, bool tokens = false) {
    v1::StatRequest request;
    *request.mutable_key() = ToWire(key);
    request.set_include_tokens(tokens);
    v1::StatResponse response;
    absl::Status s = Call(store_->Stat(ContextWithDeadline().get(), request, &response));
    if (!s.ok()) return s;
    return response.blob();
  }

  ScopedTempDir temp_dir_{"strata-node-blob-test"};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<store::node::NodeServer> server_;
  std::unique_ptr<v1::Store::Stub> store_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

TEST_F(NodeServerBlobTest, PutMatchReadRenewRelease) {
  const radix::Namespace ns = TinyNamespace("reader");
  const std::vector<uint32_t> tokens = TokenRun(10, 12);  // 3 pages
  ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(ns, tokens));
  EXPECT_EQ(blob.key, KeyFromRoot(ns, tokens));

  ASSERT_OK_AND_ASSIGN(v1::MatchResponse match, Match(ns, TokenRun(10, 14)));  // + 2 extra
  EXPECT_EQ(match.matched_pages(), 3u);
  ASSERT_EQ(match.segments_size(), 1);
  EXPECT_EQ(FromWire(match.segments(0).blob()), blob.key);
  EXPECT_EQ(match.segments(0).page_count(), 3u);
  EXPECT_EQ(match.segments(0).blob_pages(), 3u);
  EXPECT_EQ(match.segments(0).tier(), v1::TIER_DRAM);

  // Pages [1, 3) of layer 1: one layer range, two chunks.
  ASSERT_OK_AND_ASSIGN(v1::ReadResponse read, Read(ns, blob.key, 1, 2, 1, 2));
  EXPECT_NE(read.lease_id(), 0u);
  EXPECT_GT(read.expires_in_ms(), 25000u);  // default lease TTL 30 s
  EXPECT_LE(read.expires_in_ms(), 30000u);
  EXPECT_EQ(read.data_plane().ucx_address(), server_->data_plane_address());
  ASSERT_EQ(read.grants_size(), 1);
  const v1::ReadGrant& grant = read.grants(0);
  const uint64_t chunk = ns.layout().BytesPerLayerPage();
  EXPECT_EQ(FromWire(grant.blob()), blob.key);
  EXPECT_EQ(grant.chunk_bytes(), chunk);
  EXPECT_EQ(grant.blob_bytes(), blob.bytes.size());
  ASSERT_EQ(grant.layer_ranges_size(), 1);
  EXPECT_EQ(grant.layer_ranges(0).offset(), (1 * 3 + 1) * chunk);  // layer 1, page 1
  EXPECT_EQ(grant.layer_ranges(0).length(), 2 * chunk);
  ASSERT_EQ(grant.chunk_checksums_size(), 2);
  EXPECT_EQ(grant.chunk_checksums(0), blob.checksums[store::core::ChunkIndex(1, 1, 3)]);
  EXPECT_EQ(grant.chunk_checksums(1), blob.checksums[store::core::ChunkIndex(1, 2, 3)]);
  {
    // What the data plane would send for that range is the bytes that were put.
    ASSERT_OK_AND_ASSIGN(
        store::core::HeldSpan source,
        server_->engine().ReadSource(read.lease_id(), blob.key, grant.layer_ranges(0).offset(),
                                     grant.layer_ranges(0).length()));
    EXPECT_EQ(std::memcmp(source.data(), blob.bytes.data() + grant.layer_ranges(0).offset(),
                          source.size()),
              0);
  }

  v1::RenewLeaseRequest renew;
  renew.set_lease_id(read.lease_id());
  renew.set_ttl_ms(5000);
  v1::RenewLeaseResponse renewed;
  ASSERT_OK(Call(store_->RenewLease(ContextWithDeadline().get(), renew, &renewed)));
  EXPECT_GT(renewed.expires_in_ms(), 4000u);
  EXPECT_LE(renewed.expires_in_ms(), 5000u);
  ASSERT_OK_AND_ASSIGN(v1::BlobInfo leased, Stat(blob.key));
  EXPECT_EQ(leased.leases(), 1u);
  EXPECT_EQ(leased.hits(), 1u);
  ASSERT_OK(Release(read.lease_id()));
  EXPECT_CODE(Release(read.lease_id()), absl::StatusCode::kNotFound);
  EXPECT_CODE(Call(store_->RenewLease(ContextWithDeadline().get(), renew, &renewed)),
              absl::StatusCode::kNotFound);
}

TEST_F(NodeServerBlobTest, ReadErrorsWrongLayoutPastTheEndOtherTenant) {
  const radix::Namespace ns = TinyNamespace("layouts");
  ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(ns, TokenRun(0, 8)));  // 2 pages, 2 layers
  const radix::Namespace other_layout = TinyNamespace("layouts", "org/tiny", /*num_layers=*/3);
  EXPECT_CODE(Read(other_layout, blob.key, 0, 1, 0, 1), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(Read(ns, blob.key, 1, 2, 0, 2), absl::StatusCode::kOutOfRange);  // page 2
  EXPECT_CODE(Read(ns, blob.key, 0, 1, 0, 3), absl::StatusCode::kOutOfRange);  // layer 2
  EXPECT_CODE(Read(TinyNamespace("someone-else"), blob.key, 0, 1, 0, 1),
              absl::StatusCode::kNotFound);
  // A put of the same blob again transfers nothing.
  v1::BeginPutResponse again;
  ASSERT_OK(
      Call(store_->BeginPut(ContextWithDeadline().get(), BeginPutFor(ns, TokenRun(0, 8)), &again)));
  EXPECT_TRUE(again.exists());
  EXPECT_EQ(FromWire(again.key()), blob.key);
}

TEST_F(NodeServerBlobTest, StatShowsTheRecordAndChainedBlobsMatchAsSegments) {
  const radix::Namespace ns = TinyNamespace("stat");
  ASSERT_OK_AND_ASSIGN(PutBlob first, Put(ns, TokenRun(0, 12)));
  v1::Parent parent;
  *parent.mutable_key() = ToWire(first.key);
  parent.set_pages(3);
  ASSERT_OK_AND_ASSIGN(PutBlob second, Put(ns, TokenRun(12, 8), parent));
  const absl::Time before = absl::Now() - absl::Seconds(60);

  ASSERT_OK_AND_ASSIGN(v1::BlobInfo info, Stat(second.key, /*tokens=*/true));
  EXPECT_EQ(FromWire(info.key()), second.key);
  EXPECT_EQ(info.ns().tenant(), "stat");
  EXPECT_EQ(info.ns().layout().num_layers(), 2u);
  const radix::PrefixHash h0 = radix::NamespaceHash(ns);
  EXPECT_EQ(info.namespace_hash().hi(), h0.hi);
  EXPECT_EQ(info.namespace_hash().lo(), h0.lo);
  ASSERT_TRUE(info.has_parent());
  EXPECT_EQ(FromWire(info.parent().key()), first.key);
  EXPECT_EQ(info.parent().pages(), 3u);
  EXPECT_EQ(info.start_hash().hi(), first.key.hash.hi);  // h_a = the parent's h_b here
  EXPECT_EQ(info.first_page(), 3u);
  EXPECT_EQ(info.pages(), 2u);
  EXPECT_EQ(info.bytes(), second.bytes.size());
  EXPECT_EQ(info.checksum(), store::core::BlobChecksum(second.checksums));
  ASSERT_EQ(info.tiers_size(), 1);
  EXPECT_EQ(info.tiers(0), v1::TIER_DRAM);
  EXPECT_EQ(info.pages_indexed(), 2u);
  EXPECT_FALSE(info.pinned());
  EXPECT_GT(info.created_unix_ms(), static_cast<uint64_t>(absl::ToUnixMillis(before)));
  EXPECT_EQ(info.tokens().size(), 8u * 4);  // 4 bytes a token
  ASSERT_OK_AND_ASSIGN(const proto::TokenView tokens,
                       proto::TokensFromProto(info.tokens(), "blob.tokens"));
  EXPECT_EQ(std::vector<uint32_t>(tokens.span().begin(), tokens.span().end()), TokenRun(12, 8));
  ASSERT_OK_AND_ASSIGN(v1::BlobInfo no_tokens, Stat(second.key));
  EXPECT_TRUE(no_tokens.tokens().empty());

  ASSERT_OK_AND_ASSIGN(v1::MatchResponse match, Match(ns, TokenRun(0, 20)));
  EXPECT_EQ(match.matched_pages(), 5u);
  ASSERT_EQ(match.segments_size(), 2);
  EXPECT_EQ(FromWire(match.segments(1).blob()), second.key);
  EXPECT_EQ(match.segments(1).seq_page_begin(), 3u);
}

TEST_F(NodeServerBlobTest, ListPaginatesInKeyOrderAndFilters) {
  const radix::Namespace a = TinyNamespace("list-a");
  const radix::Namespace b = TinyNamespace("list-b");
  std::set<radix::BlobKey> keys_a;
  std::set<radix::BlobKey> all;
  for (uint32_t i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(a, TokenRun(1000 * i, 4)));
    keys_a.insert(blob.key);
    all.insert(blob.key);
  }
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(b, TokenRun(1000 * i, 4)));
    all.insert(blob.key);
  }
  // Pages of 2 over every namespace.
  std::vector<radix::BlobKey> listed;
  v1::ListRequest request;
  request.set_limit(2);
  int pages = 0;
  do {
    v1::ListResponse response;
    ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), request, &response)));
    ASSERT_LE(response.blobs_size(), 2);
    for (const v1::BlobInfo& info : response.blobs()) {
      listed.push_back(FromWire(info.key()));
      EXPECT_TRUE(info.tokens().empty());
    }
    request.set_page_token(response.next_page_token());
    ASSERT_LT(++pages, 10);
  } while (!request.page_token().empty());
  EXPECT_EQ(pages, 4);                                                     // 7 blobs: 2 + 2 + 2 + 1
  EXPECT_EQ(listed, std::vector<radix::BlobKey>(all.begin(), all.end()));  // ascending, once

  // Filtered by namespace, and by its h_0.
  v1::ListRequest by_ns;
  *by_ns.mutable_ns() = ToWire(a);
  v1::ListResponse only_a;
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), by_ns, &only_a)));
  std::set<radix::BlobKey> got;
  for (const v1::BlobInfo& info : only_a.blobs()) got.insert(FromWire(info.key()));
  EXPECT_EQ(got, keys_a);
  EXPECT_TRUE(only_a.next_page_token().empty());
  v1::ListRequest by_hash;
  *by_hash.mutable_namespace_hash() = only_a.blobs(0).namespace_hash();
  v1::ListResponse hashed;
  ASSERT_OK(Call(store_->List(ContextWithDeadline().get(), by_hash, &hashed)));
  EXPECT_EQ(hashed.blobs_size(), 5);
}

TEST_F(NodeServerBlobTest, PinBlocksDeleteUntilUnpin) {
  const radix::Namespace ns = TinyNamespace("pinner");
  ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(ns, TokenRun(5, 8)));
  v1::PinRequest pin;
  *pin.mutable_key() = ToWire(blob.key);
  v1::PinResponse pinned;
  ASSERT_OK(Call(store_->Pin(ContextWithDeadline().get(), pin, &pinned)));
  ASSERT_OK(Call(store_->Pin(ContextWithDeadline().get(), pin, &pinned)));  // idempotent
  ASSERT_OK_AND_ASSIGN(v1::BlobInfo info, Stat(blob.key));
  EXPECT_TRUE(info.pinned());

  v1::DeleteRequest del;
  *del.mutable_key() = ToWire(blob.key);
  v1::DeleteResponse deleted;
  EXPECT_CODE(Call(store_->Delete(ContextWithDeadline().get(), del, &deleted)),
              absl::StatusCode::kFailedPrecondition);
  // Pinned blobs survive admin eviction too.
  v1::EvictRequest evict;
  evict.set_tier(v1::TIER_DRAM);
  evict.set_bytes(uint64_t{1} << 30);
  v1::EvictResponse evicted;
  ASSERT_OK(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)));
  EXPECT_EQ(evicted.blobs_unlinked(), 0u);

  v1::UnpinRequest unpin;
  *unpin.mutable_key() = ToWire(blob.key);
  v1::UnpinResponse unpinned;
  ASSERT_OK(Call(store_->Unpin(ContextWithDeadline().get(), unpin, &unpinned)));
  ASSERT_OK(Call(store_->Delete(ContextWithDeadline().get(), del, &deleted)));
  EXPECT_EQ(deleted.pages_removed(), 2u);
  EXPECT_EQ(deleted.blobs_unlinked(), 1u);
  EXPECT_CODE(Stat(blob.key), absl::StatusCode::kNotFound);
  EXPECT_CODE(Read(ns, blob.key, 0, 1, 0, 1), absl::StatusCode::kNotFound);  // a miss
  ASSERT_OK_AND_ASSIGN(v1::MatchResponse match, Match(ns, TokenRun(5, 8)));
  EXPECT_EQ(match.matched_pages(), 0u);
}

TEST_F(NodeServerBlobTest, ChecksumMismatchIsDataLossAndAbortsThePut) {
  const radix::Namespace ns = TinyNamespace("corrupt");
  EXPECT_CODE(Put(ns, TokenRun(0, 4), std::nullopt, /*corrupt=*/true), absl::StatusCode::kDataLoss);
  v1::TiersResponse tiers;
  ASSERT_OK(Call(admin_->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &tiers)));
  EXPECT_EQ(tiers.engine().pending_puts(), 0u);  // aborted
  EXPECT_EQ(tiers.engine().blobs(), 0u);
  ASSERT_OK(Put(ns, TokenRun(0, 4)));  // a clean retry commits
}

TEST_F(NodeServerBlobTest, EvictFreesUnpinnedBlobsAndTiersCountIt) {
  const radix::Namespace ns = TinyNamespace("evictee");
  for (uint32_t i = 0; i < 3; ++i) ASSERT_OK(Put(ns, TokenRun(100 * i, 4)));
  v1::TiersResponse before;
  ASSERT_OK(Call(admin_->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &before)));
  EXPECT_EQ(before.engine().blobs(), 3u);
  EXPECT_EQ(before.tiers(0).blobs(), 3u);
  EXPECT_EQ(before.index().pages(), 3u);

  v1::EvictRequest evict;
  evict.set_tier(v1::TIER_DRAM);
  evict.set_bytes(1);  // at least one blob's extent
  v1::EvictResponse evicted;
  ASSERT_OK(Call(admin_->Evict(ContextWithDeadline().get(), evict, &evicted)));
  EXPECT_GE(evicted.bytes_freed(), 1u);
  // The blobs leave DRAM (demoted to SSD, or dropped to TEXT) but stay in the index.
  const uint64_t moved = evicted.blobs_demoted() + evicted.blobs_dropped();
  EXPECT_GE(moved, 1u);
  EXPECT_EQ(evicted.blobs_unlinked(), 0u);
  v1::TiersResponse after;
  ASSERT_OK(Call(admin_->Tiers(ContextWithDeadline().get(), v1::TiersRequest(), &after)));
  EXPECT_EQ(after.engine().blobs(), 3u);
  EXPECT_EQ(after.tiers(0).blobs(), 3u - moved);
  EXPECT_EQ(after.tiers(0).evictions() + after.tiers(0).demotions(), moved);
  EXPECT_LT(after.tiers(0).used_bytes(), before.tiers(0).used_bytes());
}

TEST_F(NodeServerBlobTest, DrainWaitsForHeldLeases) {
  const radix::Namespace ns = TinyNamespace("drainer");
  ASSERT_OK_AND_ASSIGN(PutBlob blob, Put(ns, TokenRun(0, 4)));
  ASSERT_OK_AND_ASSIGN(v1::ReadResponse read, Read(ns, blob.key, 0, 1, 0, 2));
  v1::DrainRequest drain;
  drain.set_timeout_ms(100);
  v1::DrainResponse drained;
  EXPECT_CODE(Call(admin_->Drain(ContextWithDeadline().get(), drain, &drained)),
              absl::StatusCode::kDeadlineExceeded);
  // Reads are still served while draining.
  ASSERT_OK_AND_ASSIGN(v1::ReadResponse second, Read(ns, blob.key, 0, 1, 0, 1));
  ASSERT_OK(Release(second.lease_id()));
  ASSERT_OK(Release(read.lease_id()));
  drain.set_timeout_ms(5000);
  EXPECT_OK(Call(admin_->Drain(ContextWithDeadline().get(), drain, &drained)));
}

}  // namespace
}  // namespace strata::integration::node_server_blob_test
