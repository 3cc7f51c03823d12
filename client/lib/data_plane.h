// DataPlane: the client's side of the node's UCX data plane (docs/api.md, "Data plane";
// wire format in strata/store/transport/wire.h).
//
// It owns one transport::Messenger (a UCX worker and its progress thread), one connection
// per node address (made by Connect, dropped when the transport reports the peer failed,
// made again by the next Connect), and the table of requests in flight, keyed by
// request_id:
//
//   StartRead   sends READ(namespace, ranges): a read in one round trip, no lease RPC. The
//               node takes the lease itself, answers READ_GRANT (the checksums of every
//               item, received straight into `grant`, then reported as item kGrantItem),
//               sends each item as FETCH_DATA(index) into dests[index] (reported as
//               first_item + index), releases the lease and ends with FETCH_DONE; an error
//               before any transfer (a miss, a layout mismatch) comes as FETCH_DONE alone.
//               At most options.max_fetches_per_peer READs are in flight per connection:
//               StartRead waits for a slot (the node serves a connection's requests in
//               arrival order).
//   StartPutBlob  a put in one round trip: sends PUT(header, metadata) and the blob as
//               PUT_DATA pieces of the PUT — the first `window` bytes at once, the rest when
//               PUT_RESULT grants the put (none when the key exists or the put is refused);
//               PUT_RESULT final ends it: its OK reports item 0 (the whole blob) and fills
//               the outcome (key, exists, indexed pages).
//
// Results go to the call's TransferGroup (transfer_group.h). Data for a request that is not
// (or no longer) in the table, or whose group was cancelled or failed, is dropped. A
// FETCH_DATA whose size differs from what was asked fails the group (INTERNAL). A peer
// failure ends every request on that peer with UNAVAILABLE.
//
// Abandon(group) is how a call that gives up (error, deadline, bad checksum) gets its memory
// back: the group is cancelled, its requests are forgotten, and Abandon returns only once
// no Accept or Send of the group is in flight (after a grace period it disconnects the
// group's peers, which makes UCX fail them).
//
// Errors: Create as Messenger::Create (INVALID_ARGUMENT unknown transport; UNAVAILABLE no
// usable transport); Connect INVALID_ARGUMENT bad address, UNAVAILABLE refused or
// unreachable, UNAUTHENTICATED the node refused the credential, DEADLINE_EXCEEDED the
// deadline passed, or what `credential` returned; Register as Messenger::RegisterMemory.
//
// Thread-safe: every method from any thread (not from the messenger's progress thread).
// Destruction shuts the messenger down; every outstanding completion runs first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "client/lib/transfer_group.h"
#include "strata/radix/blob_key.h"
#include "strata/store/transport/memory_region.h"
#include "strata/store/transport/messenger.h"
#include "strata/store/transport/wire.h"

namespace strata::client_internal {

struct DataPlaneOptions {
  std::string transports;  // UCX_TLS syntax; empty: UCX_TLS / UCX's default
  absl::Duration connect_timeout = absl::Seconds(5);
  // How long Abandon waits for in-flight transfers before disconnecting their peers.
  absl::Duration abandon_grace = absl::Seconds(2);
  // READ requests in flight per node connection, across all calls; StartRead waits for a
  // slot. The node refuses more than its own limit (256 by default) with RESOURCE_EXHAUSTED.
  uint32_t max_fetches_per_peer = 128;
};

class DataPlane {
 public:
  using PeerId = store::transport::PeerId;
  using MemoryRegion = store::transport::MemoryRegion;

  static absl::StatusOr<std::unique_ptr<DataPlane>> Create(DataPlaneOptions options);
  ~DataPlane();
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  // The connection to the data plane at "host:port", made if there is none; `credential`
  // is asked for (only) then, and its answer presented in the handshake.
  absl::StatusOr<PeerId> Connect(const std::string& address, absl::Time deadline,
                                 absl::FunctionRef<absl::StatusOr<std::string>()> credential)
      ABSL_LOCKS_EXCLUDED(connect_mu_, mu_);

  // The item number READ_GRANT lands as.
  static constexpr uint32_t kGrantItem = UINT32_MAX;

  // REQUIRES: dests[i] is item i's memory (num_pages pages of one layer, in the READ's
  // item order: range by range, layer by layer within a range), `grant` has room for
  // exactly every item's chunk checksums; both stay valid until the group finished or was
  // abandoned. A READ_GRANT announcing another checksum count fails the group (INTERNAL).
  // DEADLINE_EXCEEDED when no slot freed up by `deadline` (nothing was sent).
  absl::Status StartRead(PeerId peer, const store::transport::wire::ReadHeader& header,
                         std::vector<uint8_t> payload, std::vector<absl::Span<uint8_t>> dests,
                         absl::Span<uint64_t> grant, uint32_t first_item,
                         const std::shared_ptr<TransferGroup>& group,
                         std::shared_ptr<const MemoryRegion> region, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);

