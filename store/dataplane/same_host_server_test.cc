// SameHostServer against a real NodeEngine, driven by a raw client that speaks the protocol
// itself (strata/store/transport/same_host.h) — and tries what a hostile process on the same
// host would: write the arena through every way around a read-only descriptor, change its
// staging bytes while the node copies them, name bytes outside its staging file, release
// another connection's lease, send frames that do not parse, hold leases and vanish.
#include "strata/store/dataplane/same_host_server.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "strata/base/status_macros.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"
#include "strata/tiering/hbm_tier.h"

namespace strata::store::dataplane {
namespace {

namespace sh = transport::same_host;
namespace wire = transport::wire;
using testing::BlobContent;
using testing::MakeBlob;

constexpr uint64_t kStaging = uint64_t{1} << 20;
const absl::Duration kWait = absl::Seconds(10);

// One raw connection: the socket, the two descriptors of HELLO_REPLY, their mappings.
struct RawClient {
  sh::Fd fd;
  sh::Fd arena;
  sh::Fd staging;
  const std::byte* arena_view = nullptr;
  uint64_t arena_bytes = 0;
  std::byte* staging_view = nullptr;
  uint64_t staging_bytes = 0;
  ~RawClient() {
    if (arena_view != nullptr) ::munmap(const_cast<std::byte*>(arena_view), arena_bytes);
    if (staging_view != nullptr) ::munmap(staging_view, staging_bytes);
  }
};

// What a READ_REPLY said.
struct Grant {
  absl::Status status;
  uint64_t lease = 0;
  std::vector<wire::ByteRange> items;
  std::vector<uint64_t> checksums;
};

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

class SameHostServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    core::NodeEngineOptions options = testing::EngineOptions(&clock_, uint64_t{16} << 20);
    options.dram_backing = tiering::DramBacking::kMemfd;
    ASSERT_OK_AND_ASSIGN(engine_, core::NodeEngine::Create(options));
    StartServer({});
  }

  void StartServer(SameHostOptions options) {
    server_.reset();
    options.staging_bytes = kStaging;
    options.max_leases_per_client = 4;
    options.io_timeout = absl::Seconds(5);
    ASSERT_OK_AND_ASSIGN(server_, SameHostServer::Start(engine_.get(), std::move(options)));
  }

