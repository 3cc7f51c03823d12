// ClusterClient: many strata nodes used as one store (issue 13), with no metadata server on
// the read path.
//
// Placement (store/cluster/placement.h, DESIGN.md "Cluster"): a sequence is cut into
// segments of `segment_pages` (S) pages; segment k (pages [kS, (k+1)S)) lives on the
// rendezvous-hash owner, weighted by capacity, of h_{kS+1} — the prefix hash through the
// segment's first page — among the serving nodes, and the owner's index roots it at its
// start hash h_{kS}. Not h_{kS} itself: h_0 is the namespace's hash, so every sequence's
// first segment (the most-read pages) would live on one node; h_1 spreads first segments
// by their first page's tokens (a prompt prefix shared by many sequences still has one
// owner: replicas are for that). Every client computes the same owners from the same
// membership; a lookup or write of segment k always has its first page.
//
//   Match  computes h_1 .. h_n itself and asks every owner at once, one MatchSegments RPC
//          per node for all the segments it owns (segment 0 from page 0, the others from
//          their SegmentStart; the node stops after its first segment that does not hit
//          whole), and answers the longest prefix whose segments all hit. An owner that
//          does not answer within node_timeout (dead, partitioned, overloaded) is a miss
//          there, so the answer is the prefix before its first segment; no call waits past
//          that deadline.
//   Read   fans out: each owner's segments go straight into their place in the caller's
//          destination (Client::ReadInto), all owners in parallel; ReadLayers keeps
//          layer-wise streaming: layer l is handed on once every owner delivered it.
//   Write  splits pages [a, b) at segment boundaries (a blob never crosses one) and writes
//          each piece to its owner, in parallel: a piece at page 0 as a sequence's first
//          blob, one at a boundary with its SegmentStart, the first piece (when a is inside
//          a segment) continuing the blob that holds page a - 1 on that owner (`parent`, or
//          looked up with one Match when not given); a thread per owner writes its pieces
//          in order. With more than one piece each is
//          copied out of the caller's layer-major source first (one memcpy of the bytes).
//
// Replicas of token text: each piece written goes, as a TEXT blob (tokens, size, chunk
// checksums: Client::WriteText), to the next text_replicas - 1 nodes of its segment's
// rendezvous ranking too. When the owner dies its segments' next owner is the first of
// them, so the lost spans come back as TEXT — rebuildable, verified against the original
// checksums — and not as misses.
//
// Node loss: an owner that fails or passes node_timeout in a lookup has its segments asked,
// in a second round, at the next node of their ranking (the text replica; after the dead
// node's lease expires, the new owner). A lookup then takes at most about two
// node_timeouts. A write piece whose owner cannot be reached goes to that next node too, so
// the KV written while a dead node is still in the view is found by the same second round.
// A node that could not be reached is skipped for suspect_for.
//
// Hot replicas: a blob its owner saw read cluster_hot_reads times is pushed by that node to
// the next nodes of its segment's ranking (the node's HotReplicator); Match reports how many
// hold it, and Read takes each such segment from one of them in turn (round robin over
// calls), going back to the owner for segments a replica fails to give.
//
// Joins and drains: placement uses the serving and joining nodes (a joining node owns its
// share at once: writes go there). The placement of the serving and draining nodes is where
// segments were before the joins and drains under way; a segment whose owner differs there
// is asked at both owners in the same round, and the better answer wins. A segment read
// from its previous owner is moved to its owner after the read (a copy of its bytes written
// there by a background thread, at most move_queue_bytes queued; more is dropped and
// counted), so a join is not a cliff in the hit rate and a drained node's read segments
// follow their readers.
//
// Membership: a static list of nodes (`nodes`, each its own id, weight 1), or etcd
// (`cluster_url`: the nodes' registrations, watched; weighted by capacity). While etcd is
// unreachable the client keeps the last view it had.
//
// Thread-safe: every method from any thread. One Client per node, made on first use and
// kept.
//
// Errors: Connect INVALID_ARGUMENT (options: neither or both of nodes and cluster_url, a bad
// address or URL, segment_pages 0, node_timeout <= 0, text_replicas 0), UNAVAILABLE etcd did not
// answer the first read. Match INVALID_ARGUMENT as Client::Match, and any owner's INVALID_ARGUMENT,
// UNAUTHENTICATED, PERMISSION_DENIED or FAILED_PRECONDITION (what every node would answer);
// an owner's other failures (UNAVAILABLE, DEADLINE_EXCEEDED, NOT_FOUND for a namespace it
// never saw) make its segments misses; UNAVAILABLE no serving node. Read as
// Client::ReadInto, per owner (the first failure). Write as Client::Write (the first
// failing piece; pieces before it stay written: they are cache).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/options.h"
#include "strata/types.h"

