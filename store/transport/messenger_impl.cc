// MessengerImpl: creation, the progress loop, shutdown, handlers and listeners.
#include "store/transport/messenger_impl.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "store/transport/host_identity.h"
#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport {
namespace {

// Message ids [0, kDefaultHandledIds) have a dropping handler until one is registered.
constexpr uint16_t kDefaultHandledIds = 64;
// Worker progress calls per loop turn before queued commands get a look in.
constexpr int kProgressBurst = 64;
// How long shutdown keeps progressing so that UCX can complete force-closed operations.
constexpr absl::Duration kShutdownDrain = absl::Seconds(2);

}  // namespace

absl::StatusOr<std::unique_ptr<MessengerImpl>> MessengerImpl::Create(MessengerOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<CommandQueue> queue, CommandQueue::Create());
  std::unique_ptr<MessengerImpl> impl(new MessengerImpl(std::move(options), std::move(queue)));
  impl->thread_ = std::thread([raw = impl.get()] { raw->Run(); });
  impl->progress_thread_id_ = impl->thread_.get_id();
  impl->started_.Notify();
  impl->ready_.WaitForNotification();
  if (!impl->init_status_.ok()) {
    impl->thread_.join();
    return impl->init_status_;
  }
  return impl;
}

MessengerImpl::MessengerImpl(MessengerOptions options, std::shared_ptr<CommandQueue> queue)
    : options_(std::move(options)), queue_(std::move(queue)) {}

MessengerImpl::~MessengerImpl() { CHECK(!thread_.joinable()) << "Stop() was not called"; }

absl::Status MessengerImpl::InitializeUcx() {
  STRATA_ASSIGN_OR_RETURN(context_, ucx::UcpContext::Create({options_.transports, options_.name}));
  STRATA_ASSIGN_OR_RETURN(worker_, ucx::UcpWorker::Create(context_));
  max_header_size_ = worker_->max_am_header();
  if (options_.same_host_shared_memory && context_->has_shared_memory_and_cma()) {
    host_identity_ = LocalHostIdentity();
  }
  // Ids without a handler of ours: UCX 1.13 warns and then reads a missing callback on its
  // reply path (seen as a SEGV under ASan when a peer sent an id the receiver never
  // registered). Every id below kDefaultHandledIds gets a handler that drops the message, so
  // an older or smaller peer survives a message it does not know.
  for (uint16_t id = 0; id < kDefaultHandledIds; ++id) {
    STRATA_RETURN_IF_ERROR(
        InstallHandler(id, [this, id](PeerId from, absl::Span<const uint8_t>, IncomingData) {
          LOG_EVERY_N(WARNING, 100) << options_.name << ": dropping message " << id << " from peer "
                                    << static_cast<uint64_t>(from) << ": no handler for it";
        }));
  }
  return InstallHandler(kHandshakeId, [this](PeerId from, absl::Span<const uint8_t> header,
                                             IncomingData) { OnHandshakeMessage(from, header); });
}

void MessengerImpl::Stop() {
  if (!thread_.joinable()) return;
  CHECK(!OnProgressThread()) << "a Messenger cannot be destroyed from its own progress thread";
  queue_->Push([this](bool cancelled) {
    if (!cancelled) stop_requested_ = true;
  });
  thread_.join();
}

// ---------------------------------------------------------------------------------------
// The loop.

void MessengerImpl::Run() {
  started_.WaitForNotification();
  init_status_ = InitializeUcx();
  const bool initialized = init_status_.ok();
  ready_.Notify();
  if (!initialized) {
    worker_.reset();
    handlers_.clear();
    return;
  }
  const bool busy_poll = options_.busy_poll > absl::ZeroDuration();
  absl::Time last_busy = absl::InfinitePast();
  while (true) {
    bool busy = RunCommands();
    if (stop_requested_) break;
    busy |= ProgressWorker();
    busy |= HandleRecordedEvents();
    if (busy) {
      if (busy_poll) last_busy = absl::Now();
      continue;
    }
    if (busy_poll && absl::Now() - last_busy < options_.busy_poll) continue;
    Sleep();
  }
  Shutdown();
}

bool MessengerImpl::RunCommands() {
  std::vector<CommandQueue::Command> commands = queue_->TakeAll();
  for (CommandQueue::Command& command : commands) std::move(command)(/*cancelled=*/false);
  return !commands.empty();
}

bool MessengerImpl::ProgressWorker() {
  bool any = false;
  for (int i = 0; i < kProgressBurst && worker_->Progress() != 0; ++i) any = true;
  return any;
}

