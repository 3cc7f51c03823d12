#include "strata/store/transport/incoming_data.h"

#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"

#include "store/transport/incoming_data_rep.h"
#include "store/transport/messenger_impl.h"

namespace strata::store::transport {

IncomingData& IncomingData::operator=(IncomingData&& other) noexcept {
  if (this != &other) {
    Drop();
    rep_ = std::move(other.rep_);
  }
  return *this;
}

IncomingData::~IncomingData() { Drop(); }

size_t IncomingData::size() const { return rep_ == nullptr ? 0 : rep_->size; }

bool IncomingData::is_rendezvous() const { return rep_ != nullptr && rep_->rendezvous; }

absl::Span<const uint8_t> IncomingData::eager_bytes() const {
  if (rep_ == nullptr || rep_->rendezvous) return {};
  absl::MutexLock lock(&rep_->mu);
  if (rep_->in_handler) {
    return absl::Span<const uint8_t>(static_cast<const uint8_t*>(rep_->ucx_data), rep_->size);
  }
  return absl::Span<const uint8_t>(rep_->kept_bytes);
}

void IncomingData::Accept(absl::Span<uint8_t> dest, CompletionCallback done,
                          const MemoryRegion* region) {
  std::shared_ptr<Rep> rep = std::move(rep_);
  if (rep == nullptr) {
    std::move(done)(absl::OkStatus());
    return;
  }
  if (std::this_thread::get_id() == rep->progress_thread) {
    rep->impl->AcceptNow(rep, dest, std::move(done), region);
    return;
  }
  {
    absl::MutexLock lock(&rep->mu);
    if (rep->state == Rep::State::kUndecided) rep->state = Rep::State::kQueued;
  }
  std::shared_ptr<CommandQueue> queue = rep->queue;
  queue->Push([rep = std::move(rep), dest, done = std::move(done), region](bool cancelled) mutable {
    if (cancelled) {
      std::move(done)(absl::CancelledError("the messenger shut down before Accept ran"));
      return;
    }
    rep->impl->AcceptNow(rep, dest, std::move(done), region);
  });
}

void IncomingData::Drop() {
  std::shared_ptr<Rep> rep = std::move(rep_);
  if (rep == nullptr) return;
  if (std::this_thread::get_id() == rep->progress_thread) {
    rep->impl->DropNow(rep);
    return;
  }
  {
    absl::MutexLock lock(&rep->mu);
    if (rep->state == Rep::State::kUndecided) rep->state = Rep::State::kQueued;
  }
  std::shared_ptr<CommandQueue> queue = rep->queue;
  queue->Push([rep = std::move(rep)](bool cancelled) {
    if (!cancelled) rep->impl->DropNow(rep);
  });
}

}  // namespace strata::store::transport
