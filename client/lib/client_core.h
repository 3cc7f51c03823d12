// ClientCore: what a strata::Client is made of (client.h is its public face; every Client
// method forwards here). Owns, in construction order:
//
//   control    the gRPC channel, stubs and retry loop (control_channel.h)
//   data       the UCX data plane (data_plane.h), created on first use
//   registry   the caller's registered memory (RangeMap of transport regions)
//   executor   the threads of the async forms (async_executor.h)
//
// and destroys them in reverse: async calls finish first, then the data plane shuts down
// (every transfer completes), then background Releases are waited for.
//
// The read path lives in read_path.cc, the write path in write_path.cc, Prefetch and the
// rebuild calls in rebuild_calls.cc, the rest in client_core.cc. Errors and thread safety: as
// strata/client.h says for each call.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
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

#include "client/lib/async_executor.h"
#include "client/lib/control_channel.h"
#include "client/lib/data_plane.h"
#include "client/lib/device_context.h"
#include "client/lib/range_map.h"
#include "client/lib/read_plan.h"
#include "client/lib/same_host_channel.h"
#include "strata/client.h"

namespace strata::client_internal {

class ClientCore {
 public:
  ClientCore(ClientOptions options, const ChannelTls& tls);
  ~ClientCore();

  const ClientOptions& options() const { return options_; }
  // The call's absolute deadline (options.h).
  absl::Time Deadline(const CallOptions& call) const;

  // ---- client_core.cc
  // With `start`, a segment's Match (Client::Match with a SegmentStart).
  absl::StatusOr<MatchResult> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    LookupPhase phase, absl::Time deadline,
                                    const SegmentStart* start = nullptr);
  absl::StatusOr<std::vector<MatchResult>> MatchSegments(const Namespace& ns,
                                                         absl::Span<const SegmentQuery> queries,
                                                         LookupPhase phase,
                                                         bool stop_at_first_short,
                                                         absl::Time deadline);
  absl::StatusOr<DeleteResult> Delete(const BlobKey& key, absl::Time deadline);
  absl::Status Pin(const BlobKey& key, bool pin, absl::Time deadline);
  absl::StatusOr<BlobInfo> Stat(const BlobKey& key, bool include_tokens, absl::Time deadline);
  absl::StatusOr<ListResult> List(const ListOptions& list, absl::Time deadline);
  absl::StatusOr<NodeTiers> Tiers(absl::Time deadline);
  absl::StatusOr<EvictResult> Evict(Tier tier, uint64_t bytes, absl::Time deadline);
  absl::Status Drain(absl::Duration timeout, absl::Time deadline);
  absl::StatusOr<LeaveResult> Leave(absl::Duration timeout, uint64_t hand_over_bytes,
                                    absl::Time deadline);
  absl::StatusOr<HealthInfo> Health(absl::Time deadline);

  // ---- rebuild_calls.cc
  absl::StatusOr<PrefetchResult> Prefetch(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          absl::Time deadline);
  absl::StatusOr<RebuildRequestResult> RequestRebuild(const BlobKey& key, bool with_prefix,
                                                      absl::Time deadline);
  absl::StatusOr<std::vector<RebuildTask>> PullRebuildTasks(uint32_t max_tasks, absl::Duration wait,
                                                            absl::Time deadline);

  absl::StatusOr<std::string> DescribeDataPlane(absl::Time deadline);
  absl::Status RegisterMemory(const MemoryDescriptor& memory) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status UnregisterMemory(const void* ptr) ABSL_LOCKS_EXCLUDED(mu_);
  ClientStats stats() const;
  AsyncExecutor& executor() { return *executor_; }

