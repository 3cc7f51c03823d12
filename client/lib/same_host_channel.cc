#include "client/lib/same_host_channel.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "client/lib/chunk_verify.h"
#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"
#include "strata/radix/prefix_hash.h"

namespace strata::client_internal {

namespace sh = store::transport::same_host;
namespace wire = store::transport::wire;

namespace {

// Bytes copied before they are verified: small enough to be verified from cache.
constexpr uint64_t kVerifyBlockBytes = uint64_t{256} << 10;

absl::Status Malformed(const char* what) {
  return absl::UnavailableError(
      absl::StrCat("same-host channel: a malformed ", what, " from the node"));
}

}  // namespace

struct SameHostChannel::Greeting {
  sh::Fd fd;
  sh::Fd arena;
  sh::Fd staging;
  uint64_t arena_bytes = 0;
  uint64_t staging_bytes = 0;
  std::string hbm_handle;
  uint64_t hbm_bytes = 0;
};

SameHostChannel::Connection::~Connection() {
  if (staging != nullptr) ::munmap(staging, staging_bytes);
}

SameHostChannel::~SameHostChannel() {
  {
    absl::MutexLock lock(&mu_);
    idle_.clear();
  }
  {
    absl::MutexLock lock(&register_mu_);
    for (const auto& [device, base] : hbm_open_) {
      absl::Status s = device->CloseIpc(base);
      LOG_IF(WARNING, !s.ok()) << "same-host channel: closing the node's HBM pool: " << s;
    }
    for (gpu::Device* device : registered_) {
      absl::Status s = device->UnregisterHost(const_cast<std::byte*>(arena_));
      LOG_IF(WARNING, !s.ok()) << "same-host channel: unregistering the arena: " << s;
    }
  }
  if (arena_ != nullptr) ::munmap(const_cast<std::byte*>(arena_), arena_bytes_);
}

absl::StatusOr<SameHostChannel::Greeting> SameHostChannel::Hello(const Options& options,
                                                                 absl::Time deadline) {
  Greeting greeting;
  STRATA_ASSIGN_OR_RETURN(greeting.fd, sh::Connect(options.socket, deadline));
  sh::Writer hello;
  hello.U32(sh::kVersion)
      .U32(static_cast<uint32_t>(options.credential.size()))
      .Bytes(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(options.credential.data()),
                                 options.credential.size()));
  const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(hello.bytes())};
  // A node that refuses at once (too many clients) may have closed before the HELLO
  // arrived: its reply is still there to read.
  const absl::Status sent = sh::Send(greeting.fd.get(), sh::Type::kHello, parts, {}, deadline);
  absl::StatusOr<sh::Frame> received = sh::Receive(greeting.fd.get(), 4096, deadline);
  if (!received.ok()) return sent.ok() ? received.status() : sent;
  sh::Frame& reply = *received;
  if (reply.type != sh::Type::kHelloReply) return Malformed("HELLO_REPLY");
  sh::Reader reader(reply.payload);
  const absl::Status status = reader.Status();
  if (!status.ok()) {
    if (status.code() == absl::StatusCode::kUnauthenticated) return status;
    return absl::UnavailableError(absl::StrCat("same-host channel refused: ", status.ToString()));
  }
  greeting.arena_bytes = reader.U64();
  greeting.staging_bytes = reader.U64();
  (void)reader.U32();  // max leases
  const uint32_t handle_bytes = reader.U32();
  if (handle_bytes > 0 && handle_bytes <= 1024) {
    greeting.hbm_bytes = reader.U64();
    const absl::Span<const uint8_t> handle = reader.Bytes(handle_bytes);
    greeting.hbm_handle.assign(reinterpret_cast<const char*>(handle.data()), handle.size());
  }
  if (!reader.ok() || reply.fds.size() != 2 || greeting.arena_bytes == 0 || handle_bytes > 1024) {
    return Malformed("HELLO_REPLY");
  }
  greeting.arena = std::move(reply.fds[0]);
  greeting.staging = std::move(reply.fds[1]);
  return greeting;
}