namespace strata {

class Client;

struct ClusterClientOptions {
  // "etcd://HOST:PORT[,HOST:PORT...][/NAME]" (strata/cluster.h), or empty with `nodes`.
  std::string cluster_url;
  // A static cluster: the nodes' gRPC addresses ("host:port"); each is its own id.
  std::vector<std::string> nodes;
  // Each node's Client options; `node` is replaced by the node's address.
  ClientOptions node_options;
  // S: pages per segment. Every client and writer of a cluster must use the same value.
  // 256 (4096 tokens at 16-token pages): strata-cluster-bench, 2026-12-06, docs/benchmarks.md
  // — a 128K-token lookup's p50 at S = 256 was the lowest or within 20 % of it at 1, 2 and 4
  // nodes in two runs; S = 16 cost 2-3x; S = 1024 left a 32K-token context on 2 of 8 nodes
  // (no read fan-out).
  uint32_t segment_pages = 256;
  // How long a lookup waits for one node (Match; the Match a Write may need) before taking
  // its segment as a miss.
  absl::Duration node_timeout = absl::Milliseconds(300);
  // A node that cannot be reached (a call fails UNAVAILABLE) is skipped for this long:
  // lookups go to the next node at once instead of waiting node_timeout again, and writes
  // and reads of its segments fail at once (the node is probed again after it). 0: never.
  // Each node's data-plane connect_timeout is also cut to node_timeout.
  absl::Duration suspect_for = absl::Seconds(1);
  // R: nodes holding each segment's token text (the owner's blob and R - 1 TEXT replicas on
  // the next nodes of its ranking). 1: none.
  uint32_t text_replicas = 2;
  // Bytes of segments read from a previous owner that may wait to be moved to their owner.
  uint64_t move_queue_bytes = uint64_t{256} << 20;

  // OK, or INVALID_ARGUMENT naming the first bad field.
  absl::Status Validate() const;
};

// A cluster's answer: `match` as one node's (segments in order, seq_page_begin counted from
// the sequence's page 0), with the node that holds each segment.
struct ClusterMatch {
  MatchResult match;
  std::vector<std::string> owners;  // owners[i] holds match.segments[i] (a node id)
  // move_to[i]: the owner match.segments[i] is to be moved to after a Read (it answered from
  // its previous owner), or "".
  std::vector<std::string> move_to;
  // holders[i]: every node holding match.segments[i]'s bytes, owners[i] first, when its
  // owner pushed it to the next nodes as a hot replica (Segment.replicas); else empty. Read
  // spreads over them.
  std::vector<std::vector<std::string>> holders;
  uint32_t segments_asked = 0;          // cluster segments looked up
  uint32_t segments_unanswered = 0;     // of which the owner failed or passed node_timeout
  uint32_t segments_from_previous = 0;  // answered by their previous owner (join, drain)
  uint32_t segments_from_fallback = 0;  // answered by the next node after their owner failed
  // The query's tokens through matched_pages when some segment is to be moved (the move
  // writes them); else empty.
  std::vector<TokenId> tokens;
};

struct ClusterWriteResult {
  std::vector<WriteResult> pieces;     // one per segment piece, in page order
  std::vector<std::string> owners;     // the node each piece went to
  std::vector<uint32_t> first_pages;   // each piece's first sequence page
  uint32_t text_replicas = 0;          // TEXT copies written (or there already) on other nodes
  uint32_t text_replica_failures = 0;  // TEXT copies that failed (the write still succeeds)
};

// Counts since Connect.
struct ClusterClientStats {
  uint64_t text_replicas = 0;           // TEXT replica puts that succeeded (existed included)
  uint64_t text_replica_failures = 0;   // and that failed (node down, its TEXT parent gone)
  uint64_t segments_from_previous = 0;  // lookups' segments answered by a previous owner
  uint64_t segments_from_fallback = 0;  // and by the next node after their owner failed
  uint64_t moves_queued = 0;            // segments read from a previous owner, queued to move
  uint64_t moves_done = 0;              // written to their owner (existed included)
  uint64_t moves_failed = 0;            // the write failed
  uint64_t moves_dropped = 0;           // not queued: move_queue_bytes full
  uint64_t bytes_moved = 0;             // KV bytes of moves_done
  uint64_t writes_to_next = 0;          // pieces written to their segment's next node (owner lost)
  uint64_t suspicions = 0;              // nodes taken as down for suspect_for after a failure
  uint64_t replica_reads = 0;           // segments read from a hot replica instead of the owner
  uint64_t replica_read_failures = 0;   // of which failed and were read from the owner
};

// One read of a batch: pages [0, pages) of `match` into `destination`.
struct ClusterReadItem {
  const ClusterMatch* match = nullptr;
  uint32_t pages = 0;
  MemoryDescriptor destination;
};

// One write of a batch: sequence pages [first_page, end) of `tokens` (from page 0).
struct ClusterWriteItem {
  absl::Span<const TokenId> tokens;
  uint32_t first_page = 0;
  MemoryDescriptor source;
  std::optional<Parent> parent;
};

struct ClusterNodeInfo {
  std::string id;
  std::string grpc_address;
  double weight = 1;
};

class ClusterClient {
 public:
  static absl::StatusOr<std::unique_ptr<ClusterClient>> Connect(ClusterClientOptions options);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  const ClusterClientOptions& options() const;
  // The nodes placement uses now (serving and joining), by id.
  std::vector<ClusterNodeInfo> Nodes() const;
  ClusterClientStats stats() const;
  // The client of node `id` of the view (owned by this ClusterClient, valid as long as it
  // is): UNAVAILABLE for a node not in the view or suspected down.
  absl::StatusOr<Client*> Node(const std::string& id);
  // The tokens of sequence pages [0, start.pages) of the sequence whose segment begins at
  // `start` (a RebuildTask::segment_start): gathered from the nodes holding the blobs
  // before it (KV or TEXT; each step asks the node of the last answer, then all the others
  // at once), checked against start.hash. NOT_FOUND when no node holds some blob of the
  // prefix; DATA_LOSS when what the nodes hold does not hash to the start.
  absl::StatusOr<std::vector<TokenId>> PrefixTokens(const Namespace& ns, const SegmentStart& start,
                                                    const CallOptions& call = {});
  // The tokens of sequence pages [0, through.pages) of the sequence through blob
  // `through.key` (a Parent a Write continues), gathered and checked as PrefixTokens.
  absl::StatusOr<std::vector<TokenId>> TokensBefore(const Namespace& ns, const Parent& through,
                                                    const CallOptions& call = {});
  // A node holding blob `key`, by a Stat at every node at once: one holding its KV when
  // some node does, else one holding it as TEXT. NOT_FOUND none.
  absl::StatusOr<std::string> Locate(const BlobKey& key, const CallOptions& call = {});
  // Waits until no move is queued or in progress; false after `timeout`.
  bool WaitMovesIdle(absl::Duration timeout) const;
  // The owner (a node id) of the segment holding sequence page `page` of `tokens`, which must
  // hold the pages through that segment's first page; "" without nodes or such tokens.
  std::string OwnerOf(const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t page) const;