bool MessengerImpl::HandleRecordedEvents() {
  const bool any = !connection_requests_.empty() || !handshakes_.empty() ||
                   !failed_peers_.empty() || !closes_.empty() || !retired_handlers_.empty();
  if (!connection_requests_.empty()) {
    std::vector<ucp_conn_request_h> requests;
    requests.swap(connection_requests_);
    for (ucp_conn_request_h request : requests) AcceptConnection(request);
  }
  if (!handshakes_.empty()) {
    std::vector<Handshake> handshakes;
    handshakes.swap(handshakes_);
    for (const Handshake& handshake : handshakes) HandleHandshake(handshake);
  }
  if (!failed_peers_.empty()) FailPeers();
  if (!closes_.empty()) CloseQueuedPeers();
  retired_handlers_.clear();
  const size_t closing_before = closing_.size();
  ReapClosedPeers();
  return any || closing_.size() != closing_before;
}

void MessengerImpl::ReapClosedPeers() {
  for (auto it = closing_.begin(); it != closing_.end();) {
    std::vector<void*>& requests = it->requests;
    for (auto r = requests.begin(); r != requests.end();) {
      if (ucp_request_check_status(*r) == UCS_INPROGRESS) {
        ++r;
      } else {
        ucp_request_free(*r);
        r = requests.erase(r);
      }
    }
    if (!requests.empty()) {
      ++it;
      continue;
    }
    // At shutdown, a data endpoint's descriptors are left to the worker (see Shutdown).
    if (!shutting_down_ || it->peer->data == nullptr) ReleaseDescriptors(it->descriptors);
    it = closing_.erase(it);
  }
}

void MessengerImpl::Sleep() {
  if (!queue_->PrepareToSleep()) return;
  if (!worker_->Arm()) {
    queue_->WokeUp();
    return;
  }
  pollfd fds[2] = {{worker_->event_fd(), POLLIN, 0}, {queue_->wake_fd(), POLLIN, 0}};
  // A bounded sleep even when idle: a safety net should a transport miss a wakeup.
  const int timeout_ms = operations_.empty() && closing_.empty() ? 1000 : 10;
  if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR) PLOG(FATAL) << "poll";
  queue_->WokeUp();
}

void MessengerImpl::Shutdown() {
  shutting_down_ = true;
  // Work queued before the stop still runs (later pushes run cancelled on their thread).
  for (CommandQueue::Command& command : queue_->Close()) std::move(command)(false);
  listeners_.clear();
  std::vector<PeerId> ids;
  for (const auto& [id, peer] : peers_) ids.push_back(id);
  for (PeerId id : ids) ClosePeer(id, /*force=*/true);

  const absl::Time deadline = absl::Now() + kShutdownDrain;
  HandleRecordedEvents();
  while ((!operations_.empty() || !closing_.empty() || !closes_.empty()) &&
         absl::Now() < deadline) {
    ProgressWorker();
    HandleRecordedEvents();
  }
  // Payloads that handlers kept: give rendezvous descriptors back to UCX while the worker
  // lives; a later Accept reports CANCELLED. Not those of a data endpoint (no PEER mode):
  // its id may still resolve, and UCX would acknowledge the payload to a sender that then
  // believes it delivered; the worker's destruction frees them (UCX warns of them).
  std::vector<void*> descriptors;
  AbandonKeptPayloads(PeerId::kNone,
                      absl::CancelledError(absl::StrCat(options_.name, " shut down")), descriptors);
  for (ClosingPeer& closing : closing_) {
    if (closing.peer->data == nullptr) {
      descriptors.insert(descriptors.end(), closing.descriptors.begin(), closing.descriptors.end());
    }
    closing.descriptors.clear();
  }
  ReleaseDescriptors(descriptors);
  LOG_IF(WARNING, !operations_.empty())
      << options_.name << ": " << operations_.size()
      << " operations outlived the shutdown drain; completing them CANCELLED";
  std::vector<Operation*> left;
  for (const auto& [raw, op] : operations_) left.push_back(raw);
  for (Operation* raw : left) {
    std::unique_ptr<Operation>& op = orphans_[raw];
    op = std::move(operations_[raw]);
    operations_.erase(raw);
    std::move(op->done)(absl::CancelledError(absl::StrCat(options_.name, " shut down")));
  }
  for (ClosingPeer& closing : closing_) {
    for (void* request : closing.requests) ucp_request_free(request);
  }
  closing_.clear();
  peers_.clear();
  worker_.reset();  // before the handler slots and orphans UCX points at
  orphans_.clear();
  handlers_.clear();
  retired_handlers_.clear();
}

