#include "store/dataplane/test_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::store::dataplane::testing {

namespace wire = transport::wire;
using transport::IncomingData;
using transport::PeerId;

// ---------------------------------------------------------------------------- FetchCall

bool FetchCall::Wait(absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto over = [this]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_ && pending_accepts_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&over), limit);
}

bool FetchCall::WaitForData(uint32_t n, absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return data_messages_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), limit);
}

FetchOutcome FetchCall::outcome() const {
  absl::MutexLock lock(&mu_);
  FetchOutcome out;
  if (done_) out.status = status_;
  out.ranges = ranges_;
  out.data_messages = data_messages_;
  out.data_after_done = data_after_done_;
  return out;
}

uint32_t FetchCall::data_messages() const {
  absl::MutexLock lock(&mu_);
  return data_messages_;
}

void FetchCall::AcceptHeld() {
  std::vector<std::pair<uint32_t, IncomingData>> held;
  {
    absl::MutexLock lock(&mu_);
    hold_data_ = false;
    held.swap(held_);
  }
  for (auto& [index, data] : held) Accept(index, std::move(data));
}

void FetchCall::OnData(const wire::FetchDataHeader& header, IncomingData data) {
  {
    absl::MutexLock lock(&mu_);
    ++data_messages_;
    if (done_) ++data_after_done_;
    if (header.index >= dests_.size()) {
      data.Drop();
      return;
    }
    if (header.status != absl::StatusCode::kOk) {
      ranges_[header.index] = absl::Status(header.status, "FETCH_DATA status");
      return;
    }
    if (hold_data_) {
      held_.emplace_back(header.index, std::move(data));
      return;
    }
  }
  Accept(header.index, std::move(data));
}

void FetchCall::Accept(uint32_t index, IncomingData data) {
  {
    absl::MutexLock lock(&mu_);
    ++pending_accepts_;
  }
  data.Accept(dests_[index], [self = shared_from_this(), index](absl::Status status) {
    absl::MutexLock lock(&self->mu_);
    self->ranges_[index] = std::move(status);
    --self->pending_accepts_;
  });
}

void FetchCall::OnDone(absl::Status status) {
  absl::MutexLock lock(&mu_);
  done_ = true;
  status_ = std::move(status);
}

// ---------------------------------------------------------------------------- TestClient

absl::StatusOr<std::unique_ptr<TestClient>> TestClient::Connect(const std::string& address,
                                                                TestClientOptions options) {
  std::unique_ptr<TestClient> client(new TestClient(std::move(options)));
  TestClient* self = client.get();
  transport::MessengerOptions messenger_options;
  messenger_options.name = "test-client";
  messenger_options.transports = self->options_.transports;
  messenger_options.on_peer_failed = [self](PeerId, absl::Status status) {
    self->OnPeerFailed(status);
  };
  STRATA_ASSIGN_OR_RETURN(self->messenger_,
                          transport::Messenger::Create(std::move(messenger_options)));
  STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
      static_cast<uint16_t>(wire::MessageType::kFetchData),
      [self](PeerId, absl::Span<const uint8_t> header, IncomingData data) {
        self->OnFetchData(header, std::move(data));
      }));
  for (wire::MessageType type : {wire::MessageType::kFetchDone, wire::MessageType::kPutDone,
                                 wire::MessageType::kPutResult}) {
    STRATA_RETURN_IF_ERROR(self->messenger_->RegisterHandler(
        static_cast<uint16_t>(type), [self, type](PeerId, absl::Span<const uint8_t> header,
                                                  IncomingData) { self->OnDone(type, header); }));
  }
  STRATA_ASSIGN_OR_RETURN(self->peer_, self->messenger_->Connect(address));
  return client;
}

TestClient::~TestClient() { messenger_.reset(); }

uint64_t TestClient::NextRequestId() {
  absl::MutexLock lock(&mu_);
  return next_request_id_++;
}

void TestClient::OnFetchData(absl::Span<const uint8_t> header, IncomingData data) {
  absl::StatusOr<wire::FetchDataHeader> decoded = wire::DecodeFetchDataHeader(header);
  CHECK(decoded.ok()) << "node sent a bad FETCH_DATA header: " << decoded.status();
  std::shared_ptr<FetchCall> call;
  {
    absl::MutexLock lock(&mu_);
    auto it = fetches_.find(decoded->request_id);
    if (it != fetches_.end()) call = it->second;
  }
  if (call == nullptr) {
    LOG(ERROR) << "FETCH_DATA for unknown request " << decoded->request_id;
    data.Drop();
    return;
  }
  call->OnData(*decoded, std::move(data));
}