absl::StatusOr<std::unique_ptr<SameHostChannel>> SameHostChannel::Open(Options options,
                                                                       absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(Greeting greeting, Hello(options, deadline));
  std::unique_ptr<SameHostChannel> channel(new SameHostChannel(std::move(options)));
  void* arena =
      ::mmap(nullptr, greeting.arena_bytes, PROT_READ, MAP_SHARED, greeting.arena.get(), 0);
  if (arena == MAP_FAILED) return base::ErrnoToStatus(errno, "mmap(the node's DRAM arena)");
  channel->arena_ = static_cast<const std::byte*>(arena);
  channel->arena_bytes_ = greeting.arena_bytes;
  struct stat st;
  if (::fstat(greeting.arena.get(), &st) != 0) return base::ErrnoToStatus(errno, "fstat");
  channel->arena_dev_ = st.st_dev;
  channel->arena_ino_ = st.st_ino;
  channel->staging_bytes_ = greeting.staging_bytes;
  channel->hbm_handle_ = greeting.hbm_handle;
  channel->hbm_bytes_ = greeting.hbm_bytes;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Connection> first, channel->Adopt(std::move(greeting)));
  absl::MutexLock lock(&channel->mu_);
  channel->idle_.push_back(std::move(first));
  channel->open_ = 1;
  return channel;
}

absl::StatusOr<std::unique_ptr<SameHostChannel::Connection>> SameHostChannel::Adopt(
    Greeting greeting) {
  struct stat st;
  if (::fstat(greeting.arena.get(), &st) != 0) return base::ErrnoToStatus(errno, "fstat");
  if (static_cast<uint64_t>(st.st_dev) != arena_dev_ ||
      static_cast<uint64_t>(st.st_ino) != arena_ino_ || greeting.arena_bytes != arena_bytes_ ||
      greeting.staging_bytes != staging_bytes_ || greeting.hbm_handle != hbm_handle_ ||
      greeting.hbm_bytes != hbm_bytes_) {
    return absl::UnavailableError("same-host channel: the node's arena changed (restarted?)");
  }
  auto connection = std::make_unique<Connection>();
  void* staging = ::mmap(nullptr, greeting.staging_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                         greeting.staging.get(), 0);
  if (staging == MAP_FAILED) return base::ErrnoToStatus(errno, "mmap(staging file)");
  connection->staging = static_cast<std::byte*>(staging);
  connection->staging_bytes = greeting.staging_bytes;
  connection->fd = std::move(greeting.fd);
  return connection;
}

absl::StatusOr<std::unique_ptr<SameHostChannel::Connection>> SameHostChannel::Take(
    absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < options_.max_connections;
    };
    if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
      return absl::DeadlineExceededError("same-host channel: no connection free by the deadline");
    }
    if (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
    ++open_;
  }
  absl::StatusOr<Greeting> greeting = Hello(options_, deadline);
  if (!greeting.ok() && greeting.status().code() == absl::StatusCode::kUnauthenticated) {
    // The credential the channel opened with has expired: the caller falls back to UCX and
    // the channel is opened again with a fresh one.
    greeting =
        absl::UnavailableError(absl::StrCat("same-host channel: ", greeting.status().message()));
  }
  absl::StatusOr<std::unique_ptr<Connection>> c =
      greeting.ok() ? Adopt(*std::move(greeting)) : greeting.status();
  if (!c.ok()) {
    absl::MutexLock lock(&mu_);
    --open_;
    // The node refused one more connection (its client limit, an expired credential) but
    // serves the ones this channel has: wait for one of those.
    if (open_ > 0) {
      auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !idle_.empty(); };
      if (mu_.AwaitWithDeadline(absl::Condition(&idle), deadline)) {
        std::unique_ptr<Connection> connection = std::move(idle_.back());
        idle_.pop_back();
        return connection;
      }
      return absl::DeadlineExceededError("same-host channel: no connection free by the deadline");
    }
  }
  return c;
}

