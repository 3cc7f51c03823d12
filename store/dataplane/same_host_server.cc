#include "strata/store/dataplane/same_host_server.h"

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "store/dataplane/wire_convert.h"
#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"
#include "strata/store/transport/wire.h"

namespace strata::store::dataplane {

namespace wire = transport::wire;
namespace sh = transport::same_host;
using base::ErrnoToStatus;
using internal::BitsOf;

struct SameHostServer::Connection {
  sh::Fd fd;
  std::thread thread;
  sh::PeerIds peer;
  core::AccessScope scope = core::AccessScope::All();
  // The node's mapping of the connection's staging file.
  std::byte* staging = nullptr;
  uint64_t staging_bytes = 0;
  absl::flat_hash_set<uint64_t> leases;
  bool admitted = false;  // greeted: counts toward max_clients
  std::atomic<bool> done{false};
};

namespace {

std::atomic<uint64_t> next_socket{0};

// A staging file of `bytes` bytes for one client: read-write for it, sealed against
// resizing (so the node's mapping never faults), mapped shared by the node.
absl::Status MakeStaging(uint64_t bytes, sh::Fd* fd, std::byte** mapping) {
  sh::Fd file(::memfd_create("strata-same-host-staging", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!file.valid()) return ErrnoToStatus(errno, "memfd_create(staging)");
  if (::ftruncate(file.get(), static_cast<off_t>(bytes)) != 0) {
    return ErrnoToStatus(errno, "ftruncate(staging)");
  }
  if (::fcntl(file.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return ErrnoToStatus(errno, "fcntl(staging, F_ADD_SEALS)");
  }
  void* address = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, file.get(), 0);
  if (address == MAP_FAILED) return ErrnoToStatus(errno, "mmap(staging)");
  *mapping = static_cast<std::byte*>(address);
  *fd = std::move(file);
  return absl::OkStatus();
}

absl::Span<const uint8_t> View(const std::vector<uint8_t>& v) { return absl::MakeConstSpan(v); }

}  // namespace

absl::StatusOr<std::unique_ptr<SameHostServer>> SameHostServer::Start(core::NodeEngine* engine,
                                                                      SameHostOptions options) {
  const tiering::DramArena& arena = engine->dram();
  if (!arena.shareable()) {
    return absl::FailedPreconditionError(
        "same-host channel: the DRAM arena is anonymous memory (dram_backing), nothing to share");
  }
  if (!arena.write_sealed()) {
    return absl::FailedPreconditionError(
        "same-host channel: this kernel does not write-seal the DRAM arena's file "
        "(F_SEAL_FUTURE_WRITE): a client could reopen it writable");
  }
  if (options.staging_bytes == 0 || options.max_clients == 0 || options.max_greeting == 0 ||
      options.max_leases_per_client == 0) {
    return absl::InvalidArgumentError(
        "same-host channel: staging_bytes, max_clients, max_greeting and max_leases_per_client "
        "must be > 0");
  }
  if (options.socket.empty()) {
    options.socket = absl::StrCat("@strata-node-", ::getpid(), "-", next_socket.fetch_add(1));
  }
  std::unique_ptr<SameHostServer> server(new SameHostServer(engine, std::move(options)));
  if (server->options_.share_hbm && engine->hbm() != nullptr) {
    absl::StatusOr<std::string> handle = engine->hbm()->ExportIpc();
    if (handle.ok()) {
      server->hbm_handle_ = *std::move(handle);
    } else {
      LOG(WARNING) << server->options_.name
                   << ": the HBM tier cannot be shared (same-host GPU readers copy from DRAM): "
                   << handle.status();
    }
  }
  STRATA_ASSIGN_OR_RETURN(
      server->listener_,
      sh::Listen(server->options_.socket,
                 static_cast<int>(server->options_.max_clients + server->options_.max_greeting)));
  struct stat st;
  if (server->options_.socket[0] != '@' && ::stat(server->options_.socket.c_str(), &st) == 0) {
    server->socket_inode_ = st.st_ino;
  }
  server->wake_ = sh::Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!server->wake_.valid()) return ErrnoToStatus(errno, "eventfd");
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  LOG(INFO) << server->options_.name << ": same-host clients connect to " << server->options_.socket
            << " (staging " << server->options_.staging_bytes << " bytes per connection, at most "
            << server->options_.max_clients << ")";
  return server;
}

SameHostServer::SameHostServer(core::NodeEngine* engine, SameHostOptions options)
    : engine_(engine), options_(std::move(options)) {}

SameHostServer::~SameHostServer() { Stop(); }

SameHostStats SameHostServer::stats() const {
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return SameHostStats{.clients = get(counters_.clients),
                       .clients_total = get(counters_.clients_total),
                       .refused = get(counters_.refused),
                       .reads = get(counters_.reads),
                       .read_failures = get(counters_.read_failures),
                       .bytes_granted = get(counters_.bytes_granted),
                       .puts = get(counters_.puts),
                       .put_failures = get(counters_.put_failures),
                       .bytes_put = get(counters_.bytes_put),
                       .malformed = get(counters_.malformed),
                       .leases_released_at_close = get(counters_.leases_released_at_close),
                       .bytes_granted_hbm = get(counters_.bytes_granted_hbm),
                       .leases_expired_in_copy = get(counters_.leases_expired_in_copy)};
}

void SameHostServer::Stop() {
  absl::MutexLock stop(&stop_mu_);
  if (stopping_.exchange(true)) return;
  const uint64_t one = 1;
  if (wake_.valid()) (void)::write(wake_.get(), &one, sizeof(one));
  if (acceptor_.joinable()) acceptor_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    for (auto& c : connections_) ::shutdown(c->fd.get(), SHUT_RDWR);
    connections = std::move(connections_);
  }
  for (auto& c : connections) {
    if (c->thread.joinable()) c->thread.join();
  }
  // A path socket is removed only while it is still the one this server bound.
  struct stat st;
  if (options_.socket[0] != '@' && ::lstat(options_.socket.c_str(), &st) == 0 &&
      st.st_ino == socket_inode_) {
    ::unlink(options_.socket.c_str());
  }
}

