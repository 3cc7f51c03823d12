// DataPlaneServer: the storage node's data plane — UCX active messages between clients and
// the NodeEngine's DRAM arena. A thin adapter: it decodes the wire headers
// (strata/store/transport/wire.h), calls the engine, and moves bytes; every policy (leases,
// puts, what may be read) is the engine's. Design: docs/design/node-and-client.md, "Data
// plane"; message layouts: wire.h.
//
// What it does
//   Start creates a transport::Messenger (transports: options.transports, else UCX_TLS),
//   registers the engine's whole DRAM arena once (RegisterMemory(base, mapped_bytes)) and
//   listens on options.listen_address (port 0: the kernel picks one; address() tells).
//
//   FETCH (client -> node): for each byte range, in order, engine.ReadSource(lease, blob,
//   offset, length) gives a HeldSpan (the bytes stay allocated until the send completes)
//   and FETCH_DATA{request_id, index, OK} carries them as a rendezvous payload straight
//   from the registered arena. At most options.max_sends_per_peer FETCH_DATA sends are in
//   flight per peer; a peer's FETCH requests are served in arrival order. FETCH_DONE
//   {request_id, status} is always the request's last message: OK after the last range's
//   send completed; on the first error no further range is started and FETCH_DONE carries
//   the error as soon as the sends already in flight for the request have completed.
//   PUT_DATA (client -> node): engine.PutTarget(put_id) gives the put's destination; the
//   payload is received straight into [offset, offset + size) of it (zero-copy
//   rendezvous), then engine.PutReceived(put_id, offset, size), the HeldSpan is released
//   (so a CommitPut after PUT_DONE is not refused for it), and PUT_DONE{request_id, status}
//   is sent. On an error the payload is dropped and PUT_DONE carries the status.
//   READ (client -> node): a read in one round trip. engine.Read(namespace, ranges, ttl)
//   takes the lease (on error: FETCH_DONE alone with the engine's status); READ_GRANT
//   carries every item's chunk checksums; the items are then served exactly like a FETCH's
//   ranges (consecutive layers contiguous in the blob merged into one FETCH_DATA of at most
//   kMaxMergedBytes when the READ allows it); when the request finishes, however it ends,
//   engine.Release(lease).
//   PUT (client -> node): a put in one round trip. Its payload (what BeginPut carries) is
//   received — into a buffer counted against options.max_put_metadata_bytes — and
//   engine.BeginPut begins the put; PUT_RESULT granted, or final when the key exists or the
//   put is refused. Its bytes come as PUT_DATA with kPutDataOfPut, each received straight
//   into the put's extent (pieces that arrive before the begin are kept, at most 64); when
//   every byte landed, engine.CommitPut verifies every chunk (on the progress thread: the
//   blob's bytes are hashed here) and PUT_RESULT final carries the key and indexed pages.
//   On any error, and when the peer fails, the put is aborted at once; pieces of an ended
//   PUT are dropped. CommitPut, AbortPut and the lease RPCs also stay on the control plane
//   (gRPC).
//
// Statuses in FETCH_DONE
//   OK; INVALID_ARGUMENT a header or range list that does not decode (wrong magic,
//   version, type, size, more than kMaxFetchRanges ranges, an empty or overflowing range);
//   NOT_FOUND lease unknown or expired; PERMISSION_DENIED the blob is not under the lease;
//   OUT_OF_RANGE a range past the blob's end (each from NodeEngine::ReadSource, message
//   prefixed "range <i>: "); RESOURCE_EXHAUSTED more than options.max_fetches_per_peer
//   FETCH requests of one peer unfinished; ABORTED the client dropped a FETCH_DATA
//   payload; UNAVAILABLE the send failed (connection broken); CANCELLED the server stopped.
// Statuses in FETCH_DONE of a READ, before any transfer
//   those of NodeEngine::Read (NOT_FOUND, FAILED_PRECONDITION, OUT_OF_RANGE,
//   INVALID_ARGUMENT); INVALID_ARGUMENT a header, payload or namespace encoding that does
//   not decode, or more than kMaxReadChunks chunks; RESOURCE_EXHAUSTED and CANCELLED as for
//   FETCH. After the grant, those of FETCH.
// Statuses in PUT_DONE
//   OK; INVALID_ARGUMENT a header that does not decode; NOT_FOUND put unknown or expired;
//   FAILED_PRECONDITION the put's commit is in progress; OUT_OF_RANGE [offset, offset +
//   size) not inside the blob; UNAVAILABLE the payload did not arrive (sender died or the
//   connection broke mid-transfer); CANCELLED the server stopped.
// Statuses in PUT_RESULT final
//   OK (committed, or `exists`); those of NodeEngine::BeginPut (INVALID_ARGUMENT,
//   FAILED_PRECONDITION, RESOURCE_EXHAUSTED, UNAVAILABLE draining); INVALID_ARGUMENT a
//   header, payload or namespace that does not decode, a request_id in use on the
//   connection; RESOURCE_EXHAUSTED more than max_puts_per_peer PUTs unfinished, metadata
//   past max_put_metadata_bytes, more than 64 pieces before the begin; OUT_OF_RANGE a piece
//   outside the blob; DATA_LOSS a chunk checksum mismatch; UNAVAILABLE a piece did not
//   arrive; CANCELLED the server stopped.
// A malformed header's request_id is read from bytes 8..15 when the header has them (every
// client->node header keeps it there), else 0.
//
// Threading
//   Every handler, completion and engine call runs on the messenger's one progress thread,
//   so requests are processed one at a time without locks of the data plane's own. This
//   relies on the engine calls made here (ReadSource, PutTarget, PutReceived, HeldSpan
//   release) being quick: each takes the engine lock briefly and never touches bulk bytes.
//   A control-plane call holding the engine lock for long (BeginPut with a long parent
//   chain, Delete, Pin walk prefix tokens under it) delays the data plane by as much.
//   Public methods are thread-safe. Stop (and the destructor) must not be called from the
//   progress thread (no data-plane callback calls them).
//
// Failures and lifetime
//   A peer that dies mid-transfer fails its outstanding sends and receives (UNAVAILABLE, the
//   messenger's PEER error mode); their HeldSpans are released as they complete, its queued
//   FETCH requests are dropped, and its lease expires by itself. Stop destroys the messenger:
//   outstanding transfers complete CANCELLED and every HeldSpan is released before Stop
//   returns. REQUIRES: the engine outlives the DataPlaneServer (or its Stop).
//
// Errors of Start: INVALID_ARGUMENT a bad listen address, a zero per-peer limit, or an
// unknown transport name; UNAVAILABLE the address is in use, not local, or no transport is
// usable; RESOURCE_EXHAUSTED the arena could not be registered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
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