absl::Status SameHostChannel::RegisterWith(gpu::Device& device) {
  // Pinning a large arena takes a while: not under mu_, which every call's Take needs.
  absl::MutexLock lock(&register_mu_);
  if (std::find(registered_.begin(), registered_.end(), &device) != registered_.end()) {
    return absl::OkStatus();
  }
  if (std::find(unregistrable_.begin(), unregistrable_.end(), &device) != unregistrable_.end()) {
    return absl::FailedPreconditionError("the arena could not be registered with this device");
  }
  absl::Status registered =
      device.RegisterHost(const_cast<std::byte*>(arena_), arena_bytes_, /*read_only=*/true);
  if (!registered.ok()) {
    LOG(WARNING) << "same-host channel: the node's arena (" << arena_bytes_
                 << " bytes) cannot be registered with " << device.name() << " (" << registered
                 << "): device reads go through the pinned staging pool";
    unregistrable_.push_back(&device);
    return registered;
  }
  registered_.push_back(&device);
  return absl::OkStatus();
}

const std::byte* SameHostChannel::HbmOn(gpu::Device& device) {
  if (hbm_handle_.empty()) return nullptr;
  absl::MutexLock lock(&register_mu_);
  for (const auto& [d, base] : hbm_open_) {
    if (d == &device) return static_cast<const std::byte*>(base);
  }
  if (std::find(hbm_unopenable_.begin(), hbm_unopenable_.end(), &device) != hbm_unopenable_.end()) {
    return nullptr;
  }
  absl::StatusOr<void*> base = device.OpenIpc(hbm_handle_);
  if (!base.ok()) {
    LOG(INFO) << "same-host channel: the node's HBM tier cannot be opened on " << device.name()
              << " (" << base.status() << "): its blobs come from the DRAM arena";
    hbm_unopenable_.push_back(&device);
    return nullptr;
  }
  hbm_open_.emplace_back(&device, *base);
  return static_cast<const std::byte*>(*base);
}

void SameHostChannel::Give(std::unique_ptr<Connection> connection) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

void SameHostChannel::Drop(std::unique_ptr<Connection> connection) {
  connection.reset();
  absl::MutexLock lock(&mu_);
  --open_;
}

absl::Status SameHostChannel::Read(wire::ReadHeader header, absl::Span<const uint8_t> payload,
                                   absl::Span<const PlannedRange> ranges,
                                   absl::Span<const wire::ReadRangeBits> wire_ranges,
                                   uint64_t chunk_bytes, uint32_t num_layers,
                                   const Client::LayerCallback* on_layer, absl::Time deadline,
                                   bool* delivered, uint64_t* checksum_failures,
                                   const DeviceTarget* device) {
  bool hbm_failed = false;
  absl::Status status = ReadOnce(header, payload, ranges, wire_ranges, chunk_bytes, num_layers,
                                 on_layer, deadline, delivered, checksum_failures, device,
                                 /*use_hbm=*/true, &hbm_failed);
  if (hbm_failed && !*delivered) {
    // A copy from the node's HBM tier did not verify (its pool is writable by the processes
    // that opened it) and nothing was handed on yet: read again from the arena, whose
    // copy is the node's own. (ReadLayers that handed on a layer answers DATA_LOSS.)
    LOG(WARNING) << "same-host channel: " << status.message()
                 << " (a copy from the node's HBM tier); reading from its DRAM arena";
    status =
        ReadOnce(header, payload, ranges, wire_ranges, chunk_bytes, num_layers, on_layer, deadline,
                 delivered, checksum_failures, device, /*use_hbm=*/false, &hbm_failed);
  }
  return status;
}