  // Connects and says HELLO; the reply's status, and on OK the mapped descriptors.
  absl::StatusOr<std::unique_ptr<RawClient>> Connect(const std::string& credential = "") {
    auto c = std::make_unique<RawClient>();
    STRATA_ASSIGN_OR_RETURN(c->fd, sh::Connect(server_->socket(), absl::Now() + kWait));
    sh::Writer hello;
    hello.U32(sh::kVersion).U32(static_cast<uint32_t>(credential.size())).Bytes(Bytes(credential));
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(hello.bytes())};
    // A node that refuses at once may have closed before the HELLO arrived: its reply is
    // still there to read.
    const absl::Status sent =
        sh::Send(c->fd.get(), sh::Type::kHello, parts, {}, absl::Now() + kWait);
    absl::StatusOr<sh::Frame> received = sh::Receive(c->fd.get(), 4096, absl::Now() + kWait);
    if (!received.ok()) return sent.ok() ? received.status() : sent;
    sh::Frame& reply = *received;
    EXPECT_EQ(reply.type, sh::Type::kHelloReply);
    sh::Reader reader(reply.payload);
    STRATA_RETURN_IF_ERROR(reader.Status());
    c->arena_bytes = reader.U64();
    c->staging_bytes = reader.U64();
    EXPECT_TRUE(reader.ok());
    EXPECT_EQ(reply.fds.size(), 2u);
    if (reply.fds.size() != 2) return absl::InternalError("no descriptors");
    c->arena = std::move(reply.fds[0]);
    c->staging = std::move(reply.fds[1]);
    void* a = ::mmap(nullptr, c->arena_bytes, PROT_READ, MAP_SHARED, c->arena.get(), 0);
    EXPECT_NE(a, MAP_FAILED) << std::strerror(errno);
    c->arena_view = static_cast<const std::byte*>(a);
    void* s =
        ::mmap(nullptr, c->staging_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->staging.get(), 0);
    EXPECT_NE(s, MAP_FAILED) << std::strerror(errno);
    c->staging_view = static_cast<std::byte*>(s);
    return c;
  }

  // PUT of `blob` (from page 0) whose bytes the client placed at `offset` of its staging
  // file; the PUT_REPLY.
  absl::StatusOr<wire::PutResultHeader> Put(RawClient& c, const BlobContent& blob, uint64_t offset,
                                            uint64_t request_id = 7) {
    auto [header, payload] = testing::PutMessage(ns_, blob);
    header.request_id = request_id;
    sh::Writer at;
    at.U64(offset);
    const auto encoded = wire::EncodePutHeader(header);
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(at.bytes()),
                                               absl::MakeConstSpan(encoded),
                                               absl::MakeConstSpan(payload)};
    STRATA_RETURN_IF_ERROR(sh::Send(c.fd.get(), sh::Type::kPut, parts, {}, absl::Now() + kWait));
    STRATA_ASSIGN_OR_RETURN(sh::Frame reply,
                            sh::Receive(c.fd.get(), sh::kMaxReplyBytes, absl::Now() + kWait));
    EXPECT_EQ(reply.type, sh::Type::kPutReply);
    return wire::DecodePutResult(reply.payload);
  }

  absl::StatusOr<radix::BlobKey> PutBlob(RawClient& c, const BlobContent& blob) {
    std::memcpy(c.staging_view, blob.bytes.data(), blob.bytes.size());
    STRATA_ASSIGN_OR_RETURN(wire::PutResultHeader result, Put(c, blob, 0));
    STRATA_RETURN_IF_ERROR(result.status);
    return radix::BlobKey{radix::PrefixHash{.hi = result.key.hi, .lo = result.key.lo}};
  }

  // READ of every page and layer of `key`; the READ_REPLY decoded.
  absl::StatusOr<Grant> Read(RawClient& c, const radix::BlobKey& key, uint32_t pages,
                             const std::string& ns_encoding = "") {
    const std::string ns = ns_encoding.empty() ? ns_.CanonicalEncoding() : ns_encoding;
    const wire::ReadRangeBits range{.key = {key.hash.hi, key.hash.lo},
                                    .first_page = 0,
                                    .num_pages = pages,
                                    .layer_begin = 0,
                                    .layer_end = ns_.layout().num_layers};
    const wire::ReadHeader header{
        .request_id = 31, .range_count = 1, .ns_bytes = static_cast<uint32_t>(ns.size())};
    const auto encoded = wire::EncodeReadHeader(header);
    const std::vector<uint8_t> payload = wire::EncodeReadPayload(Bytes(ns), {&range, 1});
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(encoded),
                                               absl::MakeConstSpan(payload)};
    STRATA_RETURN_IF_ERROR(sh::Send(c.fd.get(), sh::Type::kRead, parts, {}, absl::Now() + kWait));
    return ReceiveGrant(c);
  }

  absl::StatusOr<Grant> ReceiveGrant(RawClient& c) {
    STRATA_ASSIGN_OR_RETURN(sh::Frame reply,
                            sh::Receive(c.fd.get(), sh::kMaxReplyBytes, absl::Now() + kWait));
    EXPECT_EQ(reply.type, sh::Type::kReadReply);
    sh::Reader reader(reply.payload);
    Grant grant;
    (void)reader.U64();
    grant.status = reader.Status();
    grant.lease = reader.U64();
    const uint32_t items = reader.U32();
    (void)reader.U32();
    for (uint32_t i = 0; i < items; ++i) {
      const uint64_t offset = reader.U64();
      grant.items.push_back({offset, reader.U64()});
    }
    while (reader.ok() && reader.left() >= 8) grant.checksums.push_back(reader.U64());
    EXPECT_TRUE(reader.ok());
    EXPECT_EQ(reader.left(), 0u);
    return grant;
  }

  void Release(RawClient& c, uint64_t lease) {
    sh::Writer message;
    message.U64(lease);
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(message.bytes())};
    ASSERT_OK(sh::Send(c.fd.get(), sh::Type::kRelease, parts, {}, absl::Now() + kWait));
  }

  uint32_t LeasesOn(const radix::BlobKey& key) {
    absl::StatusOr<core::BlobInfo> info = engine_->Stat(key);
    return info.ok() ? info->leases : 0;
  }

  // Polls until `done` holds (the server acts on its own threads).
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + kWait;
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  core::FakeClock clock_;
  std::unique_ptr<core::NodeEngine> engine_;
  std::unique_ptr<SameHostServer> server_;
  const radix::Namespace ns_ = testing::TestNamespace();
};