#include "strata/base/latency_histogram.h"
#include "strata/radix/blob_key.h"
#include "strata/store/core/access_scope.h"
#include "strata/store/core/data_plane_stats.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/transport/memory_region.h"
#include "strata/store/transport/messenger.h"
#include "strata/store/transport/wire.h"

namespace strata::store::dataplane {

struct DataPlaneOptions {
  // "host:port" to listen on; port 0 picks an ephemeral port.
  std::string listen_address = "127.0.0.1:7401";
  // UCX_TLS syntax (e.g. "tcp", "tcp,shm,cma"); empty: the UCX_TLS environment variable.
  // Connections are always the messenger's own TCP streams; a list allowing shared memory
  // (or none) also lets same-host clients use shm + CMA (see messenger.h).
  std::string transports;
  // Client connections kept at once; more are closed as soon as they are accepted.
  size_t max_connections = 1024;
  // A connection that has not completed the handshake within this is closed.
  absl::Duration handshake_timeout = absl::Seconds(10);
  // A transfer (a FETCH_DATA send until the client acknowledged it, a PUT_DATA payload
  // until it landed) that takes longer fails its client's connection (DEADLINE_EXCEEDED):
  // its HeldSpans are released, so a stopped client holds no bytes longer than this.
  absl::Duration transfer_timeout = absl::Seconds(30);
  // FETCH_DATA sends in flight per peer (each holds one range's bytes). REQUIRES: > 0.
  uint32_t max_sends_per_peer = 8;
  // FETCH requests of one peer accepted and not yet finished; more are refused with
  // RESOURCE_EXHAUSTED (each holds its range list: at most 64 KiB). REQUIRES: > 0.
  uint32_t max_fetches_per_peer = 256;
  // PUT requests (puts in one round trip) of one peer begun and not yet finished; more are
  // refused with RESOURCE_EXHAUSTED. REQUIRES: > 0.
  uint32_t max_puts_per_peer = 256;
  // Bytes of PUT metadata (namespace, tokens, checksums: up to ~16 MiB a PUT) being
  // received across all peers before their puts begin; a PUT past it is RESOURCE_EXHAUSTED.
  // Once begun, a put's metadata counts against the engine's max_pending_metadata_bytes.
  uint64_t max_put_metadata_bytes = uint64_t{64} << 20;
  // Checks each connection's credential before anything it sent is acted on (messenger.h,
  // "Authentication"); null admits every connection. The node verifies the credentials that
  // Store.OpenDataPlane issued (store/auth/data_plane_credential.h).
  transport::PeerAuthenticator authenticate;
  // The namespaces a connection may use, from the identity `authenticate` gave it (its
  // tenant); null: every namespace. READ, PUT, FETCH and PUT_DATA outside it answer as the
  // engine does for a caller outside its scope (core::AccessScope).
  std::function<core::AccessScope(std::string_view identity)> scope_of;
  // Progress-thread polling after the last event (messenger.h); zero sleeps at once.
  absl::Duration busy_poll = absl::ZeroDuration();
  std::string name = "strata-dataplane";
};

// What Stats() reports (a plain value of store/core, so that store/http needs only core).
using DataPlaneStats = core::DataPlaneStats;

namespace internal {
// Which histogram a request's FETCH_DONE / PUT_DONE is timed into, and when it arrived.
struct DoneTiming {
  base::LatencyHistogram* histogram = nullptr;  // null: not timed
  std::chrono::steady_clock::time_point received{};
  // A READ's FETCH_DONE: the read path counts its own failures (read_failures), so SendDone
  // does not count it as a FETCH failure.
  bool read = false;
};
}  // namespace internal

class DataPlaneServer {
 public:
  // Starts serving `engine` (borrowed; must outlive this object).
  static absl::StatusOr<std::unique_ptr<DataPlaneServer>> Start(core::NodeEngine* engine,
                                                                DataPlaneOptions options);
  // Stop().
  ~DataPlaneServer();
  DataPlaneServer(const DataPlaneServer&) = delete;
  DataPlaneServer& operator=(const DataPlaneServer&) = delete;

