// strata::Client — libstrata, the C++ client of one strata node.
//
// A Client talks to a node over two planes (docs/api.md):
//   control  gRPC (strata.v1 Store and Admin) to ClientOptions::node: Match, BeginPut,
//            CommitPut, Read leases, Delete, Pin, Stat, List, Prefetch, RequestRebuild,
//            PullRebuildTasks, Tiers, Evict, Drain, Health;
//   data     UCX active messages to the node's data-plane listener, which the node names in
//            its Health and BeginPut answers. The UCX side (one worker with its progress
//            thread) is created on the first data-plane use and connects once per node
//            address; a failed connection is dropped and made again by the next call.
// Bytes never bounce through the library: a read lands straight in the caller's
// destination (UCX rendezvous receive into it), a write leaves straight from the caller's
// source.
//
// Reading a cached prefix:
//
//   auto m = client->Match(ns, tokens);                     // longest cached prefix
//   std::vector<std::byte> kv(PagesBytes(ns.layout(), m->matched_pages));
//   client->Read(ns, m->segments, m->matched_pages, MemoryDescriptor::Host(kv.data(), kv.size()));
//
// `kv` then holds the KV of sequence pages [0, matched_pages), laid out as radix::BlobLayout
// of that many pages (types.h): layer-major, layer l page p at (l * pages + p) *
// BytesPerLayerPage(). Every chunk (one layer of one page) is checked against the checksum
// the node recorded at the put (XXH3-64, docs/api.md "Checksums") as it lands; a mismatch is
// DATA_LOSS, and no call ever reports OK over bytes that did not verify. A blob evicted or
// deleted between Match and Read is NOT_FOUND (a miss: Match again), never garbage.
//
// Tiers and rebuild from text: a node may keep a blob's tokens after dropping its KV bytes
// (tier kText). Match reports such pages as kText segments carrying their tokens; they
// count in matched_pages but cannot be read: read MatchResult::ReadablePages() pages (the
// prefix before the first kText segment). Read never asks the node for a kText segment
// (NOT_FOUND before anything is sent). To get the bytes back, recompute them (the segment's
// tokens) or RequestRebuild: the node queues the blob for rebuild workers, which pull tasks
// (PullRebuildTasks), compute the KV and fill the blob with an ordinary Write
// (client/tools/rebuild_worker.h). Prefetch does both kinds of preparation ahead of need:
// SSD-only blobs are promoted into DRAM, kText blobs queued for rebuild.
//
// A read is one data-plane round trip (READ, docs/api.md): the node leases the blobs for the
// length of the transfer (they cannot be freed under it), sends the chunk checksums and then
// the bytes, and releases the lease itself; no lease RPC, nothing to release.
//
// Writing a blob (two-phase put): Write computes the blob's chunk checksums, BeginPut
// (nothing is sent if the key exists), sends the bytes as PUT_DATA messages, CommitPut; on
// any failure after BeginPut it sends AbortPut, so nothing half-written stays reserved.
//
// Deadlines and retries: every call has a deadline (options.h). UNAVAILABLE (node down,
// connection lost) is retried with backoff within the deadline for the calls that are
// safe to repeat: Match, Read (before any layer went to a ReadLayers callback), Stat, List,
// Health, Tiers, Pin, Unpin, Drain, Prefetch, RequestRebuild, PullRebuildTasks (tasks of a
// lost answer go back to the queue at their deadline), CommitPut, and BeginPut (a retried BeginPut
// that answers `exists` is checked with Stat, because the key may be a pending put of the attempt
// whose answer was lost: then UNAVAILABLE is returned, docs/api.md "Retry notes"). Delete, Evict
// and a write's data are never retried. DEADLINE_EXCEEDED when the deadline passes; a call never
// returns before the transport has let go of the caller's memory.
//
// Errors common to every call: DEADLINE_EXCEEDED, UNAVAILABLE (node unreachable after the
// retries, data-plane connection lost mid-transfer, node draining for writes), CANCELLED
// (the client is being destroyed), INVALID_ARGUMENT (malformed request: bad namespace or
// tokens, a limit of strata/proto/limits.h). Per call below. The codes mean what
// base/include/strata/base/status_macros.h and docs/api.md say.
//
// Thread safety: every method may be called from any number of threads at once. The
// Client must outlive the calls in flight; its destructor waits for async calls and
// background releases to finish (REQUIRES: not destroyed from an async callback).
//
// On a cluster (ClientOptions::cluster or cluster_nodes): Connect follows the cluster's
// members (strata/cluster_client.h), and Match, Read, ReadLayers, ReadInto, Write, Stat,
// the batches and the async forms work on it: a Match asks every owner of the sequence's
// segments at once, a Read fans out to the nodes holding the segments, a Write goes segment
// by segment to the owners (with its token text to R nodes). The client remembers the node
// and token sequence of the blobs its Matches and Writes met (a bounded table), so a Write
// continuing a Parent from a Match needs no extra round trip; other Parents' earlier tokens,
// and the nodes of blobs it never met, are asked of the nodes (a Stat at each). A cluster
// Write takes host memory. A node's own calls — the SegmentStart forms, MatchSegments,
// ReadIntoLayers, WriteText, Prefetch, the rebuild and admin calls, Health, RegisterMemory —
// answer UNIMPLEMENTED there: call them on cluster()->Node(id).
//
// Memory: MemoryDescriptors are borrowed for the duration of the call (until the callback
// of an async form runs). Host, pinned host or device memory (kDevice: through the
// gpu::Device ClientOptions::open_device gives; types.h, docs/design/device-memory.md): a
// call's destinations are of one kind (and one device), or INVALID_ARGUMENT. Device calls
// to one device take turns (they share its pinned staging pool); a device that cannot be
// opened answers its error (UNAVAILABLE without a driver or GPU).
// RegisterMemory lets a caller that reuses large buffers register them once with the
// transport (useful on RDMA transports; a bookkeeping no-op over TCP, shared memory and
// CMA); unregistered memory goes through UCX's own registration cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/options.h"
#include "strata/types.h"