absl::Status MessengerImpl::RunSync(absl::AnyInvocable<void()> fn) {
  if (OnProgressThread()) {
    fn();
    return absl::OkStatus();
  }
  absl::Notification done;
  bool ran = false;
  queue_->Push([&](bool cancelled) {
    if (!cancelled) {
      fn();
      ran = true;
    }
    done.Notify();
  });
  done.WaitForNotification();
  if (!ran) return absl::CancelledError(absl::StrCat(options_.name, " is shutting down"));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Handlers and listeners.

absl::Status MessengerImpl::RegisterHandler(uint16_t id, MessageHandler handler) {
  if (id >= kFirstReservedId) {
    return absl::InvalidArgumentError(
        absl::StrCat("message id ", id, " is reserved (ids from ", kFirstReservedId, ")"));
  }
  absl::Status result;
  STRATA_RETURN_IF_ERROR(RunSync([&] { result = InstallHandler(id, std::move(handler)); }));
  return result;
}

absl::Status MessengerImpl::InstallHandler(uint16_t id, MessageHandler handler) {
  auto slot = std::make_unique<HandlerSlot>();
  slot->impl = this;
  slot->id = id;
  slot->handler = std::move(handler);
  ucp_am_handler_param_t param;
  std::memset(&param, 0, sizeof(param));
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                     UCP_AM_HANDLER_PARAM_FIELD_ARG;
  param.id = id;
  param.cb = &MessengerImpl::OnActiveMessage;
  param.arg = slot.get();
  STRATA_RETURN_IF_ERROR(ucx::UcsToStatus(ucp_worker_set_am_recv_handler(worker_->get(), &param),
                                          "ucp_worker_set_am_recv_handler"));
  std::unique_ptr<HandlerSlot>& current = handlers_[id];
  if (current != nullptr) retired_handlers_.push_back(std::move(current));
  current = std::move(slot);
  return absl::OkStatus();
}

absl::StatusOr<uint16_t> MessengerImpl::Listen(std::string_view address) {
  STRATA_ASSIGN_OR_RETURN(SocketAddress parsed, SocketAddress::Parse(address));
  absl::StatusOr<uint16_t> result = absl::InternalError("not run");
  STRATA_RETURN_IF_ERROR(RunSync([&] {
    auto listener =
        ucx::Listener::Create(*worker_, parsed, &MessengerImpl::OnConnectionRequest, this);
    if (!listener.ok()) {
      result = listener.status();
      return;
    }
    result = (*listener)->address().port();
    LOG(INFO) << options_.name << ": listening on " << (*listener)->address().ToString();
    listeners_.push_back(std::move(*listener));
  }));
  return result;
}

void MessengerImpl::OnConnectionRequest(ucp_conn_request_h request, void* arg) {
  static_cast<MessengerImpl*>(arg)->connection_requests_.push_back(request);
}

// ---------------------------------------------------------------------------------------
// Diagnostics.

absl::StatusOr<std::string> MessengerImpl::DescribePeer(PeerId id) {
  absl::StatusOr<std::string> result = absl::InternalError("not run");
  STRATA_RETURN_IF_ERROR(RunSync([&] {
    if (absl::Status unusable = PeerUnusable(id); !unusable.ok()) {
      result = unusable;
      return;
    }
    const Peer& peer = *FindPeer(id);
    std::string out;
    for (const auto& [name, endpoint] :
         {std::pair{"control", peer.control.get()}, std::pair{"data", peer.data.get()}}) {
      if (endpoint == nullptr) continue;
      char* text = nullptr;
      size_t length = 0;
      FILE* stream = open_memstream(&text, &length);
      if (stream == nullptr) {
        result = absl::ResourceExhaustedError("open_memstream failed");
        return;
      }
      ucp_ep_print_info(endpoint->get(), stream);
      fclose(stream);
      absl::StrAppend(&out, name, " endpoint:\n", absl::string_view(text, length));
      free(text);
    }
    result = std::move(out);
  }));
  return result;
}

MessengerStats MessengerImpl::stats() const {
  MessengerStats s;
  s.messages_sent = counters_.messages_sent.load(std::memory_order_relaxed);
  s.payload_bytes_sent = counters_.payload_bytes_sent.load(std::memory_order_relaxed);
  s.send_failures = counters_.send_failures.load(std::memory_order_relaxed);
  s.messages_received = counters_.messages_received.load(std::memory_order_relaxed);
  s.payload_bytes_received = counters_.payload_bytes_received.load(std::memory_order_relaxed);
  s.receive_failures = counters_.receive_failures.load(std::memory_order_relaxed);
  s.peers_accepted = counters_.peers_accepted.load(std::memory_order_relaxed);
  s.peers_connected = counters_.peers_connected.load(std::memory_order_relaxed);
  s.peer_failures = counters_.peer_failures.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::store::transport