  // "host:port" the data plane listens on (the bound port for port 0), as clients dial it.
  const std::string& address() const { return address_; }
  uint16_t port() const { return port_; }
  DataPlaneStats stats() const;
  // What the messenger counted (messages and bytes on the wire, peers), for diagnostics.
  transport::MessengerStats messenger_stats() const;

  // Waits until no request is in flight (every received FETCH / PUT_DATA has had its
  // FETCH_DONE / PUT_DONE sent and completed) or `timeout` passes: DEADLINE_EXCEEDED then.
  // New requests may arrive at any time; this is a point-in-time answer.
  absl::Status WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(idle_mu_);

  // Stops listening and serving: the messenger is destroyed, outstanding transfers end
  // (CANCELLED), every HeldSpan is released. Idempotent. REQUIRES: not on the progress
  // thread.
  void Stop() ABSL_LOCKS_EXCLUDED(stop_mu_);

 private:
  using DoneTiming = internal::DoneTiming;
  // One FETCH being served. Progress thread only.
  struct FetchRequest {
    uint64_t request_id = 0;
    uint64_t lease_id = 0;
    // The blob of each range; one entry: every range's (a FETCH names one blob).
    std::vector<radix::BlobKey> blobs;
    std::vector<transport::wire::ByteRange> ranges;
    // The FETCH_DATA index of each range; empty: its position (a READ sends its items in
    // the order it was asked for, each under its item number).
    std::vector<uint32_t> indices;
    // How many items each range carries (a READ that allowed merging); empty: one each.
    std::vector<uint32_t> counts;
    // A READ's: the lease this request took, released when it finishes.
    bool owns_lease = false;
    // When the FETCH / READ arrived, and the histogram its FETCH_DONE is timed into.
    DoneTiming timing;
    uint32_t next = 0;       // the next range to start
    uint32_t in_flight = 0;  // its FETCH_DATA sends not yet completed
    absl::Status status;     // the first error; no range starts once set
    bool Finished() const { return in_flight == 0 && (!status.ok() || next == ranges.size()); }
  };
  // The unfinished FETCH requests of one peer. Exists only while it has some (or sends in
  // flight). Progress thread only.
  struct PeerFetches {
    transport::PeerId peer = transport::PeerId::kNone;
    std::deque<std::unique_ptr<FetchRequest>> requests;  // arrival order
    uint32_t sends_in_flight = 0;
    bool failed = false;   // the peer died: send nothing more, answer nothing
    bool pumping = false;  // Pump is on the stack (a send completed inside it)
    bool pump_again = false;
  };
  struct Counters {
    std::atomic<uint64_t> fetch_requests{0}, fetch_failures{0}, ranges_sent{0}, bytes_out{0};
    std::atomic<uint64_t> read_requests{0}, read_failures{0};
    std::atomic<uint64_t> put_requests{0}, put_failures{0}, bytes_in{0}, malformed{0};
    std::atomic<uint64_t> replies_failed{0}, peers_connected{0}, peers_failed{0};
    std::atomic<uint64_t> sends_in_flight{0};
    base::LatencyHistogram fetch_latency, read_latency, put_latency;
  };

