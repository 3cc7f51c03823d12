// MessengerImpl: creation, the progress loop, shutdown, handlers and listeners.
#include "store/transport/messenger_impl.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "store/transport/host_identity.h"
#include "store/transport/ucx/ucs_status.h"
#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport {
namespace {

// Message ids [0, kDefaultHandledIds) have a dropping handler until one is registered.
constexpr uint16_t kDefaultHandledIds = 64;
// Worker progress calls per loop turn before queued commands get a look in.
constexpr int kProgressBurst = 64;
// How long shutdown keeps progressing so that UCX can complete force-closed operations.
constexpr absl::Duration kShutdownDrain = absl::Seconds(2);
// Largest message header on a stream (UCX's AM header limit is a little above 8 KiB).
constexpr size_t kStreamMaxHeader = 8 * 1024;
// How often deadlines are checked.
constexpr absl::Duration kDeadlineCheckInterval = absl::Milliseconds(100);

// The UCX transports to use given the messenger's list (UCX_TLS syntax): never tcp (UCX's
// TCP code must not face the network). Empty: no UCX at all.
std::string UcxTransports(const std::string& list) {
  if (list.empty()) return "shm,cma";
  if (list[0] == '^') return absl::StrCat(list, ",tcp");  // "all but ...": tcp is excluded too
  std::vector<std::string> kept;
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    if (name != "tcp") kept.emplace_back(name);
  }
  return absl::StrJoin(kept, ",");
}

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

absl::Status MessengerImpl::Initialize() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return base::ErrnoToStatus(errno, "epoll_create1");
  STRATA_RETURN_IF_ERROR(EpollAdd(epoll_fd_, queue_->wake_fd(), EPOLLIN, kWakeTag));
  max_header_size_ = kStreamMaxHeader;
  std::string transports = options_.transports;
  if (transports.empty()) {
    if (const char* env = std::getenv("UCX_TLS"); env != nullptr) transports = env;
  }
  const std::string ucx_transports = UcxTransports(transports);
  if (options_.same_host_shared_memory && !ucx_transports.empty()) {
    STRATA_RETURN_IF_ERROR(InitializeUcx(ucx_transports));
  } else if (!ucx_transports.empty()) {
    // Still validate the names the caller gave.
    STRATA_RETURN_IF_ERROR(ucx::UcpContext::Create({ucx_transports, options_.name}).status());
  }
  frame_limits_.max_header_size = kStreamMaxHeader;
  frame_limits_.max_payload_size = options_.max_payload_bytes;
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

