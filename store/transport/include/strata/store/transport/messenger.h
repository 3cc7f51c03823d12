// Messenger: active messages between processes, UCX inside, transport-neutral API.
//
// A Messenger owns one UCX context and worker, driven by one progress thread that it starts
// and owns; every UCX call happens on that thread. Other threads hand it work through a
// queue and wake it through an eventfd (no busy-polling while idle). It can listen for
// peers (Listen), connect to peers (Connect), send messages (Send) and dispatch received
// messages to handlers registered per message id (RegisterHandler).
//
// A message is (id, header, payload). The header (at most max_header_size() bytes, about
// 8 KiB with UCX 1.13) always travels eagerly and is copied by Send. The payload is sent
// zero-copy from the caller's buffer: DataProtocol::kRendezvous (UCP_AM_SEND_FLAG_RNDV, used
// for all bulk data) announces it and lets the receiver pull it straight into the buffer its
// handler picks (IncomingData::Accept) — over CMA a single process_vm_readv, over TCP a
// pipelined copy off the socket, never a bounce through an intermediate buffer on the
// receiver. kEager pushes small payloads along with the header.
//
// Peers are PeerIds, never reused within a Messenger. Every endpoint uses UCX's PEER error
// mode: when a peer dies or its connection breaks, its outstanding sends and receives fail
// (UNAVAILABLE) instead of hanging, the peer is closed, and on_peer_failed runs.
//
// Ownership and lifetime: handlers, peer callbacks and completion callbacks are owned by the
// Messenger and run on its progress thread; they must not block (they may call Send, Accept,
// Drop, Disconnect). Buffers passed to Send / Accept are borrowed until their completion
// runs. Destroying the Messenger stops the progress thread: queued work still runs, every
// endpoint is force-closed, and every outstanding completion runs (CANCELLED or UNAVAILABLE)
// before the destructor returns. REQUIRES: not destroyed from its own progress thread.
//
// Thread-safe: every method may be called from any thread, except where noted.
//
// Transports: MessengerOptions::transports (UCX_TLS syntax) or the UCX_TLS environment
// variable. Connections are always set up through UCX's sockaddr connection manager, which
// on this machine (UCX 1.13.1, no RDMA devices) is TCP: the list must contain "tcp" (UCX
// answers UNAVAILABLE "Destination is unreachable" to a connect over "shm,cma" alone).
// "tcp" carries everything over TCP; "tcp,shm,cma" (or unset) moves same-host messages to
// shared memory and CMA (see same_host_shared_memory). DescribePeer shows what UCX chose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/store/transport/incoming_data.h"
#include "strata/store/transport/memory_region.h"

namespace strata::store::transport {

class MessengerImpl;

// A connected peer. kNone (0) is never a peer.
enum class PeerId : uint64_t { kNone = 0 };

// Message ids from here up are the messenger's own (its connection handshake).
inline constexpr uint16_t kFirstReservedId = 0xFF00;

// How a payload travels.
enum class DataProtocol {
  kAuto,        // UCX picks by size (eager below its rendezvous threshold)
  kEager,       // with the header, copied through transport buffers: small payloads only
  kRendezvous,  // announced, then pulled by the receiver into its chosen buffer: bulk data
};

// Receives one message: the sender, the header (valid only during the call), the payload.
using MessageHandler =
    absl::AnyInvocable<void(PeerId from, absl::Span<const uint8_t> header, IncomingData data)>;
// Peer events: (peer, OK) when a peer connected to our listener; (peer, error) when a peer
// failed (UNAVAILABLE: connection reset, unreachable, endpoint timeout).
using PeerCallback = absl::AnyInvocable<void(PeerId peer, absl::Status status)>;

struct MessengerOptions {
  // Name for logs and UCX's worker name.
  std::string name = "strata";
  // UCX_TLS-syntax transport list for this messenger; empty uses UCX_TLS / UCX's default.
  std::string transports;
  // After its last event the progress thread keeps polling this long before it sleeps.
  // Zero sleeps at once (lowest CPU); a few tens of microseconds cut wakeup latency.
  absl::Duration busy_poll = absl::ZeroDuration();
  // For a peer on the same host (same boot and IPC/PID/mount namespaces) whose UCX context,
  // like ours, has a shared-memory transport and CMA: carry messages on a second endpoint made by
  // UCX worker address, on which UCX uses shared memory (sysv/posix) and CMA. UCX 1.13 uses
  // neither on listener-made endpoints nor with PEER error handling, so this endpoint runs
  // without it; peer failure is still detected on the listener-made (TCP, PEER mode)
  // endpoint, which then force-closes both. Used only when both sides allow it.
  bool same_host_shared_memory = true;
  PeerCallback on_peer_connected;
  PeerCallback on_peer_failed;
};

struct SendOptions {
  DataProtocol protocol = DataProtocol::kAuto;
  // A registration covering the payload, or null.
  const MemoryRegion* region = nullptr;
};

// Counters since creation (monotonic; a snapshot, not a consistent cut).
struct MessengerStats {
  uint64_t messages_sent = 0;       // sends that completed OK
  uint64_t payload_bytes_sent = 0;  // their payload bytes
  uint64_t send_failures = 0;
  uint64_t messages_received = 0;       // messages handed to handlers
  uint64_t payload_bytes_received = 0;  // payload bytes accepted into caller buffers (OK)
  uint64_t receive_failures = 0;
  uint64_t peers_accepted = 0;   // via Listen
  uint64_t peers_connected = 0;  // via Connect
  uint64_t peer_failures = 0;
};

class Messenger {
 public:
  // Creates the UCX context and worker and starts the progress thread.
  // Errors: INVALID_ARGUMENT unknown transport name; UNAVAILABLE no usable transport;
  // RESOURCE_EXHAUSTED out of memory or file descriptors.
  static absl::StatusOr<std::unique_ptr<Messenger>> Create(MessengerOptions options);
  ~Messenger();
  Messenger(const Messenger&) = delete;
  Messenger& operator=(const Messenger&) = delete;