  explicit DataPlaneServer(core::NodeEngine* engine, DataPlaneOptions options);

  // ---- peers and replies (data_plane_server.cc)
  void OnPeerFailed(transport::PeerId peer, const absl::Status& status);
  // Sends FETCH_DONE / PUT_DONE and ends the request (EndRequest when the send completes).
  // `timing`: the request is timed into its histogram when the DONE send completes.
  void SendDone(transport::PeerId peer, transport::wire::MessageType type, uint64_t request_id,
                absl::Status status, DoneTiming timing = {});
  void BeginRequest() ABSL_LOCKS_EXCLUDED(idle_mu_);
  void EndRequest() ABSL_LOCKS_EXCLUDED(idle_mu_);
  // The request_id of a client->node header that did not decode: bytes 8..15 when it has
  // them (FETCH and PUT_DATA keep it there), else 0.
  static uint64_t RequestIdOf(absl::Span<const uint8_t> header);

  // ---- FETCH (data_plane_fetch.cc)
  // The scope of `peer`: All() without options_.scope_of; none at all for a peer not
  // (or no longer) connected. Progress thread only.
  const core::AccessScope& ScopeOf(transport::PeerId peer) const;
  void OnFetch(transport::PeerId from, absl::Span<const uint8_t> header,
               transport::IncomingData data);
  // Queues a decoded FETCH whose range list is `payload`, or answers its error.
  void StartFetch(transport::PeerId from, const transport::wire::FetchHeader& header,
                  absl::Span<const uint8_t> payload, DoneTiming timing);
  // Starts range sends up to the per-peer limit and finishes finished requests; erases
  // the peer's entry when it has nothing left. Re-entrant: a call made while another is on
  // the stack (a send that completed at once) makes the outer one loop again.
  void Pump(std::shared_ptr<PeerFetches> fetches);
  void StartRangeSend(const std::shared_ptr<PeerFetches>& fetches, FetchRequest& request);
  void OnRangeSent(const std::shared_ptr<PeerFetches>& fetches, FetchRequest& request,
                   uint64_t bytes, absl::Status status);

  // The peer's request queue with room for one more request, or null after answering
  // `request_id` RESOURCE_EXHAUSTED (max_fetches_per_peer unfinished).
  std::shared_ptr<PeerFetches> FetchesWithRoom(transport::PeerId from, uint64_t request_id);

  // ---- READ (data_plane_read.cc)
  void OnRead(transport::PeerId from, absl::Span<const uint8_t> header,
              transport::IncomingData data);
  // Takes the lease, sends READ_GRANT and queues the transfers, or answers the error.
  void StartRead(transport::PeerId from, const transport::wire::ReadHeader& header,
                 absl::Span<const uint8_t> payload, DoneTiming timing);

  // ---- PUT_DATA (data_plane_put.cc)
  void OnPutData(transport::PeerId from, absl::Span<const uint8_t> header,
                 transport::IncomingData data);