absl::Status SameHostChannel::ReadOnce(wire::ReadHeader header, absl::Span<const uint8_t> payload,
                                       absl::Span<const PlannedRange> ranges,
                                       absl::Span<const wire::ReadRangeBits> wire_ranges,
                                       uint64_t chunk_bytes, uint32_t num_layers,
                                       const Client::LayerCallback* on_layer, absl::Time deadline,
                                       bool* delivered, uint64_t* checksum_failures,
                                       const DeviceTarget* device, bool use_hbm, bool* hbm_failed) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, Take(deadline));
  header.request_id = next_request_.fetch_add(1, std::memory_order_relaxed);
  const auto encoded = wire::EncodeReadHeader(header);
  const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(encoded), payload};
  absl::StatusOr<sh::Frame> reply = [&]() -> absl::StatusOr<sh::Frame> {
    STRATA_RETURN_IF_ERROR(sh::Send(c->fd.get(), sh::Type::kRead, parts, {}, deadline));
    return sh::Receive(c->fd.get(), sh::kMaxReplyBytes, deadline);
  }();
  if (!reply.ok() || reply->type != sh::Type::kReadReply) {
    Drop(std::move(c));
    return reply.ok() ? Malformed("READ_REPLY") : reply.status();
  }
  sh::Reader reader(reply->payload);
  const uint64_t request_id = reader.U64();
  const absl::Status status = reader.Status();
  const uint64_t lease = reader.U64();
  const uint32_t count = reader.U32();
  (void)reader.U32();
  const wire::ReadItems items(wire_ranges);
  if (!reader.ok() || request_id != header.request_id) {
    Drop(std::move(c));
    return Malformed("READ_REPLY");
  }
  if (!status.ok()) {
    Give(std::move(c));
    return status;
  }
  // Device-to-device copies from the node's HBM tier: whether any was made, and its bytes.
  bool used_hbm = false;
  uint64_t hbm_copied = 0;
  // The lease is this connection's now: release it however the copy ends (dropping the
  // connection releases it too).
  auto release = [&](absl::Status result) -> absl::Status {
    // No DMA of this read may still be reading the leased bytes once the lease goes.
    if (device != nullptr) (void)device->device->Synchronize(*device->stream);
    if (result.ok() && used_hbm && device->hbm_bytes != nullptr) {
      device->hbm_bytes->fetch_add(hbm_copied, std::memory_order_relaxed);
    }
    sh::Writer message;
    message.U64(lease);
    const absl::Span<const uint8_t> release_parts[] = {absl::MakeConstSpan(message.bytes())};
    if (sh::Send(c->fd.get(), sh::Type::kRelease, release_parts, {}, deadline).ok()) {
      Give(std::move(c));
    } else {
      Drop(std::move(c));
    }
    return result;
  };
  const absl::Span<const uint8_t> places = reader.Bytes(uint64_t{count} * 16);
  const absl::Span<const uint8_t> sums = reader.Bytes(items.total_checksums() * sizeof(uint64_t));
  const absl::Span<const uint8_t> hbm_places =
      shares_hbm() ? reader.Bytes(uint64_t{count} * sizeof(uint64_t)) : absl::Span<const uint8_t>();
  if (!reader.ok() || count != items.total() || reader.left() != 0 ||
      sums.size() != items.total_checksums() * sizeof(uint64_t)) {
    return release(Malformed("READ_REPLY"));
  }
  // The pool's base on the destination device, where HBM copies are offered and usable.
  const std::byte* hbm =
      use_hbm && device != nullptr && !hbm_places.empty() ? HbmOn(*device->device) : nullptr;
  // Item `item`'s offset in the HBM pool, or kNoHbm.
  auto hbm_place = [&](uint32_t item) {
    if (hbm == nullptr) return sh::kNoHbm;
    sh::Reader at(hbm_places.subspan(uint64_t{item} * sizeof(uint64_t), sizeof(uint64_t)));
    return at.U64();
  };
  auto place = [&](uint32_t item, uint64_t* offset, uint64_t* length) {
    sh::Reader at(places.subspan(uint64_t{item} * 16, 16));
    *offset = at.U64();
    *length = at.U64();
  };
  auto checksum = [&](uint64_t index) {
    uint64_t v;
    std::memcpy(&v, sums.data() + index * sizeof(uint64_t), sizeof(v));
    return v;
  };
  std::vector<uint64_t> expected;
  // Range i's layer: where it is in the arena, and where its checksums start.
  auto locate = [&](size_t i, uint32_t layer, uint64_t* offset,
                    uint64_t* first_sum) -> absl::Status {
    const PlannedRange& r = ranges[i];
    uint64_t length = 0;
    place(items.Item(i, layer), offset, &length);
    if (length != uint64_t{r.num_pages} * chunk_bytes || *offset > arena_bytes_ ||
        length > arena_bytes_ - *offset) {
      return Malformed("READ_REPLY (an item outside the arena)");
    }
    *first_sum = items.FirstChecksum(i) + uint64_t{layer - r.layer_begin} * r.num_pages;
    return absl::OkStatus();
  };
  auto verify = [&](absl::Span<const std::byte> bytes, uint64_t first_sum, const PlannedRange& r,
                    uint32_t layer, uint32_t page, uint32_t n) -> absl::Status {
    expected.resize(n);
    for (uint32_t k = 0; k < n; ++k) expected[k] = checksum(first_sum + k);
    absl::Status verified = VerifyLayerRun(bytes, chunk_bytes, expected, r.blob, layer, page);
    if (!verified.ok()) ++*checksum_failures;
    return verified;
  };
  // Into device memory: DMA each item of `layer` (all layers: -1) straight out of the
  // arena, wait for the copies, then verify their source (see DeviceTarget).
  // Items with an HBM copy are copied device to device instead and verified where they
  // landed: the device checksums the destination (the pool is writable by every process
  // that opened it, so its bytes are checked like any received ones). A mismatch there is
  // DATA_LOSS with *hbm_failed set: Read reads again from the arena.
  std::vector<uint64_t> computed;
  auto dma = [&](int64_t layer) -> absl::Status {
    std::vector<std::pair<size_t, uint32_t>> done;
    std::vector<std::pair<size_t, uint32_t>> from_hbm;
    for (size_t i = 0; i < ranges.size(); ++i) {
      const PlannedRange& r = ranges[i];
      for (uint32_t l = r.layer_begin; l < r.layer_end; ++l) {
        if (layer >= 0 && l != layer) continue;
        uint64_t offset = 0;
        uint64_t first_sum = 0;
        STRATA_RETURN_IF_ERROR(locate(i, l, &offset, &first_sum));
        const uint64_t length = uint64_t{r.num_pages} * chunk_bytes;
        const uint64_t at = hbm_place(items.Item(i, l));
        if (at != sh::kNoHbm) {
          if (at > hbm_bytes_ || length > hbm_bytes_ - at) {
            return Malformed("READ_REPLY (an item outside the HBM pool)");
          }
          STRATA_RETURN_IF_ERROR(device->device->CopyDeviceToDeviceAsync(
              r.layer_dest[l - r.layer_begin], hbm + at, length, *device->stream));
          used_hbm = true;
          hbm_copied += length;
          from_hbm.emplace_back(i, l);
          continue;
        }
        STRATA_RETURN_IF_ERROR(device->device->CopyToDeviceAsync(
            r.layer_dest[l - r.layer_begin], arena_ + offset, length, *device->stream));
        done.emplace_back(i, l);
      }
    }
    STRATA_RETURN_IF_ERROR(device->device->Synchronize(*device->stream));
    for (const auto& [i, l] : from_hbm) {
      const PlannedRange& r = ranges[i];
      uint64_t offset = 0;
      uint64_t first_sum = 0;
      STRATA_RETURN_IF_ERROR(locate(i, l, &offset, &first_sum));
      computed.resize(r.num_pages);
      STRATA_RETURN_IF_ERROR(
          device->device->ChecksumChunks(r.layer_dest[l - r.layer_begin], chunk_bytes, r.num_pages,
                                         radix::kPrefixHashSeed, computed.data(), *device->stream));
      expected.resize(r.num_pages);
      for (uint32_t k = 0; k < r.num_pages; ++k) expected[k] = checksum(first_sum + k);
      if (absl::Status s = CompareLayerRun(computed, expected, r.blob, l, r.first_page); !s.ok()) {
        ++*checksum_failures;
        *hbm_failed = true;
        return s;
      }
    }
    for (const auto& [i, l] : done) {
      const PlannedRange& r = ranges[i];
      uint64_t offset = 0;
      uint64_t first_sum = 0;
      STRATA_RETURN_IF_ERROR(locate(i, l, &offset, &first_sum));
      STRATA_RETURN_IF_ERROR(
          verify(absl::MakeConstSpan(arena_ + offset, uint64_t{r.num_pages} * chunk_bytes),
                 first_sum, r, l, r.first_page, r.num_pages));
    }
    return absl::OkStatus();
  };
  // Copies range i's layer out of the arena, a block at a time, each verified from cache.
  auto copy = [&](size_t i, uint32_t layer) -> absl::Status {
    const PlannedRange& r = ranges[i];
    const uint32_t j = layer - r.layer_begin;
    uint64_t offset = 0;
    uint64_t first_sum = 0;
    STRATA_RETURN_IF_ERROR(locate(i, layer, &offset, &first_sum));
    const uint32_t block =
        static_cast<uint32_t>(std::max<uint64_t>(1, kVerifyBlockBytes / chunk_bytes));
    for (uint32_t p = 0; p < r.num_pages; p += block) {
      const uint32_t n = std::min(block, r.num_pages - p);
      std::byte* dest = r.layer_dest[j] + uint64_t{p} * chunk_bytes;
      std::memcpy(dest, arena_ + offset + uint64_t{p} * chunk_bytes, uint64_t{n} * chunk_bytes);
      STRATA_RETURN_IF_ERROR(verify(absl::MakeConstSpan(dest, uint64_t{n} * chunk_bytes),
                                    first_sum + p, r, layer, r.first_page + p, n));
    }
    return absl::OkStatus();
  };
  if (device != nullptr && on_layer == nullptr) return release(dma(-1));
  if (on_layer != nullptr) {
    for (uint32_t layer = 0; layer < num_layers; ++layer) {
      if (device != nullptr) {
        if (absl::Status s = dma(layer); !s.ok()) return release(s);
      }
      for (size_t i = 0; i < ranges.size() && device == nullptr; ++i) {
        if (layer < ranges[i].layer_begin || layer >= ranges[i].layer_end) continue;
        if (absl::Status s = copy(i, layer); !s.ok()) return release(s);
      }
      *delivered = true;
      if (absl::Status s = (*on_layer)(layer); !s.ok()) return release(s);
    }
  } else {
    for (size_t i = 0; i < ranges.size(); ++i) {
      for (uint32_t layer = ranges[i].layer_begin; layer < ranges[i].layer_end; ++layer) {
        if (absl::Status s = copy(i, layer); !s.ok()) return release(s);
      }
    }
  }
  return release(absl::OkStatus());
}