TEST_F(SameHostServerTest, APutAndAReadAreByteExactThroughTheMappings) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  EXPECT_EQ(c->staging_bytes, kStaging);
  EXPECT_EQ(c->arena_bytes, engine_->dram().mapped_bytes());
  const BlobContent blob = MakeBlob(ns_, 4, 3);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*c, blob));

  ASSERT_OK_AND_ASSIGN(const Grant grant, Read(*c, key, 4));
  ASSERT_OK(grant.status);
  ASSERT_EQ(grant.items.size(), ns_.layout().num_layers);
  EXPECT_EQ(grant.checksums, blob.checksums);
  const uint64_t layer_bytes = blob.bytes.size() / ns_.layout().num_layers;
  for (size_t l = 0; l < grant.items.size(); ++l) {
    ASSERT_EQ(grant.items[l].length, layer_bytes);
    ASSERT_LE(grant.items[l].offset + layer_bytes, c->arena_bytes);
    EXPECT_EQ(std::memcmp(c->arena_view + grant.items[l].offset,
                          blob.bytes.data() + l * layer_bytes, layer_bytes),
              0)
        << "layer " << l;
  }
  EXPECT_EQ(LeasesOn(key), 1u);
  Release(*c, grant.lease);
  EXPECT_TRUE(Eventually([&] { return LeasesOn(key) == 0; }));
  const SameHostStats stats = server_->stats();
  EXPECT_EQ(stats.puts, 1u);
  EXPECT_EQ(stats.bytes_put, blob.bytes.size());
  EXPECT_EQ(stats.reads, 1u);
  EXPECT_EQ(stats.bytes_granted, blob.bytes.size());
  EXPECT_EQ(stats.clients, 1u);
  EXPECT_EQ(stats.malformed, 0u);
}

