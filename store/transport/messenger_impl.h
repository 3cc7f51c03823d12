// MessengerImpl: the machinery behind Messenger (private to store/transport).
//
// Threading: one progress thread runs Run(); it alone touches the sockets, the UCX worker,
// endpoints and requests, and every field below marked "progress thread". Public methods
// (any thread) read immutable state or package their work as a command for `queue_`
// (running it inline when already on the progress thread).
//
// The loop: run queued commands; progress the UCX worker (when there is one) until it
// reports no events; handle what UCX callbacks recorded; service the sockets epoll reports
// ready and the connections that have work queued; check deadlines; when idle — after
// `busy_poll` — arm the worker and sleep in epoll_wait on the sockets, the worker's event
// fd and the queue's wake fd. UCX callbacks only record: endpoints are created and closed
// outside ucp_worker_progress, because closing an endpoint inside a callback that UCX runs
// from ucp_ep_set_failed trips UCX 1.13's assertions.
//
// Connections. Every peer is first a TCP connection that this module owns
// (StreamConnection, stream_frame.h): no UCX code ever listens on a port or reads a byte
// from the network, because UCX 1.13's TCP transport and sockaddr connection manager abort
// the process on malformed input. The UCX worker, when there is one, is limited to
// shared-memory transports and CMA (never tcp): for a same-host peer a data endpoint is
// made by worker address (UCP_ERR_HANDLING_MODE_NONE, on which UCX 1.13 uses sysv/posix
// and CMA). The handshake, on the stream:
//
//   client                                  server
//   Connect: TCP connect             --->   accept (counted against max_peers; closed
//                                           unless HELLO arrives within handshake_timeout)
//   HELLO(host id, credential,       --->  authenticate(credential) fails? WELCOME(refused,
//         client address)                    reason), close. Else: same host and both
//                                            allow shared memory?
//                                             yes: data ep = ConnectToWorker(client address)
//                                     <---  WELCOME(direct?, server address)
//   direct: data ep = ConnectToWorker(server address)   (UCX pairs the two data eps)
//           flush(data) completes
//   READY (on the data ep if direct,  --->  on_peer_connected
//          else on the stream)
//   Connect returns
//
// The server announces the peer (and so may send to it) only on READY: by then the client's
// data endpoint exists, so the server's messages arrive on an endpoint the client maps.
// READY travels ahead of the client's own messages on the same channel. Before READY the
// server accepts nothing but HELLO on a stream; anything else closes the connection.
//
// Handshake header (message id kHandshakeId), little-endian:
//   offset size field
//   0      1    magic    0x48 ('H')
//   1      1    version  3
//   2      1    kind     1 = HELLO (client -> server), 2 = WELCOME (server -> client),
//                        3 = READY (client -> server)
//   3      1    flags    bit 0: HELLO: the client may use shared memory;
//                               WELCOME: a direct data endpoint follows;
//                        bit 1: WELCOME: refused (the rest is the reason, text);
//                        other bits 0
//   4      2    host_len u16, length of the host identity (LocalHostIdentity())
//   6      2    cred_len u16, length of the credential (HELLO; 0 otherwise), at most
//                        kMaxCredentialBytes
//   8      h    host identity (HELLO; empty otherwise)
//   8+h    c    credential (HELLO)
//   8+h+c  n    the sender's UCX worker address (HELLO when it may use shared memory;
//                WELCOME when direct), or the refusal's reason (WELCOME refused)
//
// Messages flow on the data endpoint when there is one, else on the stream; both map to the
// peer. The stream stays open as the liveness channel: its end reports a dead peer at once,
// and the peer's failure closes both (UCX's requests on the data endpoint, which has no
// PEER error mode, are completed by the messenger: OrphanOperations).
//
// Deadlines: a send or receive that has not finished transfer_timeout after it started (a
// stalled or stopped peer) fails its peer with DEADLINE_EXCEEDED: the peer's operations
// complete with that status and their buffers are the caller's again.
//
// Completion guarantee: every operation (send, receive, connect flush) is tracked in
// `operations_` from submission to its single completion. Stream operations are completed
// by their StreamConnection (when written, acknowledged or failed). UCX completes the
// requests of a force-closed data endpoint only sometimes, so the messenger completes them
// (OrphanOperations). At shutdown connections are closed, the worker is progressed until
// UCX completes what it can (bounded), and any operation left is completed CANCELLED before
// the worker is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ucp/api/ucp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"

#include "store/transport/command_queue.h"
#include "store/transport/incoming_data_rep.h"
#include "store/transport/socket_address.h"
#include "store/transport/stream_connection.h"
#include "store/transport/stream_socket.h"
#include "store/transport/ucx/endpoint.h"
#include "store/transport/ucx/ucp_context.h"
#include "store/transport/ucx/ucp_worker.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {

// The handshake's active-message id (reserved: >= kFirstReservedId).
inline constexpr uint16_t kHandshakeId = 0xFFFF;

// epoll tags (epoll_event.data.u64) of the progress loop's descriptors.
inline constexpr uint64_t kWakeTag = 0;
inline constexpr uint64_t kWorkerTag = 1;
inline constexpr uint64_t kListenerTag = uint64_t{1} << 62;  // | index into listeners_
inline constexpr uint64_t kPeerTag = uint64_t{1} << 63;      // | peer id

class MessengerImpl {
 public:
  static absl::StatusOr<std::unique_ptr<MessengerImpl>> Create(MessengerOptions options);
  // REQUIRES: Stop() returned.
  ~MessengerImpl();

  // Asks the progress thread to shut down and joins it. Idempotent.
  void Stop();

  // Messenger's methods (any thread).
  absl::Status RegisterHandler(uint16_t id, MessageHandler handler);
  absl::StatusOr<uint16_t> Listen(std::string_view address);
  absl::StatusOr<PeerId> Connect(std::string_view address, absl::Duration timeout,
                                 std::string_view credential);
  void Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
            absl::Span<const uint8_t> payload, SendOptions options, CompletionCallback done);
  void Disconnect(PeerId peer);
  absl::StatusOr<std::string> DescribePeer(PeerId peer);
  absl::StatusOr<std::string> PeerIdentity(PeerId peer);
  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* data, size_t size);
  size_t max_header_size() const { return max_header_size_; }
  bool AcceptsCudaMemory() const { return context_ != nullptr && context_->cuda_memory(); }
  bool OnProgressThread() const { return std::this_thread::get_id() == progress_thread_id_; }
  MessengerStats stats() const;

  // IncomingData's work, on the progress thread.
  void AcceptNow(const std::shared_ptr<IncomingData::Rep>& rep, absl::Span<uint8_t> dest,
                 CompletionCallback done, const MemoryRegion* region);
  void DropNow(const std::shared_ptr<IncomingData::Rep>& rep);

 private:
  using ConnectCallback = absl::AnyInvocable<void(absl::StatusOr<PeerId>) &&>;

  struct Peer {
    MessengerImpl* impl = nullptr;
    PeerId id = PeerId::kNone;
    std::string remote;                        // for messages
    std::string credential;                    // client: presented in HELLO
    std::string identity;                      // server: what authenticate returned
    std::unique_ptr<StreamConnection> stream;  // the TCP connection; null once closed
    std::unique_ptr<ucx::Endpoint> data;       // by worker address; null unless direct
    ConnectCallback connect_done;              // client side, until Connect completes
    absl::Time started;                        // accepted / connect started (handshake deadline)
    bool connecting = false;                   // client: the TCP connect is in progress
    bool registered = false;                   // the stream's socket is in the epoll set
    uint32_t interest = 0;                     // with these events
    bool welcomed = false;                     // HELLO handled (server) / WELCOME handled (client)
    bool announced = false;  // connected (Connect returned it / on_peer_connected ran)
    bool failed = false;     // an error ended it; closing soon
    bool orderly = false;    // ... an ordinary disconnect by the peer (logged at INFO)
    bool closing = false;    // queued in closes_; unusable for new operations
    bool draining = false;   // closing gracefully: waits until its stream is idle
    bool force_close = false;
    absl::Status error;
    // Why the peer's operations end early, shared with them (they may complete after the
    // peer left the tables): its `error` once it failed, else the reason it was force-closed
    // (CANCELLED at shutdown). OK while the peer is healthy.
    std::shared_ptr<absl::Status> failure = std::make_shared<absl::Status>();
  };
  using StreamListener = ListeningSocket;
  struct ClosingPeer {
    std::vector<void*> requests;  // ucp_ep_close_nbx requests still in progress
    // Kept rendezvous descriptors from this peer, released once the closes completed:
    // released while an endpoint still resolves, UCX would acknowledge the payload and the
    // sender's request would complete OK.
    std::vector<void*> descriptors;
    std::unique_ptr<Peer> peer;
  };
  struct Handshake {
    PeerId peer = PeerId::kNone;
    std::vector<uint8_t> header;
  };
  struct HandlerSlot {
    MessengerImpl* impl = nullptr;
    uint16_t id = 0;
    MessageHandler handler;
  };
  struct Operation {
    enum class Kind { kSend, kReceive, kConnect };
    MessengerImpl* impl = nullptr;
    Kind kind = Kind::kSend;
    PeerId peer = PeerId::kNone;
    size_t bytes = 0;
    bool internal = false;  // the messenger's own message: not in the stats
    std::shared_ptr<const absl::Status> peer_failure;  // Peer::failure; null if no peer
    // Submitted on the data endpoint (no PEER error mode): UCX completes such requests OK
    // when a force-close purges them, so OK counts only while the peer is healthy.
    bool unchecked = false;
    absl::Time started;
    std::string header;  // a send's header: UCX reads it until completion
    CompletionCallback done;
  };
  struct Counters {
    std::atomic<uint64_t> messages_sent{0}, payload_bytes_sent{0}, send_failures{0};
    std::atomic<uint64_t> messages_received{0}, payload_bytes_received{0}, receive_failures{0};
    std::atomic<uint64_t> peers_accepted{0}, peers_connected{0}, peer_failures{0};
    std::atomic<uint64_t> peers_disconnected{0};
    std::atomic<uint64_t> peers_refused{0};
  };

  MessengerImpl(MessengerOptions options, std::shared_ptr<CommandQueue> queue);

  // --- the loop (messenger_impl.cc) ---
  void Run();
  // Creates the epoll set and, when shared memory is allowed, the UCX context and worker on
  // the progress thread (UCX 1.13 asserts that a single-threaded worker is progressed by the
  // thread that created it).
  absl::Status Initialize();
  absl::Status InitializeUcx(const std::string& transports);
  bool RunCommands();
  bool ProgressWorker();
  bool HandleRecordedEvents();
  void ReapClosedPeers();
  // Waits up to `timeout_ms` for ready file descriptors and services them; true if any.
  bool PollEvents(int timeout_ms);
  void Sleep();
  void CheckDeadlines();
  void Shutdown();
  absl::Status RunSync(absl::AnyInvocable<void()> fn);

  // --- streams (messenger_stream.cc) ---
  void AcceptStreams(const StreamListener& listener);
  // Reads and writes what `peer`'s stream can; a failure fails the peer.
  void ServiceStream(Peer& peer, uint32_t events);
  bool ServiceQueuedStreams();
  void QueueStreamWork(PeerId id) { stream_work_.push_back(id); }
  void UpdateInterest(Peer& peer);
  void OnStreamFrame(Peer& peer, const StreamConnection::Frame& frame);
  void SendOnStream(Peer& peer, uint16_t id, std::string header, absl::Span<const uint8_t> payload,
                    bool streamed, CompletionCallback done);
  // Marks the peer failed with `why` (handled by FailPeers).
  void FailPeer(Peer& peer, absl::Status why);
  void CloseStream(Peer& peer, const absl::Status& why);

  // --- peers (messenger_peers.cc) ---
  PeerId NewPeerId() { return static_cast<PeerId>(next_peer_id_++); }
  Peer* FindPeer(PeerId id);
  void MapEndpoint(Peer& peer, const ucx::Endpoint& endpoint);
  // The peer's failure, UNAVAILABLE when closing, INVALID_ARGUMENT when never known.
  absl::Status PeerUnusable(PeerId id);
  void StartConnect(const SocketAddress& address, std::string credential, ConnectCallback done);
  void OnStreamConnected(Peer& peer);
  // Inside the AM callback (READY on a data endpoint): handled at once (it must be before
  // the client's next message, delivered in the same progress call, reaches a handler).
  void OnHandshakeMessage(PeerId from, absl::Span<const uint8_t> header);
  void HandleHandshake(const Handshake& handshake);
  void FinishConnect(PeerId id, absl::Status status);
  void Announce(Peer& peer);
  // Queues the peer's endpoints for closing (never inline: see the file comment).
  void ClosePeer(PeerId id, bool force);
  void CloseQueuedPeers();
  void FailPeers();
  // Flushes `ep`; `done` runs when everything before it is delivered (or it failed).
  void Flush(PeerId peer, ucp_ep_h ep, CompletionCallback done);

  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);

  // --- operations and messages (messenger_ops.cc) ---
  void SendNow(PeerId peer, uint16_t id, std::string header, absl::Span<const uint8_t> payload,
               SendOptions options, CompletionCallback done);
  void SendOnEndpoint(PeerId peer, ucp_ep_h ep, uint16_t id, std::string header,
                      absl::Span<const uint8_t> payload, SendOptions options,
                      CompletionCallback done);
  Operation* NewOperation(Operation::Kind kind, PeerId peer, size_t bytes, CompletionCallback done);
  void FinishOperation(Operation* op, ucs_status_t status);
  void FinishOperation(Operation* op, absl::Status status);
  // Completes the peer's outstanding sends and flushes on its data endpoint with `why` and
  // keeps their records in orphans_ until UCX calls back (if ever): UCX 1.13 does not
  // complete the requests of a force-closed endpoint that lacks PEER error mode. (A send
  // waits for the receiver's acknowledgement and no longer touches its buffer: the receiver
  // pulls. Receives are never orphaned: see OrphanOperations.)
  void OrphanOperations(PeerId peer, const absl::Status& why);
  ClosingPeer* FindClosingPeer(PeerId id);
  // Completes `op` at once unless `request` is pending (then UCX calls back later).
  void TrackRequest(Operation* op, void* request);
  ucs_status_t Deliver(HandlerSlot* slot, const void* header, size_t header_length, void* data,
                       size_t length, const ucp_am_recv_param_t* param);
  // Runs the handler of message `id` from `from`; `rep` is null for a message without a
  // payload. Returns what the handler decided (see FinishHandler).
  void RunHandler(HandlerSlot& slot, PeerId from, absl::Span<const uint8_t> header,
                  const std::shared_ptr<IncomingData::Rep>& rep);
  std::shared_ptr<IncomingData::Rep> NewRep(PeerId from, size_t size, bool rendezvous, bool stream,
                                            void* data);
  ucs_status_t FinishHandler(const std::shared_ptr<IncomingData::Rep>& rep);
  // A stream payload that will not be received: read and thrown away.
  void DiscardStreamPayload(PeerId peer, uint64_t sequence);
  void ReleaseKept(IncomingData::Rep& rep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(rep.mu);
  // Ends the kept payloads from `peer` (all when kNone): a later Accept reports `why`. Their
  // rendezvous descriptors are appended to `descriptors`, for the caller to release with
  // ucp_am_data_release once no endpoint of the peer resolves any more.
  void AbandonKeptPayloads(PeerId peer, const absl::Status& why, std::vector<void*>& descriptors);
  void ReleaseDescriptors(std::vector<void*>& descriptors);
  absl::Status InstallHandler(uint16_t id, MessageHandler handler);

  static ucs_status_t OnActiveMessage(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param);
  static void OnSendComplete(void* request, ucs_status_t status, void* user_data);
  static void OnReceiveComplete(void* request, ucs_status_t status, size_t length, void* user_data);

  // Immutable after Create returned (the callbacks in options_ run on the progress thread).
  MessengerOptions options_;
  const std::shared_ptr<CommandQueue> queue_;
  std::thread thread_;
  std::thread::id progress_thread_id_;
  absl::Notification started_;  // Create -> progress thread: progress_thread_id_ is set
  absl::Notification ready_;    // progress thread -> Create: init_status_ is set
  absl::Status init_status_;
  std::shared_ptr<ucx::UcpContext> context_;  // null without shared memory
  size_t max_header_size_ = 0;
  FrameLimits frame_limits_;
  std::string host_identity_;  // LocalHostIdentity(), or empty when shared memory is off
  Counters counters_;

  // Progress thread only.
  int epoll_fd_ = -1;
  std::unique_ptr<ucx::UcpWorker> worker_;  // null without shared memory; reset in Shutdown()
  bool stop_requested_ = false;
  bool shutting_down_ = false;
  uint64_t next_peer_id_ = 1;
  absl::Time next_deadline_check_ = absl::InfinitePast();
  std::vector<StreamListener> listeners_;
  absl::flat_hash_map<PeerId, std::unique_ptr<Peer>> peers_;
  absl::flat_hash_map<ucp_ep_h, PeerId> peer_by_endpoint_;
  std::vector<ClosingPeer> closing_;
  // Peers whose stream has work queued (sends, a decided payload): serviced this turn.
  std::vector<PeerId> stream_work_;
  // Peers closing gracefully whose streams still send or await acknowledgements.
  std::vector<PeerId> draining_;
  // Recorded inside UCX callbacks, handled after ucp_worker_progress returns.
  std::vector<Handshake> handshakes_;
  std::vector<PeerId> failed_peers_;
  std::vector<PeerId> closes_;
  absl::flat_hash_map<uint16_t, std::unique_ptr<HandlerSlot>> handlers_;
  std::vector<std::unique_ptr<HandlerSlot>> retired_handlers_;
  absl::flat_hash_map<Operation*, std::unique_ptr<Operation>> operations_;
  // Operations already completed for their owner whose UCX requests may still call back.
  absl::flat_hash_map<Operation*, std::unique_ptr<Operation>> orphans_;
  // Payloads a handler kept (undecided or queued): released at shutdown if still here.
  absl::flat_hash_map<IncomingData::Rep*, std::shared_ptr<IncomingData::Rep>> kept_;
};

}  // namespace strata::store::transport