absl::StatusOr<DataPlane::PutOutcome> SameHostChannel::Put(wire::PutHeader header,
                                                           absl::Span<const uint8_t> metadata,
                                                           absl::Span<const uint8_t> bytes,
                                                           absl::Time deadline,
                                                           const DeviceTarget* device) {
  if (bytes.size() != header.bytes || bytes.size() > staging_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "same-host PUT of ", bytes.size(), " bytes: the staging file holds ", staging_bytes_));
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, Take(deadline));
  if (!bytes.empty() && device != nullptr) {
    absl::Status copied =
        device->device->CopyToHostAsync(c->staging, bytes.data(), bytes.size(), *device->stream);
    if (copied.ok()) copied = device->device->Synchronize(*device->stream);
    if (!copied.ok()) {
      Give(std::move(c));
      return copied;
    }
  } else if (!bytes.empty()) {
    std::memcpy(c->staging, bytes.data(), bytes.size());
  }
  header.request_id = next_request_.fetch_add(1, std::memory_order_relaxed);
  sh::Writer offset;
  offset.U64(0);
  const auto encoded = wire::EncodePutHeader(header);
  const absl::Span<const uint8_t> parts[] = {absl::MakeConstSpan(offset.bytes()),
                                             absl::MakeConstSpan(encoded), metadata};
  absl::StatusOr<sh::Frame> reply = [&]() -> absl::StatusOr<sh::Frame> {
    STRATA_RETURN_IF_ERROR(sh::Send(c->fd.get(), sh::Type::kPut, parts, {}, deadline));
    return sh::Receive(c->fd.get(), sh::kMaxReplyBytes, deadline);
  }();
  if (!reply.ok()) {
    Drop(std::move(c));
    return reply.status();
  }
  absl::StatusOr<wire::PutResultHeader> result = reply->type == sh::Type::kPutReply
                                                     ? wire::DecodePutResult(reply->payload)
                                                     : Malformed("PUT_REPLY");
  if (!result.ok() || result->request_id != header.request_id) {
    Drop(std::move(c));
    return Malformed("PUT_REPLY");
  }
  Give(std::move(c));
  STRATA_RETURN_IF_ERROR(result->status);
  return DataPlane::PutOutcome{
      .key = radix::BlobKey{radix::PrefixHash{.hi = result->key.hi, .lo = result->key.lo}},
      .exists = result->exists,
      .indexed_pages = result->indexed_pages};
}

}  // namespace strata::client_internal