TEST_F(SameHostServerTest, NoWayAroundTheReadOnlyArenaDescriptorWritesABlob) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  const BlobContent blob = MakeBlob(ns_, 4, 4);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*c, blob));
  ASSERT_OK_AND_ASSIGN(const Grant grant, Read(*c, key, 4));
  ASSERT_OK(grant.status);
  const uint64_t at = grant.items[0].offset;
  const int fd = c->arena.get();
  const char byte = 0x5a;

  // The descriptor itself: read-only.
  errno = 0;
  EXPECT_EQ(::mmap(nullptr, c->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(at)), -1);
  EXPECT_NE(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                        static_cast<off_t>(c->arena_bytes)),
            0);
  EXPECT_NE(::ftruncate(fd, 0), 0);
  errno = 0;
  EXPECT_NE(
      ::mprotect(const_cast<std::byte*>(c->arena_view), c->arena_bytes, PROT_READ | PROT_WRITE), 0);
  EXPECT_EQ(errno, EACCES);
  // Opened again read-write through /proc (the memfd's inode allows it): the seal refuses.
  sh::Fd reopened(::open(absl::StrCat("/proc/self/fd/", fd).c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(reopened.valid()) << std::strerror(errno);
  errno = 0;
  EXPECT_EQ(::mmap(nullptr, c->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, reopened.get(), 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::pwrite(reopened.get(), &byte, 1, static_cast<off_t>(at)), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::fallocate(reopened.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        static_cast<off_t>(at), 65536),
            0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(reopened.get(), 0), 0);
  // Through the node's own /proc entries (same user here; a node run as another user
  // refuses even the open).
  const std::string node_fds = absl::StrCat("/proc/", ::getpid(), "/fd");
  sh::Fd via_pid(::open(absl::StrCat(node_fds, "/", fd).c_str(), O_RDWR | O_CLOEXEC));
  if (via_pid.valid()) {
    EXPECT_EQ(::mmap(nullptr, c->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, via_pid.get(), 0),
              MAP_FAILED);
  }

  // The blob is what was put, and still verifies.
  const uint64_t layer_bytes = blob.bytes.size() / ns_.layout().num_layers;
  for (size_t l = 0; l < grant.items.size(); ++l) {
    EXPECT_EQ(std::memcmp(c->arena_view + grant.items[l].offset,
                          blob.bytes.data() + l * layer_bytes, layer_bytes),
              0);
  }
  Release(*c, grant.lease);
}

TEST_F(SameHostServerTest, StagingBytesThatDoNotMatchTheChecksumsCommitNothing) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  const BlobContent blob = MakeBlob(ns_, 4, 5);
  std::memcpy(c->staging_view, blob.bytes.data(), blob.bytes.size());
  c->staging_view[blob.bytes.size() / 2] ^= std::byte{1};
  ASSERT_OK_AND_ASSIGN(const wire::PutResultHeader result, Put(*c, blob, 0));
  EXPECT_EQ(result.status.code(), absl::StatusCode::kDataLoss) << result.status;
  const radix::BlobKey key{radix::PrefixHash{.hi = result.key.hi, .lo = result.key.lo}};
  EXPECT_EQ(engine_->Stat(key).status().code(), absl::StatusCode::kNotFound);
  // The connection serves on: the honest put goes through.
  ASSERT_OK(PutBlob(*c, blob).status());
  EXPECT_EQ(server_->stats().put_failures, 1u);
}

TEST_F(SameHostServerTest, RewritingStagingDuringThePutNeverCommitsOtherBytes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  // Each round: the blob in staging while another thread keeps flipping a byte of it. The
  // put either commits exactly the blob the checksums describe, or fails DATA_LOSS.
  int committed = 0;
  int refused = 0;
  for (uint64_t round = 0; round < 8; ++round) {
    const BlobContent blob = MakeBlob(ns_, 8, 100 + round);
    std::memcpy(c->staging_view, blob.bytes.data(), blob.bytes.size());
    std::atomic<bool> stop{false};
    std::thread flipper([&] {
      volatile std::byte* target = c->staging_view + blob.bytes.size() - 1 - round * 1000;
      while (!stop.load(std::memory_order_relaxed)) *target = *target ^ std::byte{0x80};
    });
    absl::StatusOr<wire::PutResultHeader> result = Put(*c, blob, 0, 40 + round);
    stop = true;
    flipper.join();
    ASSERT_OK(result.status());
    if (!result->status.ok()) {
      EXPECT_EQ(result->status.code(), absl::StatusCode::kDataLoss) << result->status;
      ++refused;
      continue;
    }
    ++committed;
    const radix::BlobKey key{radix::PrefixHash{.hi = result->key.hi, .lo = result->key.lo}};
    ASSERT_OK_AND_ASSIGN(const Grant grant, Read(*c, key, 8));
    ASSERT_OK(grant.status);
    const uint64_t layer_bytes = blob.bytes.size() / ns_.layout().num_layers;
    for (size_t l = 0; l < grant.items.size(); ++l) {
      EXPECT_EQ(std::memcmp(c->arena_view + grant.items[l].offset,
                            blob.bytes.data() + l * layer_bytes, layer_bytes),
                0);
    }
    Release(*c, grant.lease);
  }
  std::printf("rewritten mid-put: %d committed exact, %d refused DATA_LOSS\n", committed, refused);
  EXPECT_EQ(committed + refused, 8);
}

TEST_F(SameHostServerTest, BytesOutsideTheStagingFileAreOutOfRange) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> a, Connect());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> b, Connect());
  // Each connection has a staging file of its own.
  struct stat sa, sb;
  ASSERT_EQ(::fstat(a->staging.get(), &sa), 0);
  ASSERT_EQ(::fstat(b->staging.get(), &sb), 0);
  EXPECT_NE(sa.st_ino, sb.st_ino);
  // Nor can a client shrink its own under the node.
  EXPECT_NE(::ftruncate(a->staging.get(), 0), 0);
  const BlobContent blob = MakeBlob(ns_, 4, 6);
  for (const uint64_t offset : {kStaging - blob.bytes.size() + 1, kStaging, ~uint64_t{0}}) {
    ASSERT_OK_AND_ASSIGN(const wire::PutResultHeader result, Put(*a, blob, offset));
    EXPECT_EQ(result.status.code(), absl::StatusCode::kOutOfRange) << result.status;
  }
  EXPECT_EQ(server_->stats().malformed, 3u);
  ASSERT_OK(PutBlob(*a, blob).status());
}

