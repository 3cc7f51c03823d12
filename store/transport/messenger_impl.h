// MessengerImpl: the machinery behind Messenger (private to store/transport; UCX inside).
//
// Threading: one progress thread runs Run(); it alone touches the UCX context's worker,
// endpoints, listeners and requests, and every field below marked "progress thread". Public
// methods (any thread) read immutable state or package their work as a command for `queue_`
// (running it inline when already on the progress thread).
//
// The loop: run queued commands; progress the worker until it reports no events; handle what
// UCX callbacks recorded (connection requests, handshakes, failed endpoints, closes); when
// idle — after `busy_poll` — arm the worker and poll() its event fd together with the queue's
// wake fd. UCX callbacks only record: endpoints are created and closed outside
// ucp_worker_progress, because closing an endpoint inside a callback that UCX runs from
// ucp_ep_set_failed trips UCX 1.13's assertions.
//
// Connections. A peer has a control endpoint made through the listener (UCX's sockaddr
// connection manager: TCP here, in PEER error mode) and, for a same-host peer, a data
// endpoint made by worker address without PEER mode, on which UCX 1.13 uses shared memory
// and CMA (it uses neither on CM-made endpoints nor in PEER mode). The handshake:
//
//   client                                  server
//   Connect: control ep via listener  --->  AcceptConnection: control ep from conn request
//   flush(control) completes
//   HELLO(host id, client address)    --->  same host and both allow shared memory?
//                                             yes: data ep = ConnectToWorker(client address)
//                                     <---  WELCOME(direct?, server address)
//   direct: data ep = ConnectToWorker(server address)   (UCX pairs the two data eps)
//           flush(data) completes
//   READY (on the data ep if direct)  --->  on_peer_connected
//   Connect returns
//
// The server announces the peer (and so may send to it) only on READY: by then the client's
// data endpoint exists, so the server's messages arrive on an endpoint the client maps.
// READY travels ahead of the client's own messages on the same endpoint.
//
// Handshake header (AM id kHandshakeId), little-endian:
//   offset size field
//   0      1    magic    0x48 ('H')
//   1      1    version  1
//   2      1    kind     1 = HELLO (client -> server), 2 = WELCOME (server -> client),
//                        3 = READY (client -> server)
//   3      1    flags    bit 0: HELLO: the client may use shared memory;
//                               WELCOME: a direct data endpoint follows; other bits 0
//   4      2    host_len u16, length of the host identity (LocalHostIdentity())
//   6      2    reserved 0
//   8      h    host identity (HELLO; empty otherwise)
//   8+h    n    the sender's UCX worker address (HELLO always; WELCOME when direct)
//
// Messages flow on the data endpoint when there is one, else on the control endpoint; both
// map to the peer. The control endpoint stays open as the liveness channel: its TCP reset
// reports a dead peer at once, and the peer's failure force-closes both endpoints (UCX then
// completes the data endpoint's outstanding requests CANCELLED; they are reported with the
// peer's UNAVAILABLE error).
//
// Completion guarantee: every operation (send, receive, connect flush) is tracked in
// `operations_` from submission to its single completion. UCX completes the requests of a
// failed or force-closed PEER-mode endpoint itself; those of the data endpoint (no PEER mode)
// it leaves hanging, so the messenger completes them (OrphanOperations). At shutdown
// endpoints are force-closed, the worker is progressed until UCX completes what it can
// (bounded), and any operation left is completed CANCELLED before the worker is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <ucp/api/ucp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"

#include "store/transport/command_queue.h"
#include "store/transport/incoming_data_rep.h"
#include "store/transport/socket_address.h"
#include "store/transport/ucx/endpoint.h"
#include "store/transport/ucx/listener.h"
#include "store/transport/ucx/ucp_context.h"
#include "store/transport/ucx/ucp_worker.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {

// The handshake's active-message id (reserved: >= kFirstReservedId).
inline constexpr uint16_t kHandshakeId = 0xFFFF;

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
  absl::StatusOr<PeerId> Connect(std::string_view address, absl::Duration timeout);
  void Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
            absl::Span<const uint8_t> payload, SendOptions options, CompletionCallback done);
  void Disconnect(PeerId peer);
  absl::StatusOr<std::string> DescribePeer(PeerId peer);
  absl::StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* data, size_t size);
  size_t max_header_size() const { return max_header_size_; }
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
    std::string remote;                      // for messages
    std::unique_ptr<ucx::Endpoint> control;  // through the listener
    std::unique_ptr<ucx::Endpoint> data;     // by worker address; null until the handshake
    ConnectCallback connect_done;            // client side, until Connect completes
    bool welcomed = false;                   // HELLO handled (server) / WELCOME handled (client)
    bool announced = false;  // connected (Connect returned it / on_peer_connected ran)
    bool failed = false;     // UCX reported an error; closing soon
    bool closing = false;    // queued in closes_; unusable for new operations
    bool force_close = false;
    absl::Status error;
    // Why the peer's operations end early, shared with them (they may complete after the
    // peer left the tables): its `error` once it failed, else the reason it was force-closed
    // (CANCELLED at shutdown). OK while the peer is healthy.
    std::shared_ptr<absl::Status> failure = std::make_shared<absl::Status>();
    ucp_ep_h send_endpoint() const { return (data != nullptr ? data : control)->get(); }
  };
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
    std::string header;  // a send's header: UCX reads it until completion
    CompletionCallback done;
  };
  struct Counters {
    std::atomic<uint64_t> messages_sent{0}, payload_bytes_sent{0}, send_failures{0};
    std::atomic<uint64_t> messages_received{0}, payload_bytes_received{0}, receive_failures{0};
    std::atomic<uint64_t> peers_accepted{0}, peers_connected{0}, peer_failures{0};
  };

  MessengerImpl(MessengerOptions options, std::shared_ptr<CommandQueue> queue);

  // --- the loop (messenger_impl.cc) ---
  void Run();
  // Creates the UCX context and worker on the progress thread (UCX 1.13 asserts that a
  // single-threaded worker is progressed by the thread that created it).
  absl::Status InitializeUcx();
  bool RunCommands();
  bool ProgressWorker();
  bool HandleRecordedEvents();
  void ReapClosedPeers();
  void Sleep();
  void Shutdown();
  absl::Status RunSync(absl::AnyInvocable<void()> fn);

  // --- peers (messenger_peers.cc) ---
  PeerId NewPeerId() { return static_cast<PeerId>(next_peer_id_++); }
  Peer* FindPeer(PeerId id);
  void MapEndpoint(Peer& peer, const ucx::Endpoint& endpoint);
  // The peer's failure, UNAVAILABLE when closing, INVALID_ARGUMENT when never known.
  absl::Status PeerUnusable(PeerId id);
  void AcceptConnection(ucp_conn_request_h request);
  void StartConnect(const SocketAddress& address, ConnectCallback done);
  void OnControlConnected(PeerId id, absl::Status status);
  // Inside the AM callback: READY is handled at once (it must be before the client's next
  // message, delivered in the same progress call, reaches a handler); HELLO and WELCOME,
  // which create endpoints, are recorded for HandleRecordedEvents.
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

  static void OnConnectionRequest(ucp_conn_request_h request, void* arg);
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);

  // --- operations and messages (messenger_ops.cc) ---
  void SendNow(PeerId peer, uint16_t id, std::string header, absl::Span<const uint8_t> payload,
               SendOptions options, CompletionCallback done);
  void SendOnEndpoint(PeerId peer, ucp_ep_h ep, uint16_t id, std::string header,
                      absl::Span<const uint8_t> payload, SendOptions options,
                      CompletionCallback done);
  Operation* NewOperation(Operation::Kind kind, PeerId peer, size_t bytes, CompletionCallback done);
  void FinishOperation(Operation* op, ucs_status_t status);
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
  ucs_status_t FinishHandler(const std::shared_ptr<IncomingData::Rep>& rep);
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
  std::shared_ptr<ucx::UcpContext> context_;
  size_t max_header_size_ = 0;
  std::string host_identity_;  // LocalHostIdentity(), or empty when shared memory is off
  Counters counters_;

  // Progress thread only.
  std::unique_ptr<ucx::UcpWorker> worker_;  // reset at the end of Shutdown()
  bool stop_requested_ = false;
  bool shutting_down_ = false;
  uint64_t next_peer_id_ = 1;
  std::vector<std::unique_ptr<ucx::Listener>> listeners_;
  absl::flat_hash_map<PeerId, std::unique_ptr<Peer>> peers_;
  absl::flat_hash_map<ucp_ep_h, PeerId> peer_by_endpoint_;
  std::vector<ClosingPeer> closing_;
  // Recorded inside UCX callbacks, handled after ucp_worker_progress returns.
  std::vector<ucp_conn_request_h> connection_requests_;
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