  // ---- PUT: a put in one round trip (data_plane_put.cc). Progress thread only.
  struct TripPut {
    transport::PeerId peer = transport::PeerId::kNone;
    uint64_t request_id = 0;
    uint64_t bytes = 0;     // the blob's
    uint64_t metadata = 0;  // bytes counted in put_metadata_receiving_ until the begin
    uint64_t put_id = 0;    // the engine's, once begun
    radix::BlobKey key;
    uint64_t landed = 0;     // payload bytes received into the put (pieces may overlap)
    uint32_t receiving = 0;  // pieces being received
    bool finished = false;   // PUT_RESULT final sent: later pieces are dropped
    // Pieces that arrived before the put began (the PUT's own payload still landing).
    std::vector<std::pair<transport::wire::PutDataHeader, transport::IncomingData>> waiting;
    DoneTiming timing;
  };
  using TripKey = std::pair<transport::PeerId, uint64_t>;
  void OnPut(transport::PeerId from, absl::Span<const uint8_t> header,
             transport::IncomingData data);
  // Begins the put the PUT payload describes; answers PUT_RESULT granted (then serves the
  // waiting pieces) or final.
  void BeginTrip(const std::shared_ptr<TripPut>& trip, const transport::wire::PutHeader& header,
                 absl::Span<const uint8_t> payload);
  // A PUT_DATA piece of a PUT (kPutDataOfPut).
  void OnTripData(transport::PeerId from, const transport::wire::PutDataHeader& header,
                  transport::IncomingData data);
  void ReceivePiece(const std::shared_ptr<TripPut>& trip,
                    const transport::wire::PutDataHeader& header, transport::IncomingData data);
  // Commits the put once every byte landed and no piece is being received.
  void MaybeCommit(const std::shared_ptr<TripPut>& trip);
  // Marks the trip finished and forgets it: its metadata budget, its waiting pieces (dropped),
  // its count on the peer; aborts its begun put when `abort`. Once per trip.
  void EndTrip(const std::shared_ptr<TripPut>& trip, bool abort);
  // Ends the PUT: aborts a begun put on error, drops waiting pieces, sends PUT_RESULT final
  // (`key`, `exists`, `indexed_pages`), forgets the trip. Once per trip.
  void FinishTrip(const std::shared_ptr<TripPut>& trip, absl::Status status, bool exists = false,
                  uint32_t indexed_pages = 0);
  // A PUT that failed before it had a trip: PUT_RESULT final with `status`, EndRequest.
  void RefusePut(transport::PeerId peer, uint64_t request_id, absl::Status status,
                 DoneTiming timing);
  void SendPutResult(transport::PeerId peer, const transport::wire::PutResultHeader& result,
                     DoneTiming timing);
  // Forgets the peer's PUTs (it failed): aborts their puts, answers nothing.
  void ForgetTrips(transport::PeerId peer);

  core::NodeEngine* const engine_;
  const DataPlaneOptions options_;
  std::string address_;
  uint16_t port_ = 0;
  Counters counters_;
  // Set by Stop before the messenger goes: nothing new starts.
  std::atomic<bool> stopping_{false};

  mutable absl::Mutex idle_mu_;
  uint64_t requests_in_flight_ ABSL_GUARDED_BY(idle_mu_) = 0;

  // Progress thread only (Start fills nothing in).
  absl::flat_hash_map<transport::PeerId, std::shared_ptr<PeerFetches>> fetches_;
  // Each connected peer's scope, when options_.scope_of is set (progress thread only).
  absl::flat_hash_map<transport::PeerId, core::AccessScope> scopes_;
  absl::flat_hash_map<TripKey, std::shared_ptr<TripPut>> trips_;
  absl::flat_hash_map<transport::PeerId, uint32_t> trips_per_peer_;
  uint64_t put_metadata_receiving_ = 0;

  mutable absl::Mutex stop_mu_;
  // The arena's registration; kept past the messenger (a region may outlive it).
  std::unique_ptr<transport::MemoryRegion> arena_region_;
  // Declared last: destroyed first. Reset by Stop (under stop_mu_; read without it only on
  // the progress thread, which exists only while it is set).
  std::unique_ptr<transport::Messenger> messenger_;
};

}  // namespace strata::store::dataplane