TEST_F(SameHostServerTest, MalformedRequestsGetPreciseErrorsAndTheNodeServesOn) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  const BlobContent blob = MakeBlob(ns_, 2, 7);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*c, blob));

  // A READ shorter than its header.
  const uint8_t junk[5] = {1, 2, 3, 4, 5};
  const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(junk)};
  ASSERT_OK(sh::Send(c->fd.get(), sh::Type::kRead, parts, {}, absl::Now() + kWait));
  ASSERT_OK_AND_ASSIGN(Grant grant, ReceiveGrant(*c));
  EXPECT_EQ(grant.status.code(), absl::StatusCode::kInvalidArgument) << grant.status;
  // A namespace that does not decode; a blob not in the index; pages past the blob.
  ASSERT_OK_AND_ASSIGN(grant, Read(*c, key, 2, "not a namespace"));
  EXPECT_EQ(grant.status.code(), absl::StatusCode::kInvalidArgument) << grant.status;
  ASSERT_OK_AND_ASSIGN(grant, Read(*c, radix::BlobKey{radix::PrefixHash{.hi = 1, .lo = 2}}, 2));
  EXPECT_EQ(grant.status.code(), absl::StatusCode::kNotFound) << grant.status;
  ASSERT_OK_AND_ASSIGN(grant, Read(*c, key, 3));
  EXPECT_EQ(grant.status.code(), absl::StatusCode::kOutOfRange) << grant.status;
  EXPECT_EQ(LeasesOn(key), 0u);

  // Another connection's lease: this one cannot end it.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> other, Connect());
  ASSERT_OK_AND_ASSIGN(const Grant held, Read(*other, key, 2));
  ASSERT_OK(held.status);
  Release(*c, held.lease);
  ASSERT_OK_AND_ASSIGN(grant, Read(*c, key, 2));  // a round trip: the RELEASE was handled
  ASSERT_OK(grant.status);
  EXPECT_EQ(LeasesOn(key), 2u);
  Release(*c, grant.lease);
  Release(*other, held.lease);
  EXPECT_TRUE(Eventually([&] { return LeasesOn(key) == 0; }));

  // Frames that do not parse close that connection only.
  uint8_t bad[sh::kFrameBytes] = {0xde, 0xad};
  ASSERT_EQ(::send(c->fd.get(), bad, sizeof(bad), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(bad)));
  EXPECT_FALSE(sh::Receive(c->fd.get(), 4096, absl::Now() + kWait).ok());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> huge, Connect());
  sh::Writer frame;
  frame.U32(sh::kMagic).U32(static_cast<uint32_t>(sh::Type::kPut)).U64(uint64_t{1} << 40);
  ASSERT_EQ(::send(huge->fd.get(), frame.bytes().data(), frame.bytes().size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(sh::kFrameBytes));
  EXPECT_EQ(sh::Receive(huge->fd.get(), 4096, absl::Now() + kWait).status().code(),
            absl::StatusCode::kUnavailable);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> reply_type, Connect());
  ASSERT_OK(sh::Send(reply_type->fd.get(), sh::Type::kHelloReply, {}, {}, absl::Now() + kWait));
  EXPECT_FALSE(sh::Receive(reply_type->fd.get(), 4096, absl::Now() + kWait).ok());
  // A fresh connection is served.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> fresh, Connect());
  ASSERT_OK_AND_ASSIGN(grant, Read(*fresh, key, 2));
  EXPECT_OK(grant.status);
  EXPECT_GE(server_->stats().malformed, 6u);
}

TEST_F(SameHostServerTest, AClientThatGoesLeavesNoLease) {
  const BlobContent blob = MakeBlob(ns_, 2, 8);
  radix::BlobKey key;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
    ASSERT_OK_AND_ASSIGN(key, PutBlob(*c, blob));
    for (int i = 0; i < 4; ++i) {
      ASSERT_OK_AND_ASSIGN(const Grant grant, Read(*c, key, 2));
      ASSERT_OK(grant.status);
    }
    // At most max_leases_per_client (4 here) at once.
    ASSERT_OK_AND_ASSIGN(const Grant fifth, Read(*c, key, 2));
    EXPECT_EQ(fifth.status.code(), absl::StatusCode::kResourceExhausted) << fifth.status;
    EXPECT_EQ(LeasesOn(key), 4u);
  }  // the client closes its socket without releasing
  EXPECT_TRUE(Eventually([&] { return LeasesOn(key) == 0; }));
  EXPECT_TRUE(Eventually([&] { return server_->stats().clients == 0; }));
  EXPECT_EQ(server_->stats().leases_released_at_close, 4u);
}