void SameHostServer::ReapFinished() {
  std::list<std::unique_ptr<Connection>> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((*it)->done.load(std::memory_order_acquire)) {
        finished.push_back(std::move(*it));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : finished) c->thread.join();
}

void SameHostServer::AcceptLoop() {
  while (sh::WaitReadable(listener_.get(), wake_.get())) {
    absl::StatusOr<sh::Fd> accepted = sh::Accept(listener_.get());
    if (!accepted.ok()) {
      // EAGAIN or a connection reset before accept: go on. Out of descriptors: back off
      // rather than spin on a listener that stays readable.
      if (accepted.status().code() == absl::StatusCode::kResourceExhausted) {
        absl::SleepFor(absl::Milliseconds(10));
      }
      continue;
    }
    ReapFinished();
    auto connection = std::make_unique<Connection>();
    connection->fd = *std::move(accepted);
    Connection* c = connection.get();
    absl::MutexLock lock(&mu_);
    if (stopping_.load()) return;
    // Connections that have not said HELLO yet have a cap of their own: a local process
    // that opens sockets and says nothing takes no slot of a greeted client.
    if (greeting_.load() >= options_.max_greeting) {
      counters_.refused.fetch_add(1, std::memory_order_relaxed);
      sh::Writer reply;
      reply.Status(absl::ResourceExhaustedError(absl::StrCat(
          "same-host channel: ", options_.max_greeting, " connections are greeting already")));
      const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
      (void)sh::Send(c->fd.get(), sh::Type::kHelloReply, parts, {},
                     absl::Now() + absl::Milliseconds(100));
      continue;
    }
    greeting_.fetch_add(1);
    connections_.push_back(std::move(connection));
    c->thread = std::thread([this, c] { Serve(c); });
  }
}