namespace strata {

namespace client_internal {
class ClientCore;
class ClusterBackend;
}  // namespace client_internal

class ClusterClient;

// One read of a batch: `range`'s pages of every layer into `destination`
// (PagesBytes(layout, range.num_pages) bytes, layer-major).
struct ReadItem {
  ReadRange range;
  MemoryDescriptor destination;
};

// One write of a batch. The blob continues `parent`, or the blob written by the earlier item
// `parent_item` of the same batch (from the end of that blob), or (neither) starts at
// sequence page 0. Setting both is INVALID_ARGUMENT for this item.
struct WriteItem {
  std::optional<Parent> parent;
  std::optional<size_t> parent_item;
  absl::Span<const TokenId> tokens;
  MemoryDescriptor source;
};

// Counters since Connect (a snapshot; monotonic).
struct ClientStats {
  uint64_t rpcs = 0;                   // gRPC attempts
  uint64_t rpc_retries = 0;            // attempts after an UNAVAILABLE answer
  uint64_t reads = 0;                  // data-plane READs sent
  uint64_t bytes_read = 0;             // bytes landed and verified
  uint64_t writes_committed = 0;       // CommitPut OK
  uint64_t writes_existing = 0;        // BeginPut answered `exists`: nothing sent
  uint64_t bytes_written = 0;          // PUT_DATA payload bytes the node took
  uint64_t checksum_failures = 0;      // chunks that did not verify (DATA_LOSS)
  uint64_t device_reads_staged = 0;    // reads into device memory through the pinned pool
  uint64_t device_reads_direct = 0;    // ... DMA'd from the node's arena (same host)
  uint64_t device_reads_received = 0;  // ... received by the transport into device memory
                                       // and verified there (ClientOptions::device_direct)
  uint64_t device_bytes_from_hbm = 0;  // ... of those, bytes copied device to device from the
                                       // node's HBM tier (it shares it: same_host_share_hbm)
  uint64_t device_writes = 0;          // writes from device memory
  uint64_t device_writes_direct = 0;   // ... of those, sent by the transport straight from it
                                       // (ClientOptions::device_direct)
  uint64_t same_host_reads = 0;        // READs served by the same-host channel
  uint64_t same_host_writes = 0;       // PUTs through the same-host channel
};

class Client {
 public:
  // A layer landed: called on the calling thread, in layer order, once per layer, after
  // that layer's pages of every segment arrived and verified. A non-OK status stops the
  // read and is returned by ReadLayers.
  using LayerCallback = absl::FunctionRef<absl::Status(uint32_t layer)>;
  using StatusCallback = absl::AnyInvocable<void(absl::Status) &&>;
  using WriteCallback = absl::AnyInvocable<void(absl::StatusOr<WriteResult>) &&>;