TEST_F(SameHostServerTest, CredentialsAndTenantsAreChecked) {
  StartServer(
      {.authenticate = [](absl::Span<const uint8_t> credential) -> absl::StatusOr<std::string> {
         const std::string given(credential.begin(), credential.end());
         if (given == "acme-ok") return std::string("acme");
         if (given == "other-ok") return std::string("other");
         return absl::UnauthenticatedError("not a credential of this node");
       },
       .scope_of =
           [](std::string_view tenant) { return core::AccessScope::Of({std::string(tenant)}); }});
  EXPECT_EQ(Connect("forged").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Connect("").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(server_->stats().refused, 2u);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> acme, Connect("acme-ok"));
  const BlobContent blob = MakeBlob(ns_, 2, 9);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*acme, blob));
  // Another tenant's blob is as absent as an unknown one.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> other, Connect("other-ok"));
  ASSERT_OK_AND_ASSIGN(const Grant grant, Read(*other, key, 2));
  EXPECT_EQ(grant.status.code(), absl::StatusCode::kNotFound) << grant.status;
  std::memcpy(other->staging_view, blob.bytes.data(), blob.bytes.size());
  ASSERT_OK_AND_ASSIGN(const wire::PutResultHeader put, Put(*other, blob, 0));
  EXPECT_EQ(put.status.code(), absl::StatusCode::kPermissionDenied) << put.status;
}

TEST_F(SameHostServerTest, ClientsPastTheLimitAreRefused) {
  StartServer({.max_clients = 1, .max_greeting = 3, .hello_timeout = absl::Seconds(60)});
  // Sockets that never say HELLO take no client's slot...
  std::vector<sh::Fd> silent;
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(sh::Fd fd, sh::Connect(server_->socket(), absl::Now() + kWait));
    silent.push_back(std::move(fd));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> first, Connect());
  // ...and clients past max_clients are refused in the greeting.
  EXPECT_EQ(Connect().status().code(), absl::StatusCode::kResourceExhausted);
  first.reset();
  EXPECT_TRUE(Eventually([&] { return Connect().ok(); }));
  // Past max_greeting silent sockets are refused when accepted (until one goes).
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(sh::Fd fd, sh::Connect(server_->socket(), absl::Now() + kWait));
    silent.push_back(std::move(fd));
  }
  EXPECT_TRUE(Eventually(
      [&] { return Connect().status().code() == absl::StatusCode::kResourceExhausted; }));
  silent.clear();
  EXPECT_TRUE(Eventually([&] { return Connect().ok(); }));
}

TEST_F(SameHostServerTest, APathSocketIsNeitherTakenOverNorRemovedByAnother) {
  char dir[] = "/tmp/strata-same-host-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = absl::StrCat(dir, "/node.sock");
  StartServer({.socket = path});
  ASSERT_OK(Connect().status());
  // A second server on the live path is refused; the first keeps its socket.
  EXPECT_EQ(SameHostServer::Start(engine_.get(), {.socket = path}).status().code(),
            absl::StatusCode::kUnavailable);
  ASSERT_OK(Connect().status());
  // Once it stopped the path is gone; a socket file left behind (a node that died) is
  // replaced by the next server.
  server_.reset();
  struct stat st;
  EXPECT_NE(::lstat(path.c_str(), &st), 0);
  {
    ASSERT_OK_AND_ASSIGN(sh::Fd stale, sh::Listen(path, 1));
  }  // closed without unlinking: a stale socket file
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  StartServer({.socket = path});
  EXPECT_OK(Connect().status());
  server_.reset();
  ::rmdir(dir);
}