bool SameHostServer::Reply(Connection& connection, sh::Type type,
                           absl::Span<const absl::Span<const uint8_t>> parts) {
  const absl::Status sent =
      sh::Send(connection.fd.get(), type, parts, {}, absl::Now() + options_.io_timeout);
  if (!sent.ok())
    VLOG(1) << options_.name << ": client pid " << connection.peer.pid << ": " << sent;
  return sent.ok();
}

void SameHostServer::Serve(Connection* connection) {
  Connection& c = *connection;
  const bool greeted = Greet(c);
  greeting_.fetch_sub(1);
  if (greeted) {
    counters_.clients.fetch_add(1, std::memory_order_relaxed);
    counters_.clients_total.fetch_add(1, std::memory_order_relaxed);
    bool serving = true;
    while (serving && sh::WaitReadable(c.fd.get(), wake_.get())) {
      absl::StatusOr<sh::Frame> frame =
          sh::Receive(c.fd.get(), sh::kMaxRequestBytes, absl::Now() + options_.io_timeout);
      if (!frame.ok()) {
        if (frame.status().code() == absl::StatusCode::kInvalidArgument) {
          counters_.malformed.fetch_add(1, std::memory_order_relaxed);
          LOG(WARNING) << options_.name << ": client pid " << c.peer.pid
                       << " sent a malformed frame, closing: " << frame.status();
        }
        break;
      }
      switch (frame->type) {
        case sh::Type::kRead:
          serving = HandleRead(c, frame->payload);
          break;
        case sh::Type::kRelease:
          serving = HandleRelease(c, frame->payload);
          break;
        case sh::Type::kLeaseCheck:
          serving = HandleLeaseCheck(c, frame->payload);
          break;
        case sh::Type::kPut:
          serving = HandlePut(c, frame->payload);
          break;
        default:
          counters_.malformed.fetch_add(1, std::memory_order_relaxed);
          LOG(WARNING) << options_.name << ": client pid " << c.peer.pid
                       << " sent a message of type " << static_cast<int>(frame->type)
                       << " a node does not take, closing";
          serving = false;
      }
    }
    counters_.clients.fetch_sub(1, std::memory_order_relaxed);
  }
  // A client that goes leaves nothing held.
  for (const uint64_t lease : c.leases) {
    if (engine_->Release(lease, c.scope).ok()) {
      counters_.leases_released_at_close.fetch_add(1, std::memory_order_relaxed);
    }
  }
  c.leases.clear();
  if (c.admitted) admitted_.fetch_sub(1);
  if (c.staging != nullptr) ::munmap(c.staging, c.staging_bytes);
  c.staging = nullptr;
  ::shutdown(c.fd.get(), SHUT_RDWR);
  c.done.store(true, std::memory_order_release);
}