  // Routes messages with `id` to `handler`, replacing an earlier one. Messages for an id
  // below 64 without a handler are dropped (logged); keep protocol ids below 64 (UCX 1.13
  // may crash on a message whose id has no handler at all). May be called from inside a handler.
  // Errors: INVALID_ARGUMENT id >= kFirstReservedId; CANCELLED shutting down.
  absl::Status RegisterHandler(uint16_t id, MessageHandler handler);

  // Listens on "host:port" (port 0: ephemeral); returns the bound port. May be called more
  // than once. Errors: INVALID_ARGUMENT bad address; UNAVAILABLE address in use or not
  // local; CANCELLED shutting down.
  absl::StatusOr<uint16_t> Listen(std::string_view address);

  // Connects to a listener at "host:port" and waits until the connection is usable.
  // Errors: INVALID_ARGUMENT bad address; UNAVAILABLE refused, unreachable, or not
  // connected within `timeout` (a retry may help); CANCELLED shutting down;
  // FAILED_PRECONDITION called on the progress thread (it would wait on itself).
  absl::StatusOr<PeerId> Connect(std::string_view address,
                                 absl::Duration timeout = absl::Seconds(10));

  // Sends message `id` to `peer`. The header is copied; `payload` is borrowed until `done`
  // runs (on the progress thread; before Send returns when called there and the send
  // completes at once). OK means the payload left this side and the peer received the
  // message; it does not mean a handler accepted the payload (see IncomingData::Drop).
  // Statuses to `done`: INVALID_ARGUMENT header larger than max_header_size(), payload
  // outside options.region, or unknown peer; UNAVAILABLE the peer failed, was disconnected
  // or died mid-transfer; ABORTED the receiver dropped a rendezvous payload in its handler;
  // CANCELLED the messenger shut down; RESOURCE_EXHAUSTED UCX out of memory.
  void Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
            absl::Span<const uint8_t> payload, SendOptions options, CompletionCallback done);

  // Closes the connection to `peer` after its outstanding sends finish; later sends to it
  // fail UNAVAILABLE. Unknown peers are ignored. Asynchronous.
  void Disconnect(PeerId peer);

  // UCX's description of the connection to `peer` (ucp_ep_print_info: the transport and
  // device of each lane), for diagnostics. Errors: INVALID_ARGUMENT unknown peer;
  // UNAVAILABLE disconnected or failed; CANCELLED shutting down.
  absl::StatusOr<std::string> DescribePeer(PeerId peer);

  // Registers [data, data + size) (see memory_region.h). Errors: INVALID_ARGUMENT empty or
  // null range; RESOURCE_EXHAUSTED the transport could not pin it.
  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* data, size_t size);

  // Largest header Send accepts (UCX's max_am_header for this worker).
  size_t max_header_size() const;
  // True on this messenger's progress thread (where handlers and completions run).
  bool OnProgressThread() const;
  MessengerStats stats() const;

 private:
  explicit Messenger(std::unique_ptr<MessengerImpl> impl);
  std::unique_ptr<MessengerImpl> impl_;
};

}  // namespace strata::store::transport