TEST_F(SameHostServerTest, AnArenaThatCannotBeSharedIsRefused) {
  core::NodeEngineOptions options = testing::EngineOptions(&clock_, uint64_t{16} << 20);
  options.dram_backing = tiering::DramBacking::kAnonymous;
  options.dram_name = "strata-same-host-anonymous";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<core::NodeEngine> anonymous,
                       core::NodeEngine::Create(options));
  EXPECT_EQ(SameHostServer::Start(anonymous.get(), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// ---- the HBM tier shared with same-host GPU readers (share_hbm)

class SameHostHbmTest : public SameHostServerTest {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = 64 << 20}));
    core::NodeEngineOptions options = testing::EngineOptions(&clock_, uint64_t{16} << 20);
    options.dram_backing = tiering::DramBacking::kMemfd;
    ASSERT_OK_AND_ASSIGN(
        options.hbm, tiering::HbmTier::Create(
                         device_, {.capacity_bytes = uint64_t{4} << 20, .granule_bytes = 4096}));
    ASSERT_OK_AND_ASSIGN(engine_, core::NodeEngine::Create(options));
    StartServer({.share_hbm = true});
  }

  // HELLO on a fresh connection; the HBM handle and pool size its reply carried.
  absl::StatusOr<std::pair<std::string, uint64_t>> HbmGreeting() {
    STRATA_ASSIGN_OR_RETURN(sh::Fd fd, sh::Connect(server_->socket(), absl::Now() + kWait));
    sh::Writer hello;
    hello.U32(sh::kVersion).U32(0);
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(hello.bytes())};
    STRATA_RETURN_IF_ERROR(sh::Send(fd.get(), sh::Type::kHello, parts, {}, absl::Now() + kWait));
    STRATA_ASSIGN_OR_RETURN(sh::Frame reply, sh::Receive(fd.get(), 4096, absl::Now() + kWait));
    sh::Reader reader(reply.payload);
    STRATA_RETURN_IF_ERROR(reader.Status());
    (void)reader.U64();
    (void)reader.U64();
    (void)reader.U32();
    const uint32_t n = reader.U32();
    if (n == 0) return std::pair<std::string, uint64_t>("", 0);
    const uint64_t pool = reader.U64();
    const absl::Span<const uint8_t> handle = reader.Bytes(n);
    if (!reader.ok()) return absl::InternalError("short HELLO_REPLY");
    return std::pair(std::string(reinterpret_cast<const char*>(handle.data()), n), pool);
  }

  // LEASE_CHECK of `lease`; the status it answered.
  absl::Status LeaseCheck(RawClient& c, uint64_t lease, uint32_t release) {
    sh::Writer message;
    message.U64(lease).U32(release);
    const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(message.bytes())};
    STRATA_RETURN_IF_ERROR(
        sh::Send(c.fd.get(), sh::Type::kLeaseCheck, parts, {}, absl::Now() + kWait));
    STRATA_ASSIGN_OR_RETURN(sh::Frame reply, sh::Receive(c.fd.get(), 4096, absl::Now() + kWait));
    if (reply.type != sh::Type::kLeaseCheckReply) return absl::InternalError("not a reply");
    sh::Reader reader(reply.payload);
    return reader.Status();
  }

  // A grant's items as READ_REPLY gives them with share_hbm: the checksums are
  // pages * layers values, then one HBM offset per item.
  static std::vector<uint64_t> HbmOffsets(Grant& grant, size_t checksums) {
    std::vector<uint64_t> hbm(grant.checksums.begin() + checksums, grant.checksums.end());
    grant.checksums.resize(checksums);
    return hbm;
  }

  // Whether `key` gets its HBM copy (admission runs now, or already ran on its thread).
  bool InHbm(const radix::BlobKey& key) {
    return Eventually([&] {
      engine_->AdmitToHbm();
      absl::StatusOr<core::BlobInfo> info = engine_->Stat(key);
      return info.ok() && !info->tiers.empty() && info->tiers[0] == core::Tier::kHbm;
    });
  }

  std::shared_ptr<gpu::Device> device_;
};