bool SameHostServer::Greet(Connection& c) {
  auto refuse = [&](const absl::Status& status) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    LOG(WARNING) << options_.name << ": refused a client (pid " << c.peer.pid << ", uid "
                 << c.peer.uid << "): " << status;
    sh::Writer reply;
    reply.Status(status);
    const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
    (void)sh::Send(c.fd.get(), sh::Type::kHelloReply, parts, {},
                   absl::Now() + absl::Milliseconds(100));
    return false;
  };
  if (absl::StatusOr<sh::PeerIds> peer = sh::PeerOf(c.fd.get()); peer.ok()) c.peer = *peer;
  absl::StatusOr<sh::Frame> hello =
      sh::Receive(c.fd.get(), 8 + 4096, absl::Now() + options_.hello_timeout);
  if (!hello.ok()) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (hello->type != sh::Type::kHello) {
    return refuse(absl::InvalidArgumentError("same-host channel: the first message is not HELLO"));
  }
  sh::Reader reader(hello->payload);
  const uint32_t version = reader.U32();
  const uint32_t length = reader.U32();
  const absl::Span<const uint8_t> credential = reader.Bytes(length);
  if (!reader.ok() || reader.left() != 0) {
    return refuse(absl::InvalidArgumentError("same-host channel: a malformed HELLO"));
  }
  if (version != sh::kVersion) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("same-host channel: version ", version, ", this node speaks ", sh::kVersion)));
  }
  std::string identity;
  if (options_.authenticate) {
    absl::StatusOr<std::string> who = options_.authenticate(credential);
    if (!who.ok()) {
      return refuse(absl::UnauthenticatedError(
          absl::StrCat("same-host channel: credential refused: ", who.status().message())));
    }
    identity = *std::move(who);
  }
  if (options_.scope_of) c.scope = options_.scope_of(identity);
  if (admitted_.fetch_add(1) >= options_.max_clients) {
    admitted_.fetch_sub(1);
    return refuse(absl::ResourceExhaustedError(
        absl::StrCat("same-host channel: ", options_.max_clients, " clients connected already")));
  }
  c.admitted = true;

  sh::Fd staging;
  if (absl::Status made = MakeStaging(options_.staging_bytes, &staging, &c.staging); !made.ok()) {
    return refuse(made);
  }
  c.staging_bytes = options_.staging_bytes;
  absl::StatusOr<tiering::internal::UniqueFd> arena = engine_->dram().OpenReadOnlyFd();
  if (!arena.ok()) return refuse(arena.status());
  sh::Writer reply;
  reply.Status(absl::OkStatus())
      .U64(engine_->dram().mapped_bytes())
      .U64(c.staging_bytes)
      .U32(options_.max_leases_per_client)
      .U32(static_cast<uint32_t>(hbm_handle_.size()));
  if (!hbm_handle_.empty()) {
    reply.U64(engine_->hbm()->capacity())
        .Bytes(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(hbm_handle_.data()),
                                   hbm_handle_.size()));
  }
  const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
  const int fds[] = {arena->get(), staging.get()};
  const absl::Status sent =
      sh::Send(c.fd.get(), sh::Type::kHelloReply, parts, fds, absl::Now() + options_.hello_timeout);
  if (!sent.ok()) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  VLOG(1) << options_.name << ": client pid " << c.peer.pid << " uid " << c.peer.uid
          << " connected (tenant \"" << identity << "\")";
  return true;
}