  // What a PUT's final PUT_RESULT said.
  struct PutOutcome {
    radix::BlobKey key;
    bool exists = false;
    uint32_t indexed_pages = 0;
  };
  // REQUIRES: `bytes` (header.bytes of them) stays valid until the group finished or was
  // abandoned; piece > 0. `metadata` is the PUT payload (wire::EncodePutPayload).
  void StartPutBlob(PeerId peer, store::transport::wire::PutHeader header,
                    std::vector<uint8_t> metadata, absl::Span<const uint8_t> bytes, size_t piece,
                    uint64_t window, const std::shared_ptr<TransferGroup>& group,
                    std::shared_ptr<const MemoryRegion> region, std::shared_ptr<PutOutcome> outcome)
      ABSL_LOCKS_EXCLUDED(mu_);

  // See above. Returns when no transfer of the group borrows memory any more.
  void Abandon(const std::shared_ptr<TransferGroup>& group) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<std::unique_ptr<MemoryRegion>> Register(void* data, size_t size);
  // Messenger::AcceptsCudaMemory: whether reads may land in CUDA device memory directly.
  bool accepts_cuda_memory() const { return messenger_->AcceptsCudaMemory(); }
  // Messenger::DescribePeer.
  absl::StatusOr<std::string> Describe(PeerId peer);

  store::transport::MessengerStats stats() const;

 private:
  enum class Kind { kFetch, kPutBlob };
  struct Request {
    Kind kind;
    PeerId peer;
    std::shared_ptr<TransferGroup> group;
    uint32_t first_item = 0;
    std::vector<absl::Span<uint8_t>> dests;  // kFetch
    absl::Span<uint64_t> grant;              // kFetch of a READ
    uint64_t put_bytes = 0;                  // kPutBlob
    std::shared_ptr<const MemoryRegion> region;
    // kPutBlob: the blob, its piece size, how much of it has been handed to the messenger
    // (under mu_: the caller and the grant both send), and where the result goes.
    absl::Span<const uint8_t> source;
    size_t piece = 0;
    uint64_t claimed = 0;
    std::shared_ptr<PutOutcome> outcome;
  };

  explicit DataPlane(DataPlaneOptions options) : options_(std::move(options)) {}
  absl::Status Init();

  uint64_t AddRequest(std::shared_ptr<Request> request) ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<Request> FindRequest(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes the request; null if it was gone already (each request ends exactly once).
  std::shared_ptr<Request> TakeRequest(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Bookkeeping of a request leaving the table (its FETCH slot).
  void ForgetLocked(const Request& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Progress-thread handlers.
  void OnFetchData(absl::Span<const uint8_t> header, store::transport::IncomingData data);
  void OnReadGrant(absl::Span<const uint8_t> header, store::transport::IncomingData data);
  // Waits for a request slot on `peer` and takes it; DEADLINE_EXCEEDED when none freed up.
  absl::Status TakeFetchSlot(PeerId peer, absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends the READ message of the request registered under `id`; a failed send ends
  // the request.
  void SendRequest(PeerId peer, uint64_t id, uint16_t type, absl::Span<const uint8_t> header,
                   std::shared_ptr<std::vector<uint8_t>> payload);
  void OnFetchDone(absl::Span<const uint8_t> header, store::transport::IncomingData data);
  void OnPutResult(absl::Span<const uint8_t> header, store::transport::IncomingData data);
  // Claims the blob's bytes up to `upto` not yet sent (none once the PUT ended) and sends
  // them as PUT_DATA pieces of PUT `id`.
  void SendPieces(uint64_t id, uint64_t upto) ABSL_LOCKS_EXCLUDED(mu_);
  void OnPeerFailed(PeerId peer, const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  const DataPlaneOptions options_;

  absl::Mutex connect_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  uint64_t next_request_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Request>> requests_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PeerId> peers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PeerId, std::string> peer_addresses_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<PeerId, uint32_t> fetches_in_flight_ ABSL_GUARDED_BY(mu_);

  // Last member: destroyed first, while the tables its handlers touch still exist.
  std::unique_ptr<store::transport::Messenger> messenger_;
};

}  // namespace strata::client_internal