TEST_F(SameHostHbmTest, GpuReadersGetHbmPlacesTheyCopyFromAndTheLeaseCheckGuardsThem) {
  ASSERT_OK_AND_ASSIGN(const auto greeting, HbmGreeting());
  ASSERT_FALSE(greeting.first.empty());
  EXPECT_EQ(greeting.second, uint64_t{4} << 20);
  // A reader's device opens the pool (the host device: only in this process).
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::Device> reader_device, gpu::CreateHostDevice());
  ASSERT_OK_AND_ASSIGN(void* pool, reader_device->OpenIpc(greeting.first));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  const BlobContent blob = MakeBlob(ns_, 4, 21);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*c, blob));
  const size_t layers = ns_.layout().num_layers;
  const size_t sums = blob.checksums.size();
  // Not in HBM yet: every item says so.
  ASSERT_OK_AND_ASSIGN(Grant first, Read(*c, key, 4));
  ASSERT_OK(first.status);
  EXPECT_EQ(HbmOffsets(first, sums), std::vector<uint64_t>(layers, sh::kNoHbm));
  Release(*c, first.lease);
  ASSERT_OK_AND_ASSIGN(Grant second, Read(*c, key, 4));
  Release(*c, second.lease);
  ASSERT_TRUE(InHbm(key));

  ASSERT_OK_AND_ASSIGN(Grant grant, Read(*c, key, 4));
  ASSERT_OK(grant.status);
  const std::vector<uint64_t> hbm = HbmOffsets(grant, sums);
  EXPECT_EQ(grant.checksums, blob.checksums);
  ASSERT_EQ(hbm.size(), layers);
  const uint64_t layer_bytes = blob.bytes.size() / layers;
  ASSERT_OK_AND_ASSIGN(gpu::DeviceBuffer dest, reader_device->Allocate(blob.bytes.size()));
  ASSERT_OK_AND_ASSIGN(gpu::Stream stream, reader_device->CreateStream());
  for (size_t l = 0; l < layers; ++l) {
    ASSERT_NE(hbm[l], sh::kNoHbm);
    ASSERT_OK(reader_device->CopyDeviceToDeviceAsync(
        static_cast<std::byte*>(dest.data()) + l * layer_bytes,
        static_cast<const std::byte*>(pool) + hbm[l], layer_bytes, stream));
  }
  ASSERT_OK(reader_device->Synchronize(stream));
  EXPECT_EQ(std::memcmp(dest.data(), blob.bytes.data(), blob.bytes.size()), 0);
  // Live: the copies hold the blob's bytes.
  EXPECT_OK(LeaseCheck(*c, grant.lease, 0));
  // Expired (the clock past its TTL): ABORTED, whatever the copies hold.
  clock_.Advance(absl::Minutes(11));
  EXPECT_EQ(LeaseCheck(*c, grant.lease, 0).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(LeaseCheck(*c, grant.lease, 1).code(), absl::StatusCode::kAborted);  // and ends it
  EXPECT_EQ(LeaseCheck(*c, grant.lease, 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(server_->stats().leases_expired_in_copy, 2u);
  // Another connection's lease, a malformed check: precise errors, the connection serves on.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> other, Connect());
  ASSERT_OK_AND_ASSIGN(Grant others, Read(*other, key, 4));
  EXPECT_EQ(LeaseCheck(*c, others.lease, 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LeaseCheck(*c, others.lease, 7).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_OK(LeaseCheck(*other, others.lease, 1));
  EXPECT_TRUE(Eventually([&] { return LeasesOn(key) == 0; }));
  ASSERT_OK_AND_ASSIGN(Grant again, Read(*c, key, 4));
  EXPECT_OK(again.status);
  EXPECT_GT(server_->stats().bytes_granted_hbm, 0u);
  ASSERT_OK(reader_device->CloseIpc(pool));
}

TEST_F(SameHostHbmTest, WithoutShareHbmNothingOfTheTierIsOffered) {
  StartServer({});
  ASSERT_OK_AND_ASSIGN(const auto greeting, HbmGreeting());
  EXPECT_TRUE(greeting.first.empty());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RawClient> c, Connect());
  const BlobContent blob = MakeBlob(ns_, 4, 22);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutBlob(*c, blob));
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(Grant g, Read(*c, key, 4));
    Release(*c, g.lease);
  }
  ASSERT_TRUE(InHbm(key));
  ASSERT_OK_AND_ASSIGN(Grant grant, Read(*c, key, 4));
  EXPECT_EQ(grant.checksums, blob.checksums);  // no HBM offsets after them
}

}  // namespace
}  // namespace strata::store::dataplane