  absl::StatusOr<ClusterMatch> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                     LookupPhase phase = LookupPhase::kUnspecified,
                                     const CallOptions& call = {});
  // Sequence pages [0, pages) of `match` into `destination` (radix::BlobLayout of `pages`
  // pages). NOT_FOUND when a TEXT segment lies inside [0, pages) (read ReadablePages()).
  absl::Status Read(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call = {});
  // Read, layer by layer: `on_layer(l)` runs on the calling thread, in layer order, once
  // layer l of every segment in [0, pages) landed and verified, on every node; a non-OK
  // status from it stops the read (the nodes' transfers end) and is returned. Segments are
  // read from their owners (not spread over hot replicas). Errors as Read.
  absl::Status ReadLayers(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                          const MemoryDescriptor& destination,
                          absl::FunctionRef<absl::Status(uint32_t layer)> on_layer,
                          const CallOptions& call = {});
  // Batches: every item at once (each itself fanned out over its owners), one result per
  // item in order. Async: the call on the client's async threads (ClientOptions::
  // async_threads of node_options), `done` with its result there; the spans and memory
  // named must stay valid until `done` ran.
  std::vector<absl::Status> ReadBatch(const Namespace& ns, absl::Span<const ClusterReadItem> items,
                                      const CallOptions& call = {});
  std::vector<absl::StatusOr<ClusterWriteResult>> WriteBatch(
      const Namespace& ns, absl::Span<const ClusterWriteItem> items, const CallOptions& call = {});
  void ReadAsync(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                 const MemoryDescriptor& destination, const CallOptions& call,
                 absl::AnyInvocable<void(absl::Status) &&> done);
  void WriteAsync(const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t first_page,
                  const MemoryDescriptor& source, const std::optional<Parent>& parent,
                  const CallOptions& call,
                  absl::AnyInvocable<void(absl::StatusOr<ClusterWriteResult>) &&> done);
  // Writes sequence pages [first_page, tokens.size() / page_tokens) of `tokens` (the whole
  // sequence from page 0: the segment hashes need it); `source` holds those pages' KV,
  // radix::BlobLayout of that many pages. `parent`: the blob holding page first_page - 1 on
  // its owner, when the caller knows it (a ClusterMatch's segment); ignored when
  // first_page is a segment boundary.
  absl::StatusOr<ClusterWriteResult> Write(const Namespace& ns, absl::Span<const TokenId> tokens,
                                           uint32_t first_page, const MemoryDescriptor& source,
                                           const std::optional<Parent>& parent = std::nullopt,
                                           const CallOptions& call = {});

 private:
  class Impl;
  explicit ClusterClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
