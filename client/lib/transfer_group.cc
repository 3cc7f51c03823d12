#include "client/lib/transfer_group.h"

#include <algorithm>
#include <utility>

#include "glog/logging.h"

namespace strata::client_internal {

void TransferGroup::RequestStarted() {
  absl::MutexLock lock(&mu_);
  ++pending_requests_;
}

void TransferGroup::RequestEnded(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  DCHECK_GT(pending_requests_, 0);
  --pending_requests_;
  request_ended_ = true;
  if (!status.ok() && failure_.ok()) failure_ = status;
}

bool TransferGroup::TryBeginTransfer() {
  absl::MutexLock lock(&mu_);
  if (cancelled_ || !failure_.ok()) return false;
  ++in_flight_;
  return true;
}

void TransferGroup::EndTransfer(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  DCHECK_GT(in_flight_, 0);
  --in_flight_;
  if (!status.ok() && failure_.ok()) failure_ = status;
}

void TransferGroup::ItemLanded(uint32_t item, uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  landed_.push_back(item);
  landed_bytes_ += bytes;
}

void TransferGroup::Fail(const absl::Status& status) {
  DCHECK(!status.ok());
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = status;
}

int TransferGroup::pending_requests() const {
  absl::MutexLock lock(&mu_);
  return pending_requests_;
}

bool TransferGroup::accepting() const {
  absl::MutexLock lock(&mu_);
  return !cancelled_ && failure_.ok();
}

absl::Status TransferGroup::WaitForProgress(absl::Time deadline, std::vector<uint32_t>* landed,
                                            bool* finished) {
  absl::MutexLock lock(&mu_);
  auto progress = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !landed_.empty() || request_ended_ || !failure_.ok() || FinishedLocked();
  };
  const bool woke = mu_.AwaitWithDeadline(absl::Condition(&progress), deadline);
  request_ended_ = false;
  landed->insert(landed->end(), landed_.begin(), landed_.end());
  landed_.clear();
  *finished = FinishedLocked();
  if (!failure_.ok()) return failure_;
  if (!woke) return absl::DeadlineExceededError("deadline passed during the data transfer");
  return absl::OkStatus();
}

void TransferGroup::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

bool TransferGroup::WaitIdle(absl::Time until) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&idle), until);
}

uint64_t TransferGroup::landed_bytes() const {
  absl::MutexLock lock(&mu_);
  return landed_bytes_;
}

void TransferGroup::NotePeer(uint64_t peer) {
  absl::MutexLock lock(&mu_);
  if (std::find(peers_.begin(), peers_.end(), peer) == peers_.end()) peers_.push_back(peer);
}

std::vector<uint64_t> TransferGroup::peers() const {
  absl::MutexLock lock(&mu_);
  return peers_;
}

}  // namespace strata::client_internal