bool SameHostServer::HandleRead(Connection& c, absl::Span<const uint8_t> payload) {
  uint64_t request_id = 0;
  auto answer = [&](const absl::Status& status) {
    counters_.read_failures.fetch_add(1, std::memory_order_relaxed);
    sh::Writer reply;
    reply.U64(request_id).Status(status).U64(0).U32(0).U32(0);
    const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
    return Reply(c, sh::Type::kReadReply, parts);
  };
  auto malformed = [&](const absl::Status& status) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return answer(status);
  };
  if (payload.size() < wire::kReadHeaderBytes) {
    return malformed(absl::InvalidArgumentError("READ: shorter than its header"));
  }
  absl::StatusOr<wire::ReadHeader> header =
      wire::DecodeReadHeader(payload.first(wire::kReadHeaderBytes));
  if (!header.ok()) return malformed(header.status());
  request_id = header->request_id;
  absl::StatusOr<wire::ReadPayload> decoded =
      wire::DecodeReadPayload(*header, payload.subspan(wire::kReadHeaderBytes));
  if (!decoded.ok()) return malformed(decoded.status());
  absl::StatusOr<radix::Namespace> ns = internal::NamespaceOf(decoded->ns_encoding, "READ");
  if (!ns.ok()) return malformed(ns.status());
  absl::StatusOr<std::vector<core::ReadRange>> ranges = internal::ReadRangesOf(decoded->ranges);
  if (!ranges.ok()) return malformed(ranges.status());
  if (c.leases.size() >= options_.max_leases_per_client) {
    return answer(absl::ResourceExhaustedError(
        absl::StrCat("READ: ", c.leases.size(), " leases held by this connection (at most ",
                     options_.max_leases_per_client, "): release some first")));
  }
  absl::StatusOr<core::ReadReply> lease =
      engine_->Read(*ns, *ranges, absl::Milliseconds(header->lease_ttl_ms), c.scope);
  if (!lease.ok()) return answer(lease.status());

  // Items in the wire's order (range by range, layer by layer), as arena ranges.
  const uint64_t arena_bytes = engine_->dram().mapped_bytes();
  sh::Writer reply;
  const wire::ReadItems items(decoded->ranges);
  reply.U64(request_id).Status(absl::OkStatus()).U64(lease->lease_id).U32(items.total()).U32(0);
  uint64_t granted = 0;
  for (const core::ReadRangeReply& r : lease->ranges) {
    for (const radix::ByteRange& bytes : r.layer_ranges) {
      const uint64_t at = r.arena_offset + bytes.offset;
      if (at < r.arena_offset || at > arena_bytes || bytes.length > arena_bytes - at) {
        (void)engine_->Release(lease->lease_id, c.scope);
        LOG(ERROR) << options_.name << ": a leased range lies outside the arena";
        return answer(absl::InternalError("READ: a leased range lies outside the arena"));
      }
      reply.U64(at).U64(bytes.length);
      granted += bytes.length;
    }
  }
  for (const core::ReadRangeReply& r : lease->ranges) {
    reply.Bytes(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(r.checksums.data()),
                                    r.checksums.size() * sizeof(uint64_t)));
  }
  if (!hbm_handle_.empty()) {
    // Where each item's HBM copy is, if its blob has one (under the same lease).
    uint64_t from_hbm = 0;
    for (const core::ReadRangeReply& r : lease->ranges) {
      for (const radix::ByteRange& bytes : r.layer_ranges) {
        reply.U64(r.hbm_offset.has_value() ? *r.hbm_offset + bytes.offset : sh::kNoHbm);
        if (r.hbm_offset.has_value()) from_hbm += bytes.length;
      }
    }
    counters_.bytes_granted_hbm.fetch_add(from_hbm, std::memory_order_relaxed);
  }
  c.leases.insert(lease->lease_id);
  counters_.reads.fetch_add(1, std::memory_order_relaxed);
  counters_.bytes_granted.fetch_add(granted, std::memory_order_relaxed);
  const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
  return Reply(c, sh::Type::kReadReply, parts);
}

bool SameHostServer::HandleRelease(Connection& c, absl::Span<const uint8_t> payload) {
  sh::Reader reader(payload);
  const uint64_t lease = reader.U64();
  if (!reader.ok() || reader.left() != 0 || !c.leases.contains(lease)) {
    // Another connection's lease, or none: this client cannot end it.
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  c.leases.erase(lease);
  (void)engine_->Release(lease, c.scope);  // NOT_FOUND: it expired meanwhile
  return true;
}

bool SameHostServer::HandleLeaseCheck(Connection& c, absl::Span<const uint8_t> payload) {
  sh::Reader reader(payload);
  const uint64_t lease = reader.U64();
  const uint32_t release = reader.U32();
  absl::Status status;
  if (!reader.ok() || reader.left() != 0 || release > 1) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    status = absl::InvalidArgumentError("LEASE_CHECK: malformed");
  } else if (!c.leases.contains(lease)) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    status = absl::NotFoundError(
        absl::StrCat("LEASE_CHECK: lease ", lease, " is not this connection's"));
  } else {
    status = release == 1 ? engine_->Release(lease, c.scope) : engine_->CheckLease(lease, c.scope);
    if (release == 1) c.leases.erase(lease);
    if (absl::IsNotFound(status)) {
      counters_.leases_expired_in_copy.fetch_add(1, std::memory_order_relaxed);
      status = absl::AbortedError(absl::StrCat(
          "lease ", lease, " expired before the copies under it were checked: read again"));
    }
  }
  sh::Writer reply;
  reply.Status(status);
  const absl::Span<const uint8_t> parts[] = {View(reply.bytes())};
  return Reply(c, sh::Type::kLeaseCheckReply, parts);
}

