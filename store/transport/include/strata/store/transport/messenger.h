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
// Connections and transports. Every connection is a TCP connection that this module owns
// and parses itself (Listen / Connect); UCX never listens on a port or reads bytes from the
// network here, because UCX 1.13's TCP transport and sockaddr connection manager abort the
// process on malformed input (17 bytes were enough). For a peer on the same host, when both
// sides allow it, messages move to a UCX endpoint over shared memory (sysv/posix) and CMA,
// and the TCP connection stays as the liveness channel. MessengerOptions::transports (UCX_TLS
// syntax, else the UCX_TLS environment variable) says whether shared memory may be used:
// "tcp" keeps everything on the TCP stream; unset or a list naming shm/sysv/posix/cma also
// allows the same-host path. UCX is given that list without "tcp". DescribePeer shows what
// each connection uses.
//
// Authentication. A listener whose MessengerOptions::authenticate is set admits a connection
// only when the credential in its HELLO (Connect's `credential`) passes that check, which runs
// before anything else the connection sent is acted on (no data endpoint is made, no message
// is dispatched); a refused client's Connect fails UNAUTHENTICATED with the listener's reason
// and the connection is closed. PeerIdentity returns what the check returned for a peer.
//
// Limits against hostile or stalled peers (each configurable below): a connection that has
// not completed the handshake within handshake_timeout is closed; at most max_peers
// connections are kept (further ones are closed at once); a message's header and payload
// sizes are bounded (a larger one closes that connection); a send or receive that has not
// finished within transfer_timeout fails its peer with DEADLINE_EXCEEDED, so a stopped
// reader or writer holds no buffer longer than that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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

// The longest credential a HELLO carries.
inline constexpr size_t kMaxCredentialBytes = 1024;

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
// failed (UNAVAILABLE: connection reset or closed, protocol error; DEADLINE_EXCEEDED: a
// transfer outlived transfer_timeout).
using PeerCallback = absl::AnyInvocable<void(PeerId peer, absl::Status status)>;
// Checks the credential a connecting peer presented (empty when it sent none): its identity
// (any string, e.g. a tenant name), or an error whose message the peer is told (the peer's
// Connect fails UNAUTHENTICATED). Runs on the progress thread: must be quick.
// Copyable, so that options holding one stay copyable.
using PeerAuthenticator =
    std::function<absl::StatusOr<std::string>(absl::Span<const uint8_t> credential)>;

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
  // A connection must complete the handshake within this time or it is closed.
  absl::Duration handshake_timeout = absl::Seconds(10);
  // A send (until written and, for a streamed payload, acknowledged) or a payload receive
  // (from Accept until the bytes landed) that takes longer fails its peer
  // (DEADLINE_EXCEEDED).
  absl::Duration transfer_timeout = absl::Seconds(30);
  // Connections kept at once (accepted and connected, handshaking or not); more are closed
  // as soon as they are accepted.
  size_t max_peers = 1024;
  // Largest message payload accepted from a peer; a larger announcement closes the
  // connection.
  uint64_t max_payload_bytes = uint64_t{4} << 30;
  // Bytes of kept, undecided payloads (IncomingData held past its handler) a connection
  // buffers so that the messages behind them keep arriving; past it the connection stops
  // reading until a decision. Handlers that decide at once never use it.
  size_t max_parked_bytes = size_t{64} << 20;
  PeerCallback on_peer_connected;
  PeerCallback on_peer_failed;
  // Null: every connection is admitted (identity ""). See "Authentication" above.
  PeerAuthenticator authenticate;
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
  uint64_t peers_accepted = 0;      // via Listen
  uint64_t peers_connected = 0;     // via Connect
  uint64_t peer_failures = 0;       // not counting peers that disconnected in an orderly way
  uint64_t peers_disconnected = 0;  // peers that closed their connection in an orderly way
  uint64_t peers_refused = 0;       // connections whose credential authenticate refused
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

  // Connects to a listener at "host:port", presenting `credential` (at most
  // kMaxCredentialBytes) in the handshake, and waits until the connection is usable.
  // Errors: INVALID_ARGUMENT bad address or credential too long; UNAVAILABLE refused,
  // unreachable, or not connected within `timeout` (a retry may help); UNAUTHENTICATED the
  // listener refused the credential (its reason in the message); CANCELLED shutting down;
  // FAILED_PRECONDITION called on the progress thread (it would wait on itself).
  absl::StatusOr<PeerId> Connect(std::string_view address,
                                 absl::Duration timeout = absl::Seconds(10),
                                 std::string_view credential = {});

  // Sends message `id` to `peer`. The header is copied; `payload` is borrowed until `done`
  // runs (on the progress thread; before Send returns when called there and the send
  // completes at once). OK means the payload left this side and the peer received the
  // message; it does not mean a handler accepted the payload (see IncomingData::Drop).
  // Statuses to `done`: INVALID_ARGUMENT header larger than max_header_size(), payload
  // outside options.region, or unknown peer; UNAVAILABLE the peer failed, was disconnected
  // or died mid-transfer; DEADLINE_EXCEEDED the transfer outlived transfer_timeout (the
  // peer is failed); ABORTED the receiver dropped a rendezvous payload (one over the eager
  // limit, 16 KiB on the stream); CANCELLED the messenger shut down; RESOURCE_EXHAUSTED UCX
  // out of memory.
  void Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
            absl::Span<const uint8_t> payload, SendOptions options, CompletionCallback done);

  // Closes the connection to `peer` after its outstanding sends finish; later sends to it
  // fail UNAVAILABLE. Unknown peers are ignored. Asynchronous.
  void Disconnect(PeerId peer);

  // UCX's description of the connection to `peer` (ucp_ep_print_info: the transport and
  // device of each lane), for diagnostics. Errors: INVALID_ARGUMENT unknown peer;
  // UNAVAILABLE disconnected or failed; CANCELLED shutting down.
  absl::StatusOr<std::string> DescribePeer(PeerId peer);

  // The identity the authenticator gave an accepted peer ("" without one). Errors as
  // DescribePeer's.
  absl::StatusOr<std::string> PeerIdentity(PeerId peer);

  // Registers [data, data + size) (see memory_region.h). Errors: INVALID_ARGUMENT empty or
  // null range; RESOURCE_EXHAUSTED the transport could not pin it.
  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* data, size_t size);

  // Whether payloads may be CUDA device memory: sends from and receives into it go through
  // UCX (a build with CUDA support: GPUDirect RDMA where the NIC has it). False where UCX
  // has no CUDA transport or this messenger moves bytes over its own TCP stream.
  bool AcceptsCudaMemory() const;
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
