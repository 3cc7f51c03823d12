// TestClient: a bare data-plane client for tests and the benchmark (not part of the
// library): one transport::Messenger connected to a DataPlaneServer, speaking the wire
// protocol of strata/store/transport/wire.h by hand.
//
//   StartFetch  sends FETCH and lands FETCH_DATA `i` in dests[i] (or, with hold_data, keeps
//               the payload descriptors undecided until AcceptHeld: a slow reader that
//               keeps the node's sends in flight); FetchCall::Wait waits for FETCH_DONE and
//               every accepted payload.
//   Put         sends PUT_DATA (rendezvous) and waits for PUT_DONE.
//   SendRaw     sends any header/payload under a message id and waits for the DONE of
//               `reply` carrying `request_id` (malformed-header tests).
//
// Destroying a TestClient destroys its messenger: to the node it is a client that died.
// Thread-safe; every wait is bounded (kWaitLimit) and reports DEADLINE_EXCEEDED.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/radix/blob_key.h"
#include "strata/store/transport/messenger.h"
#include "strata/store/transport/wire.h"

namespace strata::store::dataplane::testing {

inline constexpr absl::Duration kWaitLimit = absl::Seconds(20);

// What one FETCH produced.
struct FetchOutcome {
  absl::Status status = absl::DeadlineExceededError("no FETCH_DONE");  // FETCH_DONE's status
  // Per range: OK once its bytes landed; the receive's or FETCH_DATA's error; nullopt when
  // no FETCH_DATA for it came.
  std::vector<std::optional<absl::Status>> ranges;
  uint32_t data_messages = 0;    // FETCH_DATA received
  uint32_t data_after_done = 0;  // FETCH_DATA received after FETCH_DONE (must stay 0)
};

class FetchCall : public std::enable_shared_from_this<FetchCall> {
 public:
  FetchCall(std::vector<absl::Span<uint8_t>> dests, bool hold_data)
      : dests_(std::move(dests)), hold_data_(hold_data) {
    ranges_.resize(dests_.size());
  }
  // True when FETCH_DONE came and every accepted payload completed within `limit`.
  bool Wait(absl::Duration limit = kWaitLimit) ABSL_LOCKS_EXCLUDED(mu_);
  // True when at least `n` FETCH_DATA messages came within `limit`.
  bool WaitForData(uint32_t n, absl::Duration limit = kWaitLimit) ABSL_LOCKS_EXCLUDED(mu_);
  FetchOutcome outcome() const ABSL_LOCKS_EXCLUDED(mu_);
  uint32_t data_messages() const ABSL_LOCKS_EXCLUDED(mu_);
  // hold_data: accepts every payload kept so far (and stops holding later ones).
  void AcceptHeld() ABSL_LOCKS_EXCLUDED(mu_);

  // The client's handlers (progress thread).
  void OnData(const transport::wire::FetchDataHeader& header, transport::IncomingData data)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Accept(uint32_t index, transport::IncomingData data) ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<absl::Span<uint8_t>> dests_;
  mutable absl::Mutex mu_;
  bool hold_data_ ABSL_GUARDED_BY(mu_);
  std::vector<std::optional<absl::Status>> ranges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<uint32_t, transport::IncomingData>> held_ ABSL_GUARDED_BY(mu_);
  uint32_t pending_accepts_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t data_messages_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t data_after_done_ ABSL_GUARDED_BY(mu_) = 0;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

struct TestClientOptions {
  std::string transports;  // UCX_TLS syntax; empty: the environment's
  bool hold_data = false;  // see FetchCall::AcceptHeld
};

class TestClient {
 public:
  static absl::StatusOr<std::unique_ptr<TestClient>> Connect(const std::string& address,
                                                             TestClientOptions options = {});
  ~TestClient();

  std::shared_ptr<FetchCall> StartFetch(
      uint64_t lease_id, const radix::BlobKey& blob,
      absl::Span<const transport::wire::ByteRange> ranges, std::vector<absl::Span<uint8_t>> dests,
      transport::DataProtocol ranges_protocol = transport::DataProtocol::kAuto)
      ABSL_LOCKS_EXCLUDED(mu_);
  // StartFetch + Wait.
  FetchOutcome Fetch(uint64_t lease_id, const radix::BlobKey& blob,
                     absl::Span<const transport::wire::ByteRange> ranges,
                     std::vector<absl::Span<uint8_t>> dests);
  // Lands FETCH_DATA `i` of request `request_id` in dests[i] (for messages sent by hand,
  // e.g. a READ through SendRaw).
  std::shared_ptr<FetchCall> ExpectData(uint64_t request_id, std::vector<absl::Span<uint8_t>> dests)
      ABSL_LOCKS_EXCLUDED(mu_);
  // PUT_DATA of `bytes` at `offset` of put `put_id`; PUT_DONE's status.
  absl::Status Put(uint64_t put_id, uint64_t offset, absl::Span<const uint8_t> bytes);
  // Sends message `type` with `header` and `payload` (eager) and returns the status of the
  // DONE of type `reply` that carries `request_id` (for kPutResult: the PUT's final
  // PUT_RESULT).
  absl::Status SendRaw(transport::wire::MessageType type, absl::Span<const uint8_t> header,
                       absl::Span<const uint8_t> payload, transport::wire::MessageType reply,
                       uint64_t request_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Sends PUT `header` with `payload`, then each piece as a PUT_DATA of that PUT (at its
  // offset) without waiting, and returns the status of the PUT's final PUT_RESULT.
  absl::Status SendPut(absl::Span<const uint8_t> header, absl::Span<const uint8_t> payload,
                       uint64_t request_id,
                       const std::vector<std::pair<uint64_t, absl::Span<const uint8_t>>>& pieces)
      ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t NextRequestId() ABSL_LOCKS_EXCLUDED(mu_);
  transport::Messenger& messenger() { return *messenger_; }
  transport::PeerId peer() const { return peer_; }

 private:
  struct DoneWaiter {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
  };
  using DoneKey = std::pair<uint8_t, uint64_t>;  // (reply type, request_id)

  explicit TestClient(TestClientOptions options) : options_(std::move(options)) {}
  // The node's connection failed: every unfinished fetch and reply ends with `status`.
  void OnPeerFailed(const absl::Status& status);
  void OnFetchData(absl::Span<const uint8_t> header, transport::IncomingData data)
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone(transport::wire::MessageType type, absl::Span<const uint8_t> header)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<DoneWaiter> AddWaiter(transport::wire::MessageType reply, uint64_t request_id)
      ABSL_LOCKS_EXCLUDED(mu_);
  static absl::Status Await(DoneWaiter& waiter, absl::Duration limit);

  const TestClientOptions options_;
  absl::Mutex mu_;
  uint64_t next_request_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, std::shared_ptr<FetchCall>> fetches_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<DoneKey, std::shared_ptr<DoneWaiter>> waiters_ ABSL_GUARDED_BY(mu_);
  transport::PeerId peer_ = transport::PeerId::kNone;
  // Declared last: destroyed first (its handlers use the members above).
  std::unique_ptr<transport::Messenger> messenger_;
};

}  // namespace strata::store::dataplane::testing