absl::Status MessengerImpl::InitializeUcx(const std::string& transports) {
  absl::StatusOr<std::shared_ptr<ucx::UcpContext>> context =
      ucx::UcpContext::Create({transports, options_.name});
  if (!context.ok()) return context.status();
  if (!(*context)->has_shared_memory_and_cma()) {
    LOG(INFO) << options_.name << ": UCX transports \"" << transports
              << "\" offer no shared memory and CMA: every peer uses the TCP stream";
    return absl::OkStatus();
  }
  context_ = *std::move(context);
  STRATA_ASSIGN_OR_RETURN(worker_, ucx::UcpWorker::Create(context_));
  max_header_size_ = std::min(kStreamMaxHeader, worker_->max_am_header());
  STRATA_RETURN_IF_ERROR(EpollAdd(epoll_fd_, worker_->event_fd(), EPOLLIN, kWorkerTag));
  host_identity_ = LocalHostIdentity();
  return absl::OkStatus();
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
  init_status_ = Initialize();
  const bool initialized = init_status_.ok();
  ready_.Notify();
  if (!initialized) {
    worker_.reset();
    handlers_.clear();
    if (epoll_fd_ >= 0) close(epoll_fd_);
    return;
  }
  const bool busy_poll = options_.busy_poll > absl::ZeroDuration();
  absl::Time last_busy = absl::InfinitePast();
  while (true) {
    bool busy = RunCommands();
    if (stop_requested_) break;
    busy |= ProgressWorker();
    busy |= HandleRecordedEvents();
    busy |= ServiceQueuedStreams();
    busy |= PollEvents(0);
    CheckDeadlines();
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
  if (worker_ == nullptr) return false;
  bool any = false;
  for (int i = 0; i < kProgressBurst && worker_->Progress() != 0; ++i) any = true;
  return any;
}

bool MessengerImpl::HandleRecordedEvents() {
  const bool any = !handshakes_.empty() || !failed_peers_.empty() || !closes_.empty() ||
                   !retired_handlers_.empty();
  if (!handshakes_.empty()) {
    std::vector<Handshake> handshakes;
    handshakes.swap(handshakes_);
    for (const Handshake& handshake : handshakes) HandleHandshake(handshake);
  }
  if (!failed_peers_.empty()) FailPeers();
  for (auto it = draining_.begin(); it != draining_.end();) {
    Peer* peer = FindPeer(*it);
    if (peer != nullptr && !peer->force_close && !peer->failed && peer->stream != nullptr &&
        !peer->stream->idle()) {
      ++it;
      continue;
    }
    if (peer != nullptr) {
      peer->draining = false;
      closes_.push_back(*it);
    }
    it = draining_.erase(it);
  }
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

bool MessengerImpl::PollEvents(int timeout_ms) {
  epoll_event events[64];
  const int count = epoll_wait(epoll_fd_, events, 64, timeout_ms);
  if (count < 0) {
    if (errno != EINTR) PLOG(FATAL) << "epoll_wait";
    return false;
  }
  bool any = false;
  for (int i = 0; i < count; ++i) {
    const uint64_t tag = events[i].data.u64;
    if (tag == kWakeTag || tag == kWorkerTag) continue;  // drained by the queue / progress
    any = true;
    if ((tag & kListenerTag) != 0) {
      const size_t index = tag & ~kListenerTag;
      if (index < listeners_.size()) AcceptStreams(listeners_[index]);
      continue;
    }
    if (Peer* peer = FindPeer(static_cast<PeerId>(tag & ~kPeerTag)); peer != nullptr) {
      ServiceStream(*peer, events[i].events);
    }
  }
  return any;
}

void MessengerImpl::Sleep() {
  if (!queue_->PrepareToSleep()) return;
  if (worker_ != nullptr && !worker_->Arm()) {
    queue_->WokeUp();
    return;
  }
  // A bounded sleep even when idle: a safety net should a transport miss a wakeup, and the
  // clock for deadlines while transfers are outstanding.
  int timeout_ms = operations_.empty() && closing_.empty() ? 1000 : 10;
  if (timeout_ms > 100) {
    // Handshakes and drains have deadlines too.
    for (const auto& [id, peer] : peers_) {
      if (!peer->announced || peer->draining) {
        timeout_ms = 100;
        break;
      }
    }
  }
  PollEvents(timeout_ms);
  queue_->WokeUp();
}

void MessengerImpl::CheckDeadlines() {
  const absl::Time now = absl::Now();
  if (now < next_deadline_check_) return;
  next_deadline_check_ = now + kDeadlineCheckInterval;
  std::vector<std::pair<PeerId, absl::Status>> expired;
  for (const auto& [id, peer] : peers_) {
    if (peer->failed) continue;
    if (!peer->announced && now - peer->started > options_.handshake_timeout) {
      expired.emplace_back(id, absl::DeadlineExceededError(
                                   absl::StrCat("the handshake did not complete within ",
                                                absl::FormatDuration(options_.handshake_timeout))));
      continue;
    }
    if (peer->stream != nullptr && now - peer->stream->busy_since() > options_.transfer_timeout) {
      expired.emplace_back(id, absl::DeadlineExceededError(
                                   absl::StrCat("a transfer did not finish within ",
                                                absl::FormatDuration(options_.transfer_timeout))));
    }
  }
  // Operations on shared-memory data endpoints (stream operations are covered above).
  for (const auto& [raw, op] : operations_) {
    if (op->unchecked && now - op->started > options_.transfer_timeout) {
      expired.emplace_back(op->peer, absl::DeadlineExceededError(absl::StrCat(
                                         "a transfer did not finish within ",
                                         absl::FormatDuration(options_.transfer_timeout))));
    }
  }
  for (auto& [id, why] : expired) {
    if (Peer* peer = FindPeer(id); peer != nullptr) FailPeer(*peer, std::move(why));
  }
}

void MessengerImpl::Shutdown() {
  shutting_down_ = true;
  // Work queued before the stop still runs (later pushes run cancelled on their thread).
  for (CommandQueue::Command& command : queue_->Close()) std::move(command)(false);
  for (const StreamListener& listener : listeners_) close(listener.fd);
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
    ServiceQueuedStreams();
    PollEvents(worker_ == nullptr ? 1 : 0);
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
  close(epoll_fd_);
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
  if (worker_ == nullptr) {
    std::unique_ptr<HandlerSlot>& current = handlers_[id];
    if (current != nullptr) retired_handlers_.push_back(std::move(current));
    current = std::move(slot);
    return absl::OkStatus();
  }
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
    absl::StatusOr<StreamListener> listener = ListenStream(parsed);
    if (!listener.ok()) {
      result = listener.status();
      return;
    }
    const uint64_t tag = kListenerTag | listeners_.size();
    if (absl::Status added = EpollAdd(epoll_fd_, listener->fd, EPOLLIN, tag); !added.ok()) {
      close(listener->fd);
      result = added;
      return;
    }
    result = listener->bound.port();
    LOG(INFO) << options_.name << ": listening on " << listener->bound.ToString();
    listeners_.push_back(*std::move(listener));
  }));
  return result;
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
    if (peer.stream != nullptr) {
      absl::StrAppend(&out, "stream: tcp ", DescribeSocket(peer.stream->fd()), "\n");
    }
    if (peer.data != nullptr) {
      char* text = nullptr;
      size_t length = 0;
      FILE* stream = open_memstream(&text, &length);
      if (stream == nullptr) {
        result = absl::ResourceExhaustedError("open_memstream failed");
        return;
      }
      ucp_ep_print_info(peer.data->get(), stream);
      fclose(stream);
      absl::StrAppend(&out, "data endpoint:\n", absl::string_view(text, length));
      free(text);
    }
    result = std::move(out);
  }));
  return result;
}

absl::StatusOr<std::string> MessengerImpl::PeerIdentity(PeerId id) {
  absl::StatusOr<std::string> result = absl::InternalError("not run");
  STRATA_RETURN_IF_ERROR(RunSync([&] {
    if (absl::Status unusable = PeerUnusable(id); !unusable.ok()) {
      result = unusable;
      return;
    }
    result = FindPeer(id)->identity;
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
  s.peers_disconnected = counters_.peers_disconnected.load(std::memory_order_relaxed);
  s.peers_refused = counters_.peers_refused.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::store::transport