bool SameHostServer::HandlePut(Connection& c, absl::Span<const uint8_t> payload) {
  wire::PutResultHeader result{.stage = wire::PutResultHeader::Stage::kFinal};
  auto finish = [&](absl::Status status) {
    if (status.ok()) {
      counters_.puts.fetch_add(1, std::memory_order_relaxed);
    } else {
      counters_.put_failures.fetch_add(1, std::memory_order_relaxed);
    }
    result.status = std::move(status);
    const std::vector<uint8_t> reply = wire::EncodePutResult(result);
    const absl::Span<const uint8_t> parts[] = {View(reply)};
    return Reply(c, sh::Type::kPutReply, parts);
  };
  auto malformed = [&](absl::Status status) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    return finish(std::move(status));
  };
  sh::Reader reader(payload);
  const uint64_t offset = reader.U64();
  const absl::Span<const uint8_t> header_bytes = reader.Bytes(wire::kPutHeaderBytes);
  if (!reader.ok()) return malformed(absl::InvalidArgumentError("PUT: shorter than its header"));
  absl::StatusOr<wire::PutHeader> header = wire::DecodePutHeader(header_bytes);
  if (!header.ok()) return malformed(header.status());
  result.request_id = header->request_id;
  absl::StatusOr<wire::PutPayload> decoded = wire::DecodePutPayload(*header, reader.rest());
  if (!decoded.ok()) return malformed(decoded.status());
  absl::StatusOr<radix::Namespace> ns = internal::NamespaceOf(decoded->ns_encoding, "PUT");
  if (!ns.ok()) return malformed(ns.status());
  if (offset > c.staging_bytes || header->bytes > c.staging_bytes - offset) {
    return malformed(absl::OutOfRangeError(
        absl::StrCat("PUT: bytes [", offset, ", +", header->bytes,
                     ") are not inside the staging file of ", c.staging_bytes, " bytes")));
  }
  absl::StatusOr<core::BeginPutReply> begun =
      engine_->BeginPut(*ns, internal::PutRequestOf(*header, *decoded), c.scope);
  if (!begun.ok()) return finish(begun.status());
  result.key = BitsOf(begun->key);
  if (begun->exists) {
    result.exists = true;
    return finish(absl::OkStatus());
  }
  // Copy out of the client's staging file into the put's own extent; the commit verifies
  // every chunk there, where the client cannot write.
  absl::Status status;
  {
    absl::StatusOr<core::HeldSpan> target = engine_->PutTarget(begun->put_id, c.scope);
    status = target.status();
    if (status.ok()) {
      std::memcpy(target->data(), c.staging + offset, header->bytes);
      status = engine_->PutReceived(begun->put_id, 0, header->bytes, c.scope);
    }
  }  // the HeldSpan goes before the commit
  absl::StatusOr<core::CommitPutReply> committed =
      status.ok() ? engine_->CommitPut(begun->put_id, c.scope) : status;
  if (!committed.ok()) {
    // After a DATA_LOSS the commit aborted the put already (NOT_FOUND here then).
    (void)engine_->AbortPut(begun->put_id, c.scope);
    return finish(committed.status());
  }
  counters_.bytes_put.fetch_add(header->bytes, std::memory_order_relaxed);
  result.indexed_pages = committed->indexed_pages;
  return finish(absl::OkStatus());
}

}  // namespace strata::store::dataplane