  // ---- read_path.cc
  absl::Status Read(const Namespace& ns, absl::Span<const ReadRange> ranges,
                    absl::Span<const MemoryDescriptor> destinations, absl::Time deadline);
  absl::Status ReadPrefix(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                          const MemoryDescriptor& destination,
                          const Client::LayerCallback* on_layer, absl::Time deadline);
  absl::Status ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                        uint32_t total_pages, const MemoryDescriptor& destination,
                        absl::Time deadline, const Client::LayerCallback* on_layer = nullptr);
  std::vector<absl::Status> ReadBatch(const Namespace& ns, absl::Span<const ReadItem> items,
                                      absl::Time deadline);

  // ---- write_path.cc
  // With `start` (and no parent), the first blob of a segment (Client::Write).
  absl::StatusOr<WriteResult> Write(const Namespace& ns, const std::optional<Parent>& parent,
                                    absl::Span<const TokenId> tokens,
                                    const MemoryDescriptor& source, absl::Time deadline,
                                    const SegmentStart* start = nullptr);
  std::vector<absl::StatusOr<WriteResult>> WriteBatch(const Namespace& ns,
                                                      absl::Span<const WriteItem> items,
                                                      absl::Time deadline);
  // Client::WriteText: the blob's checks and checksums as Write, then one BeginPut with
  // text_only.
  absl::StatusOr<WriteResult> WriteText(const Namespace& ns, const std::optional<Parent>& parent,
                                        absl::Span<const TokenId> tokens,
                                        const MemoryDescriptor& source, absl::Time deadline,
                                        const SegmentStart* start = nullptr);
  // With the chunk checksums given (a copy of another node's TEXT blob).
  absl::StatusOr<WriteResult> WriteText(const Namespace& ns, const std::optional<Parent>& parent,
                                        absl::Span<const TokenId> tokens,
                                        absl::Span<const uint64_t> chunk_checksums,
                                        absl::Time deadline, const SegmentStart* start = nullptr);

 private:
  // The data plane, created on first use. UNAVAILABLE / INVALID_ARGUMENT as DataPlane::Create.
  absl::StatusOr<DataPlane*> data_plane() ABSL_LOCKS_EXCLUDED(mu_);
  // The connection to the node's data plane. Its address comes from Store.OpenDataPlane
  // (once; cached), and so does the credential a new connection presents; a connection that
  // cannot be made makes the next call ask again (the node may have restarted elsewhere),
  // within `deadline`. Errors of OpenDataPlane (UNAUTHENTICATED without a tenant's token)
  // and DataPlane::Connect.
  absl::StatusOr<DataPlane::PeerId> ConnectDataPlane(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // Store.OpenDataPlane: where the data plane listens and a credential for it.
  struct DataPlaneGrant {
    std::string address;
    std::string credential;        // empty from an open node
    std::string same_host_socket;  // empty: the node offers no same-host channel
  };
  absl::StatusOr<DataPlaneGrant> OpenDataPlane(absl::Time deadline);
  // The registration holding [p, p + n), or null.
  std::shared_ptr<const DataPlane::MemoryRegion> RegionFor(const void* p, size_t n)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Where a read's destinations are device memory the transport writes into directly
  // (ClientOptions::device_direct): the device verifies what landed.
  struct DirectTarget {
    gpu::Device* device = nullptr;
    gpu::Stream* stream = nullptr;
  };
  // One data-plane READ over `ranges` (the node leases, grants and sends in one round
  // trip); calls *on_layer (if given) in layer order as layers of every range land.
  // read_path.cc.
  // *delivered: a layer was handed to *on_layer (the read cannot be repeated).
  absl::Status ReadOnce(const Namespace& ns, absl::Span<const PlannedRange> ranges,
                        const Client::LayerCallback* on_layer, absl::Time deadline, bool* delivered,
                        const DirectTarget* direct = nullptr);
  // The same in two steps (read_path.cc): StartRun sends the READ, FinishRun lands,
  // verifies and hands on its layers; destroying a run that has not finished abandons it.
  // ReadPlanned keeps up to ClientOptions::reads_in_flight runs started.
  struct ReadInFlight;
  absl::StatusOr<std::unique_ptr<ReadInFlight>> StartRun(const Namespace& ns,
                                                         absl::Span<const PlannedRange> ranges,
                                                         const Client::LayerCallback* on_layer,
                                                         absl::Time deadline,
                                                         const DirectTarget* direct = nullptr);
  absl::Status FinishRun(ReadInFlight& run, const Client::LayerCallback* on_layer,
                         absl::Time deadline, bool* delivered);
  // A read of host memory (or, with `direct`, of device memory the transport writes into).
  absl::Status ReadPlanned(const Namespace& ns, std::vector<PlannedRange> plan,
                           const Client::LayerCallback* on_layer, absl::Time deadline,
                           const DirectTarget* direct = nullptr);

  // The node's same-host channel when options.same_host, the node offers one and this
  // process reaches it (opened on first use; after a failure tried again at most every
  // 30 s, 1 s after a channel that worked broke); null: use UCX.
  std::shared_ptr<SameHostChannel> SameHost(absl::Time deadline) ABSL_LOCKS_EXCLUDED(same_host_mu_);
  // Forgets `channel` after it failed UNAVAILABLE (the node restarted or stopped).
  void DropSameHost(const std::shared_ptr<SameHostChannel>& channel)
      ABSL_LOCKS_EXCLUDED(same_host_mu_);
  // ReadPlanned's runs through the same-host channel (read_path.cc); with `device`, DMA'd
  // into device memory.
  absl::Status ReadSameHost(SameHostChannel& channel, const Namespace& ns,
                            absl::Span<const PlannedRange> plan,
                            absl::Span<const std::pair<size_t, size_t>> runs,
                            const Client::LayerCallback* on_layer, absl::Time deadline,
                            bool* delivered, const SameHostChannel::DeviceTarget* device = nullptr);

  // ---- device memory (device_path.cc)
  // The context of device `ordinal`, opened on first use (ClientOptions::open_device).
  absl::StatusOr<DeviceContext*> DeviceFor(int ordinal) ABSL_LOCKS_EXCLUDED(devices_mu_);
  // A read whose destinations are device memory: straight from the node's arena on its
  // host (DMA), else staged through the context's pinned pool.
  absl::Status ReadToDevice(const Namespace& ns, std::vector<PlannedRange> plan,
                            const Client::LayerCallback* on_layer, absl::Time deadline);
  absl::Status ReadStaged(DeviceContext& context, const Namespace& ns,
                          std::vector<PlannedRange> plan, const Client::LayerCallback* on_layer,
                          absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(context.mu());
  // Write (or WriteText) from device memory: the blob staged to the pinned pool, then
  // `write` from there (the pool held meanwhile).
  absl::StatusOr<WriteResult> WriteFromDevice(
      const MemoryDescriptor& source,
      absl::FunctionRef<absl::StatusOr<WriteResult>(const MemoryDescriptor& staged)> write);
  // A write from device memory without the pinned pool: the chunk checksums computed by the
  // device; on the node's host the device copies the blob straight into the same-host
  // staging file (path c), else (ClientOptions::device_direct) the transport sends it from
  // the device memory (path a). UNIMPLEMENTED where neither can (the caller stages).
  absl::StatusOr<WriteResult> WriteDirectFromDevice(const Namespace& ns,
                                                    const std::optional<Parent>& parent,
                                                    absl::Span<const TokenId> tokens,
                                                    const MemoryDescriptor& source,
                                                    absl::Time deadline, const SegmentStart* start);
  // Write's second half: the PUT of a checked blob (same-host channel when allowed and
  // reachable, else UCX).
  absl::StatusOr<WriteResult> PutChecked(const Namespace& ns, const std::optional<Parent>& parent,
                                         absl::Span<const TokenId> tokens,
                                         absl::Span<const std::byte> blob,
                                         const std::vector<uint64_t>& checksums,
                                         absl::Time deadline, const SegmentStart* start,
                                         bool same_host,
                                         const SameHostChannel::DeviceTarget* device = nullptr);

  // One PUT on the data plane (write_path.cc): sends it with the blob's bytes and waits for
  // its final PUT_RESULT.
  absl::StatusOr<DataPlane::PutOutcome> PutBlob(const store::transport::wire::PutHeader& header,
                                                const std::vector<uint8_t>& metadata,
                                                absl::Span<const uint8_t> bytes,
                                                absl::Time deadline);

  const ClientOptions options_;
  ControlChannel control_;

  mutable absl::Mutex mu_;
  std::unique_ptr<DataPlane> data_plane_ ABSL_GUARDED_BY(mu_);
  std::string data_plane_address_ ABSL_GUARDED_BY(mu_);  // empty: ask OpenDataPlane
  RangeMap<std::shared_ptr<const DataPlane::MemoryRegion>> registry_ ABSL_GUARDED_BY(mu_);

  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> writes_committed_{0};
  std::atomic<uint64_t> writes_existing_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> checksum_failures_{0};
  std::atomic<uint64_t> device_reads_staged_{0};
  std::atomic<uint64_t> device_reads_direct_{0};
  std::atomic<uint64_t> device_bytes_from_hbm_{0};
  std::atomic<uint64_t> device_reads_received_{0};
  std::atomic<uint64_t> device_writes_{0};
  std::atomic<uint64_t> device_writes_direct_{0};
  std::atomic<uint64_t> same_host_reads_{0};
  std::atomic<uint64_t> same_host_writes_{0};

  // Before the same-host channel: a channel unregisters its arena from these devices when
  // it goes, so they must outlive it.
  absl::Mutex devices_mu_;
  absl::flat_hash_map<int, std::unique_ptr<DeviceContext>> devices_ ABSL_GUARDED_BY(devices_mu_);

  absl::Mutex same_host_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::shared_ptr<SameHostChannel> same_host_ ABSL_GUARDED_BY(same_host_mu_);
  absl::Time same_host_retry_ ABSL_GUARDED_BY(same_host_mu_) = absl::InfinitePast();
  bool same_host_logged_ ABSL_GUARDED_BY(same_host_mu_) = false;
  bool same_host_opening_ ABSL_GUARDED_BY(same_host_mu_) = false;

  // Last: destroyed first, so async calls finish while everything they use exists.
  std::unique_ptr<AsyncExecutor> executor_;
};

}  // namespace strata::client_internal