void TestClient::OnPeerFailed(const absl::Status& status) {
  absl::flat_hash_map<uint64_t, std::shared_ptr<FetchCall>> fetches;
  absl::flat_hash_map<DoneKey, std::shared_ptr<DoneWaiter>> waiters;
  {
    absl::MutexLock lock(&mu_);
    fetches.swap(fetches_);
    waiters.swap(waiters_);
  }
  for (auto& [id, call] : fetches) call->OnDone(status);
  for (auto& [key, waiter] : waiters) {
    absl::MutexLock lock(&waiter->mu);
    waiter->done = true;
    waiter->status = status;
  }
}

void TestClient::OnDone(wire::MessageType type, absl::Span<const uint8_t> header) {
  absl::StatusOr<wire::DoneHeader> decoded;
  if (type == wire::MessageType::kPutResult) {
    // A PUT's final PUT_RESULT counts as its DONE (a grant does not).
    absl::StatusOr<wire::PutResultHeader> result = wire::DecodePutResult(header);
    CHECK(result.ok()) << "node sent a bad PUT_RESULT: " << result.status();
    if (result->stage == wire::PutResultHeader::Stage::kGranted) return;
    decoded = wire::DoneHeader{result->request_id, result->status};
  } else {
    decoded = wire::DecodeDone(type, header);
  }
  CHECK(decoded.ok()) << "node sent a bad DONE header: " << decoded.status();
  std::shared_ptr<FetchCall> call;
  std::shared_ptr<DoneWaiter> waiter;
  {
    absl::MutexLock lock(&mu_);
    if (type == wire::MessageType::kFetchDone) {
      auto it = fetches_.find(decoded->request_id);
      if (it != fetches_.end()) {
        call = std::move(it->second);
        fetches_.erase(it);
      }
    }
    auto it = waiters_.find(DoneKey(static_cast<uint8_t>(type), decoded->request_id));
    if (it != waiters_.end()) {
      waiter = std::move(it->second);
      waiters_.erase(it);
    }
  }
  if (call != nullptr) call->OnDone(decoded->status);
  if (waiter != nullptr) {
    absl::MutexLock lock(&waiter->mu);
    waiter->done = true;
    waiter->status = decoded->status;
  }
  if (call == nullptr && waiter == nullptr) {
    LOG(ERROR) << "DONE " << static_cast<int>(type) << " for unknown request "
               << decoded->request_id;
  }
}

std::shared_ptr<FetchCall> TestClient::StartFetch(uint64_t lease_id, const radix::BlobKey& blob,
                                                  absl::Span<const wire::ByteRange> ranges,
                                                  std::vector<absl::Span<uint8_t>> dests,
                                                  transport::DataProtocol ranges_protocol) {
  auto call = std::make_shared<FetchCall>(std::move(dests), options_.hold_data);
  const uint64_t request_id = NextRequestId();
  {
    absl::MutexLock lock(&mu_);
    fetches_[request_id] = call;
  }
  const auto header =
      wire::EncodeFetchHeader({.request_id = request_id,
                               .lease_id = lease_id,
                               .key = {.hi = blob.hash.hi, .lo = blob.hash.lo},
                               .range_count = static_cast<uint32_t>(ranges.size())});
  auto payload = std::make_shared<std::vector<uint8_t>>(wire::EncodeFetchRanges(ranges));
  messenger_->Send(peer_, static_cast<uint16_t>(wire::MessageType::kFetch), header, *payload,
                   {.protocol = ranges_protocol}, [call, payload](absl::Status status) {
                     if (!status.ok()) call->OnDone(std::move(status));
                   });
  return call;
}

std::shared_ptr<FetchCall> TestClient::ExpectData(uint64_t request_id,
                                                  std::vector<absl::Span<uint8_t>> dests) {
  auto call = std::make_shared<FetchCall>(std::move(dests), options_.hold_data);
  absl::MutexLock lock(&mu_);
  fetches_[request_id] = call;
  return call;
}