  // A client of the node at options.node, or of the cluster options.cluster (or
  // cluster_nodes) names. INVALID_ARGUMENT when options.Validate() fails; with
  // wait_for_node, UNAVAILABLE / DEADLINE_EXCEEDED when the node does not answer Health in
  // time (a cluster: when no node serves within default_timeout); a cluster's etcd that
  // does not answer: UNAVAILABLE.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      ClientOptions options = ClientOptions::FromEnvironment());

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const ClientOptions& options() const;
  // The cluster this client works on (its members, each node's own client), or nullptr for a
  // client of one node.
  ClusterClient* cluster();

  // ---------------------------------------------------------------- prefix cache

  // Longest cached prefix of `tokens` (from sequence page 0; a trailing partial page is
  // ignored). NOT_FOUND: the node has never seen the namespace (a cold node, not a miss);
  // a known namespace with nothing cached is OK with matched_pages 0.
  absl::StatusOr<MatchResult> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    const CallOptions& call = {});
  // As above, telling the node the lookup's phase (types.h, LookupPhase): only its
  // statistics (Tiers().lookups) depend on it; the answer is the same. The form above sends
  // kUnspecified (the node infers the phase). INVALID_ARGUMENT a phase outside the enum.
  absl::StatusOr<MatchResult> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    LookupPhase phase, const CallOptions& call = {});
  // The longest cached prefix of a segment: `tokens` are the sequence's pages from
  // start.pages on, and the node searches the blobs written with the same SegmentStart (and
  // those continuing them). The answer counts pages from the query's first page:
  // seq_page_begin 0 is sequence page start.pages. INVALID_ARGUMENT start.pages 0.
  absl::StatusOr<MatchResult> Match(const Namespace& ns, const SegmentStart& start,
                                    absl::Span<const TokenId> tokens, LookupPhase phase,
                                    const CallOptions& call = {});
  // Several such lookups in one call (a cluster client asks each node for every segment it
  // owns at once), answered in order. stop_at_first_short: the node stops after the first
  // answer that does not cover all its query's whole pages, so fewer answers come back.
  // Errors as Match for any query (the call fails whole); INVALID_ARGUMENT no query, more
  // than 4096, or more than kMaxTokensPerRequest tokens in all.
  absl::StatusOr<std::vector<MatchResult>> MatchSegments(const Namespace& ns,
                                                         absl::Span<const SegmentQuery> queries,
                                                         LookupPhase phase,
                                                         bool stop_at_first_short,
                                                         const CallOptions& call = {});

  // Reads ranges[i] (its pages of every layer) into destinations[i], which must be exactly
  // PagesBytes(ns.layout(), ranges[i].num_pages) bytes, laid out as radix::BlobLayout of
  // that many pages. All ranges share one lease (several when they exceed one READ's
  // limits: those READs go ClientOptions::reads_in_flight at a time). Errors: INVALID_ARGUMENT
  // sizes differ, no ranges, num_pages 0, a descriptor (CheckMemoryDescriptor), host and
  // device memory mixed; NOT_FOUND a blob is no longer cached (a miss) or the lease expired
  // mid-read; OUT_OF_RANGE pages past a blob's end; FAILED_PRECONDITION the blob's layout differs
  // from ns's; DATA_LOSS a chunk did not verify. On error the destinations' contents are
  // unspecified.
  absl::Status Read(const Namespace& ns, absl::Span<const ReadRange> ranges,
                    absl::Span<const MemoryDescriptor> destinations, const CallOptions& call = {});

  // Reads sequence pages [0, pages) of a match (`segments` as Match returned them, covering
  // at least `pages` pages from page 0) into one destination of PagesBytes(layout, pages)
  // bytes, laid out as radix::BlobLayout of `pages` pages. `pages` 0 reads nothing.
  // Errors as above; INVALID_ARGUMENT when the segments do not cover [0, pages) in order;
  // NOT_FOUND, before anything is sent, when a kText segment lies inside [0, pages) (its
  // bytes are gone: read MatchResult::ReadablePages() pages).
  absl::Status Read(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call = {});

  // As the Read above, layer by layer: asks for the layers in order and calls `on_layer(l)`
  // on this thread as soon as layer l of every segment has landed and verified, while
  // later layers are still in flight (attention on layer l overlaps the transfer of l + 1).
  // Errors as Read, plus the first non-OK status on_layer returns. Into device memory the callback
  // runs while the call holds that device's staging pool: it must not call the Client with memory
  // of the same device (that call would wait for this one forever).
  absl::Status ReadLayers(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                          const MemoryDescriptor& destination, LayerCallback on_layer,
                          const CallOptions& call = {});

  // Reads parts of a sequence into their places in a larger destination: `segments` in page
  // order without overlap (gaps allowed; seq_page_begin counted from sequence page 0), the
  // last ending at or before total_pages, and `destination` is radix::BlobLayout of
  // total_pages pages (PagesBytes(layout, total_pages) bytes): the segment starting at page
  // s puts layer l at (l * total_pages + s) * BytesPerLayerPage. The other pages of the
  // destination are not touched, so several nodes can fill one destination at once (a
  // cluster's fan-out). Errors as Read; INVALID_ARGUMENT segments empty, out of order or
  // overlapping, or past total_pages.
  absl::Status ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                        uint32_t total_pages, const MemoryDescriptor& destination,
                        const CallOptions& call = {});
  // ReadInto with ReadLayers' callback: layer l once these segments' pages of it landed.
  absl::Status ReadIntoLayers(const Namespace& ns, absl::Span<const Segment> segments,
                              uint32_t total_pages, const MemoryDescriptor& destination,
                              LayerCallback on_layer, const CallOptions& call = {});

  // Writes one blob: `tokens` (whole pages, at least one) continuing `parent` (none: from
  // sequence page 0); `source` holds its KV, PagesBytes(layout, pages) bytes in
  // radix::BlobLayout. Returns the key and whether it already existed (then nothing was
  // sent). Errors: INVALID_ARGUMENT tokens empty or not whole pages, a bad descriptor, a
  // limit; RESOURCE_EXHAUSTED a device-memory source larger than device_staging_bytes (it
  // is staged whole); FAILED_PRECONDITION the parent is unknown, of
  // another namespace, or `parent.pages` is outside it; RESOURCE_EXHAUSTED the node's tier
  // is full; DATA_LOSS the node found a chunk that did not match its checksum (the source
  // changed during the write); UNAVAILABLE node draining, or a retried BeginPut found a
  // pending put it cannot tell from its own lost attempt.
  absl::StatusOr<WriteResult> Write(const Namespace& ns, const std::optional<Parent>& parent,
                                    absl::Span<const TokenId> tokens,
                                    const MemoryDescriptor& source, const CallOptions& call = {});
  // Writes the first blob of a segment: `tokens` are sequence pages [start.pages, ...) and
  // the node keeps them under the segment's start (see Match with a SegmentStart); the key
  // is the same h_b the whole sequence chains to. Blobs continuing it name it as their
  // Parent as usual. Errors as Write; INVALID_ARGUMENT start.pages 0.
  absl::StatusOr<WriteResult> Write(const Namespace& ns, const SegmentStart& start,
                                    absl::Span<const TokenId> tokens,
                                    const MemoryDescriptor& source, const CallOptions& call = {});

  // A TEXT replica of the blob Write(ns, parent or start, tokens, source) would write (a
  // cluster keeps token text on more than one node): the node indexes its tokens, size and
  // chunk checksums (computed here from `source`) as a TEXT blob — Match answers it as TEXT,
  // a rebuild or a Write of the same bytes refills it — and no KV bytes travel. `start`
  // set: the first blob of a segment (then no parent). WriteResult.existed when the node
  // has the key already (with bytes or as TEXT). Errors as Write.
  absl::StatusOr<WriteResult> WriteText(const Namespace& ns, const std::optional<Parent>& parent,
                                        const std::optional<SegmentStart>& start,
                                        absl::Span<const TokenId> tokens,
                                        const MemoryDescriptor& source,
                                        const CallOptions& call = {});
  // The same from the blob's chunk checksums (layer-major, num_layers * pages of them) instead
  // of its bytes: a copy of a TEXT blob another node holds. INVALID_ARGUMENT a wrong count.
  absl::StatusOr<WriteResult> WriteText(const Namespace& ns, const std::optional<Parent>& parent,
                                        const std::optional<SegmentStart>& start,
                                        absl::Span<const TokenId> tokens,
                                        absl::Span<const uint64_t> chunk_checksums,
                                        const CallOptions& call = {});

  // ---------------------------------------------------------------- rebuild from text

  // Matches `tokens` and has the node get the matched prefix ready ahead of need: SSD-only
  // blobs start moving into DRAM, kText blobs are queued for rebuild. Answers at once,
  // without waiting for either. Errors as Match; RESOURCE_EXHAUSTED the rebuild queue is
  // full.
  absl::StatusOr<PrefetchResult> Prefetch(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          const CallOptions& call = {});

  // Queues a rebuild of blob `key` if it is kText; with_prefix: also of every kText blob on
  // its prefix path (parents first). Idempotent. INVALID_ARGUMENT key all zero; NOT_FOUND
  // not in the index; RESOURCE_EXHAUSTED the rebuild queue is full.
  absl::StatusOr<RebuildRequestResult> RequestRebuild(const BlobKey& key, bool with_prefix,
                                                      const CallOptions& call = {});

  // For rebuild workers: up to `max_tasks` queued tasks (oldest first), waiting up to
  // `wait` (at most 60 s; also bounded by the call's deadline) for the first; empty when
  // none came. Each task is this worker's until its deadline: fill it with Write (types.h,
  // RebuildTask) or let it expire (it is queued again). INVALID_ARGUMENT max_tasks 0 or over
  // kMaxRebuildTasksPerPull (1024), wait negative or over 60 s. Without a deadline of its
  // own (CallOptions), the call's deadline is now + wait + the default timeout.
  absl::StatusOr<std::vector<RebuildTask>> PullRebuildTasks(uint32_t max_tasks, absl::Duration wait,
                                                            const CallOptions& call = {});

  // ---------------------------------------------------------------- batches

  // Reads every item, one status per item in order. The items share leases as Read does;
  // when that fails for a reason that may concern only some items (a miss, a range past a
  // blob's end) each item is read on its own, so one miss does not fail the others.
  std::vector<absl::Status> ReadBatch(const Namespace& ns, absl::Span<const ReadItem> items,
                                      const CallOptions& call = {});

  // Writes every item, one result per item in order. Items run concurrently (up to
  // options.async_threads at once) except that an item naming `parent_item` starts after
  // that item succeeded (FAILED_PRECONDITION if it failed, INVALID_ARGUMENT if parent_item
  // is not an earlier item).
  std::vector<absl::StatusOr<WriteResult>> WriteBatch(const Namespace& ns,
                                                      absl::Span<const WriteItem> items,
                                                      const CallOptions& call = {});

  // ---------------------------------------------------------------- async forms

  // Read / Write on the client's async threads; `done` runs there with the result. The
  // deadline is fixed when the call is made. Memory stays borrowed until `done` runs;
  // `ranges`, `destinations` and `tokens` are copied.
  void ReadAsync(const Namespace& ns, absl::Span<const ReadRange> ranges,
                 absl::Span<const MemoryDescriptor> destinations, const CallOptions& call,
                 StatusCallback done);
  void WriteAsync(const Namespace& ns, const std::optional<Parent>& parent,
                  absl::Span<const TokenId> tokens, const MemoryDescriptor& source,
                  const CallOptions& call, WriteCallback done);

  // ---------------------------------------------------------------- blob admin

  // Removes the blob and everything cached below it from the index. NOT_FOUND not in the
  // index; FAILED_PRECONDITION it or a blob below it is pinned. Not retried.
  absl::StatusOr<DeleteResult> Delete(const BlobKey& key, const CallOptions& call = {});
  // Pins / unpins the blob's whole prefix path against eviction and Delete. Idempotent.
  // NOT_FOUND not in the index.
  absl::Status Pin(const BlobKey& key, const CallOptions& call = {});
  absl::Status Unpin(const BlobKey& key, const CallOptions& call = {});
  // The node's record of a blob (with its own tokens when include_tokens). NOT_FOUND.
  absl::StatusOr<BlobInfo> Stat(const BlobKey& key, bool include_tokens = false,
                                const CallOptions& call = {});
  // One page of blob records. INVALID_ARGUMENT a page token the node did not write, both
  // filters set, a bad namespace.
  absl::StatusOr<ListResult> List(const ListOptions& list, const CallOptions& call = {});

  // ---------------------------------------------------------------- node admin

  // Every tier's capacity, occupancy and counts, Match's page hits and misses by phase, the
  // node's live miss-ratio curve and, per tier, the hit ratio expected at its capacity and
  // the capacity it recommends (types.h, NodeTiers). Fails only as every call does.
  absl::StatusOr<NodeTiers> Tiers(const CallOptions& call = {});
  // Evicts at least `bytes` from `tier` (less when nothing more can go): kDram moves blobs
  // to SSD or drops their bytes (they become kText); kSsd drops SSD copies; kText deletes
  // TEXT records from the index; kHbm drops HBM copies (the DRAM bytes stay).
  // INVALID_ARGUMENT a tier the node does not have (kHbm without an HBM tier; kSsd on a
  // node without one). Not retried.
  absl::StatusOr<EvictResult> Evict(Tier tier, uint64_t bytes, const CallOptions& call = {});
  // Stops the node accepting writes and waits up to `timeout` for pending puts and leases.
  // DEADLINE_EXCEEDED when some are still in flight then (draining stays on).
  absl::Status Drain(absl::Duration timeout, const CallOptions& call = {});
  // The node leaves its cluster: Drain(timeout) with its registration marked draining, then
  // it hands its hot segments (at most hand_over_bytes of KV) to their new owners and
  // deregisters (Admin.Leave). FAILED_PRECONDITION the node is in no cluster;
  // DEADLINE_EXCEEDED as Drain. Not retried.
  absl::StatusOr<LeaveResult> Leave(absl::Duration timeout, uint64_t hand_over_bytes,
                                    const CallOptions& call = {});
  absl::StatusOr<HealthInfo> Health(const CallOptions& call = {});
  // The transport's description of the data-plane connection to the node (connecting if
  // needed): which UCX transport and device each lane uses, e.g. "tcp/lo" or, for a
  // same-host node with shared memory allowed, "sysv/memory" and "cma/memory" on the data
  // endpoint. For diagnostics; the text is UCX's. Errors of Health, and UNAVAILABLE when
  // the data plane cannot be reached.
  absl::StatusOr<std::string> DescribeDataPlane(const CallOptions& call = {});

  // ---------------------------------------------------------------- memory

  // Registers host memory the caller will read into or write from many times; transfers
  // inside a registered range use the registration. INVALID_ARGUMENT a bad descriptor or a
  // range overlapping one already registered; UNIMPLEMENTED device memory (it is staged, or
  // DMA'd on the node's host: nothing to register without a CUDA-enabled UCX);
  // RESOURCE_EXHAUSTED the transport could not pin it.
  absl::Status RegisterMemory(const MemoryDescriptor& memory);
  // Drops the registration that starts at `ptr` (transfers in flight keep it until they
  // end). NOT_FOUND none starts there.
  absl::Status UnregisterMemory(const void* ptr);

  ClientStats stats() const;

 private:
  explicit Client(std::unique_ptr<client_internal::ClientCore> core);
  Client(std::unique_ptr<client_internal::ClusterBackend> cluster, ClientOptions options);
  std::unique_ptr<client_internal::ClientCore> core_;         // on one node
  std::unique_ptr<client_internal::ClusterBackend> cluster_;  // on a cluster
  ClientOptions cluster_options_;                             // on a cluster
};

}  // namespace strata
