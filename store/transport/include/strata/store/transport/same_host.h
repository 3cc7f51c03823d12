// The same-host channel: how a client on the node's host reads blobs straight out of the
// node's DRAM arena and hands it blobs to put, over a UNIX-domain stream socket. Both ends
// use this file: the framing, the messages, and blocking socket I/O with deadlines and
// descriptor passing (SCM_RIGHTS). Design: docs/design/same-host.md.
//
// Framing. Every message is a 16-byte frame header, then `length` payload bytes
// (little-endian):
//   0  4  magic   0x31484d53 ("SMH1")
//   4  2  type    Type below
//   6  2  zero
//   8  8  length  payload bytes; a receiver refuses more than its limit (kMaxRequestBytes at
//                 the node) before reading any of them
// A frame may carry descriptors (SCM_RIGHTS) with its first byte; only HELLO_REPLY does.
//
// Messages (client -> node, then node -> client):
//   HELLO        u32 version (1), u32 n, n credential bytes (Store.OpenDataPlane's; empty on
//                an open node)
//   HELLO_REPLY  status, u64 arena_bytes, u64 staging_bytes, u32 max_leases, u32 n; when
//                n > 0: u64 hbm_bytes, n bytes: the node's HBM pool as a gpu::Device IPC
//                handle (shared only where the node is told to: see SameHostOptions);
//                when OK two descriptors: the arena (read-only, write-sealed: the client maps
//                it PROT_READ) and the connection's staging file (read-write, size-sealed)
//   READ         wire::ReadHeader + its payload, exactly as on the UCX data plane
//   READ_REPLY   u64 request_id, status, u64 lease_id, u32 items, u32 zero, items x {u64
//                arena offset, u64 length} in wire::ReadItems order, then every item's chunk
//                checksums in the same order (u64 each), then — where HELLO_REPLY shared the
//                HBM pool — items x u64 HBM pool offset (kNoHbm: the blob has no HBM copy).
//                The client copies each item out of its mapping of the arena (or an HBM
//                item device to device), verifies it (on its device for device memory),
//                then sends RELEASE.
//   LEASE_CHECK  u64 lease_id, u32 release (0 or 1): whether the lease is still live — it
//                was then live all along, so no byte under it was freed or reused — and
//                with release = 1 ends it as RELEASE does: for a reader of HBM copies that
//                cannot checksum device memory (strata's client verifies instead)
//   LEASE_CHECK_REPLY  status: OK live; ABORTED expired (copies made under it may hold
//                other bytes: read again); NOT_FOUND not this connection's lease
//   RELEASE      u64 lease_id (no answer; the node also releases a connection's leases when
//                it closes)
//   PUT          u64 staging offset, then wire::PutHeader + its payload as on the UCX data
//                plane: the blob's bytes are [offset, offset + header.bytes) of the staging
//                file. The node copies them into the put's own extent, then verifies every
//                chunk there (where the client cannot write) and commits.
//   PUT_REPLY    wire::EncodePutResult (stage final)
// A status is u32 code, u32 n, n message bytes (at most kMaxStatusMessage).
//
// Thread-compatible free functions; every descriptor they return is close-on-exec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace strata::store::transport::same_host {

inline constexpr uint32_t kMagic = 0x31484d53;
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kFrameBytes = 16;
// The most a node reads of one client message: a PUT's metadata (tokens and checksums, up
// to ~16 MiB) or a READ's range list (128 KiB), with room to spare.
inline constexpr uint64_t kMaxRequestBytes = uint64_t{24} << 20;
// The most a client reads of one node message: a READ_REPLY of wire::kMaxReadChunks
// checksums and its items.
inline constexpr uint64_t kMaxReplyBytes = uint64_t{80} << 20;
inline constexpr size_t kMaxStatusMessage = 1024;
inline constexpr size_t kMaxFds = 2;

enum class Type : uint16_t {
  kHello = 1,
  kHelloReply = 2,
  kRead = 3,
  kReadReply = 4,
  kRelease = 5,
  kPut = 6,
  kPutReply = 7,
  kLeaseCheck = 8,
  kLeaseCheckReply = 9,
};

// A READ_REPLY item without an HBM copy.
inline constexpr uint64_t kNoHbm = ~uint64_t{0};

// An owned descriptor (closed on destruction).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

struct Frame {
  Type type = Type::kHello;
  std::vector<uint8_t> payload;
  std::vector<Fd> fds;  // received with the frame (at most kMaxFds; more are closed)
};

// Socket names: "@name" is Linux's abstract namespace (no file; gone with the listener),
// anything else a file path (at most 107 bytes).
// Listens on `name`; a file path is unlinked first if it is a stale socket. UNAVAILABLE when
// the name is in use; INVALID_ARGUMENT too long or empty.
absl::StatusOr<Fd> Listen(const std::string& name, int backlog);
// Connects to `name`, waiting at most until `deadline`. UNAVAILABLE refused or absent.
absl::StatusOr<Fd> Connect(const std::string& name, absl::Time deadline);
// Accepts one connection (non-blocking listener: UNAVAILABLE when none waits).
absl::StatusOr<Fd> Accept(int listener);
// The peer's process, user and group ids (SO_PEERCRED).
struct PeerIds {
  int pid = 0;
  unsigned uid = 0;
  unsigned gid = 0;
};
absl::StatusOr<PeerIds> PeerOf(int fd);

// Sends one frame of `type` whose payload is the concatenation of `parts`, with `fds`
// attached. DEADLINE_EXCEEDED when the peer does not take it by `deadline`; UNAVAILABLE when
// the connection is gone.
absl::Status Send(int fd, Type type, absl::Span<const absl::Span<const uint8_t>> parts,
                  absl::Span<const int> fds, absl::Time deadline);
// Receives one frame; its payload must be at most `max_payload` bytes (INVALID_ARGUMENT
// otherwise, nothing of it read: the caller closes the connection). INVALID_ARGUMENT a bad
// magic, type or zero field; UNAVAILABLE the peer closed (before or within the frame);
// DEADLINE_EXCEEDED the frame did not arrive whole by `deadline`.
absl::StatusOr<Frame> Receive(int fd, uint64_t max_payload, absl::Time deadline);
// Waits until `fd` is readable or `wake` (an eventfd, or -1) is: true for `fd`. Used by the
// node to wait for a client's next request without a deadline.
bool WaitReadable(int fd, int wake);

// ---- message bodies

// Appends / reads little-endian integers and statuses.
class Writer {
 public:
  Writer& U32(uint32_t v);
  Writer& U64(uint64_t v);
  Writer& Bytes(absl::Span<const uint8_t> b);
  Writer& Status(const absl::Status& status);
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads fields in order; once a read runs past the end every later one fails too, and
// ok() is false (the message is malformed).
class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  uint32_t U32();
  uint64_t U64();
  absl::Span<const uint8_t> Bytes(size_t n);
  absl::Status Status();
  absl::Span<const uint8_t> rest() const { return bytes_.subspan(at_); }
  size_t left() const { return bytes_.size() - at_; }
  bool ok() const { return ok_; }

 private:
  absl::Span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace strata::store::transport::same_host