FetchOutcome TestClient::Fetch(uint64_t lease_id, const radix::BlobKey& blob,
                               absl::Span<const wire::ByteRange> ranges,
                               std::vector<absl::Span<uint8_t>> dests) {
  std::shared_ptr<FetchCall> call = StartFetch(lease_id, blob, ranges, std::move(dests));
  call->Wait();
  return call->outcome();
}

std::shared_ptr<TestClient::DoneWaiter> TestClient::AddWaiter(wire::MessageType reply,
                                                              uint64_t request_id) {
  auto waiter = std::make_shared<DoneWaiter>();
  absl::MutexLock lock(&mu_);
  waiters_[DoneKey(static_cast<uint8_t>(reply), request_id)] = waiter;
  return waiter;
}

absl::Status TestClient::Await(DoneWaiter& waiter, absl::Duration limit) {
  absl::MutexLock lock(&waiter.mu);
  if (!waiter.mu.AwaitWithTimeout(absl::Condition(&waiter.done), limit)) {
    return absl::DeadlineExceededError("no DONE from the node");
  }
  return waiter.status;
}

absl::Status TestClient::Put(uint64_t put_id, uint64_t offset, absl::Span<const uint8_t> bytes) {
  const uint64_t request_id = NextRequestId();
  std::shared_ptr<DoneWaiter> reply = AddWaiter(wire::MessageType::kPutDone, request_id);
  auto sent = std::make_shared<DoneWaiter>();
  const auto header =
      wire::EncodePutDataHeader({.request_id = request_id, .put_id = put_id, .offset = offset});
  messenger_->Send(peer_, static_cast<uint16_t>(wire::MessageType::kPutData), header, bytes,
                   {.protocol = transport::DataProtocol::kRendezvous}, [sent](absl::Status status) {
                     absl::MutexLock lock(&sent->mu);
                     sent->done = true;
                     sent->status = std::move(status);
                   });
  // The payload is borrowed until the send completes, whatever the node answers.
  const absl::Status send_status = Await(*sent, kWaitLimit);
  // A payload the node dropped fails the send (ABORTED); PUT_DONE says why.
  const absl::Status done = Await(*reply, send_status.ok() ? kWaitLimit : absl::Seconds(2));
  if (absl::IsDeadlineExceeded(done) && !send_status.ok()) return send_status;
  return done;
}

absl::Status TestClient::SendRaw(wire::MessageType type, absl::Span<const uint8_t> header,
                                 absl::Span<const uint8_t> payload, wire::MessageType reply,
                                 uint64_t request_id) {
  std::shared_ptr<DoneWaiter> waiter = AddWaiter(reply, request_id);
  auto owned = std::make_shared<std::vector<uint8_t>>(payload.begin(), payload.end());
  messenger_->Send(peer_, static_cast<uint16_t>(type), header, *owned,
                   {.protocol = transport::DataProtocol::kEager}, [owned](absl::Status) {});
  return Await(*waiter, kWaitLimit);
}

absl::Status TestClient::SendPut(
    absl::Span<const uint8_t> header, absl::Span<const uint8_t> payload, uint64_t request_id,
    const std::vector<std::pair<uint64_t, absl::Span<const uint8_t>>>& pieces) {
  std::shared_ptr<DoneWaiter> waiter = AddWaiter(wire::MessageType::kPutResult, request_id);
  auto owned = std::make_shared<std::vector<uint8_t>>(payload.begin(), payload.end());
  messenger_->Send(peer_, static_cast<uint16_t>(wire::MessageType::kPut), header, *owned, {},
                   [owned](absl::Status) {});
  for (const auto& [offset, bytes] : pieces) {
    const auto piece = wire::EncodePutDataHeader(
        {.request_id = 0, .put_id = request_id, .offset = offset, .of_put = true});
    // A copy: a refused PUT is answered while its pieces may still be on their way.
    auto copy = std::make_shared<std::vector<uint8_t>>(bytes.begin(), bytes.end());
    messenger_->Send(peer_, static_cast<uint16_t>(wire::MessageType::kPutData), piece, *copy,
                     {.protocol = transport::DataProtocol::kRendezvous}, [copy](absl::Status) {});
  }
  return Await(*waiter, kWaitLimit);
}

}  // namespace strata::store::dataplane::testing
