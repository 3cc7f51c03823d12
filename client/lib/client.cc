#include "strata/client.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/lib/client_core.h"
#include "client/lib/cluster_backend.h"
#include "strata/base/status_macros.h"
#include "strata/cluster_client.h"

namespace strata {

using client_internal::ClientCore;

namespace {

// A node's own call, made on a client of a cluster.
absl::Status NodeCall(const char* call) {
  return absl::UnimplementedError(
      absl::StrCat(call,
                   " is a call of one node: on a cluster, make it on cluster()->Node(id) (the ids: "
                   "cluster()->Nodes(), or `strata cluster status`)"));
}

// The call's deadline fixed now (an async call's, when it is made).
CallOptions Fixed(const CallOptions& call, absl::Duration default_timeout) {
  return call.deadline == absl::InfiniteFuture() ? CallOptions::WithTimeout(default_timeout) : call;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(ClientOptions options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (options.on_cluster()) {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<client_internal::ClusterBackend> backend,
                            client_internal::ClusterBackend::Connect(options));
    return std::unique_ptr<Client>(new Client(std::move(backend), std::move(options)));
  }
  STRATA_ASSIGN_OR_RETURN(const client_internal::ChannelTls tls,
                          client_internal::LoadChannelTls(options));
  const bool wait = options.wait_for_node;
  std::unique_ptr<Client> client(new Client(std::make_unique<ClientCore>(std::move(options), tls)));
  if (wait) {
    absl::StatusOr<HealthInfo> health = client->Health();
    if (!health.ok()) return health.status();
  }
  return client;
}

Client::Client(std::unique_ptr<ClientCore> core) : core_(std::move(core)) {}
Client::~Client() = default;

Client::Client(std::unique_ptr<client_internal::ClusterBackend> cluster, ClientOptions options)
    : cluster_(std::move(cluster)), cluster_options_(std::move(options)) {}

const ClientOptions& Client::options() const {
  return cluster_ != nullptr ? cluster_options_ : core_->options();
}

ClusterClient* Client::cluster() { return cluster_ != nullptr ? &cluster_->cluster() : nullptr; }

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->Match(ns, tokens, LookupPhase::kUnspecified, call);
  return core_->Match(ns, tokens, LookupPhase::kUnspecified, core_->Deadline(call));
}

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          LookupPhase phase, const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->Match(ns, tokens, phase, call);
  return core_->Match(ns, tokens, phase, core_->Deadline(call));
}

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, const SegmentStart& start,
                                          absl::Span<const TokenId> tokens, LookupPhase phase,
                                          const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Match from a SegmentStart");
  return core_->Match(ns, tokens, phase, core_->Deadline(call), &start);
}

absl::StatusOr<std::vector<MatchResult>> Client::MatchSegments(
    const Namespace& ns, absl::Span<const SegmentQuery> queries, LookupPhase phase,
    bool stop_at_first_short, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("MatchSegments");
  return core_->MatchSegments(ns, queries, phase, stop_at_first_short, core_->Deadline(call));
}

absl::Status Client::ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                              uint32_t total_pages, const MemoryDescriptor& destination,
                              const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->ReadInto(ns, segments, total_pages, destination, call);
  return core_->ReadInto(ns, segments, total_pages, destination, core_->Deadline(call));
}

absl::Status Client::ReadIntoLayers(const Namespace& ns, absl::Span<const Segment> segments,
                                    uint32_t total_pages, const MemoryDescriptor& destination,
                                    LayerCallback on_layer, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("ReadIntoLayers");
  return core_->ReadInto(ns, segments, total_pages, destination, core_->Deadline(call), &on_layer);
}

absl::StatusOr<WriteResult> Client::Write(const Namespace& ns, const SegmentStart& start,
                                          absl::Span<const TokenId> tokens,
                                          const MemoryDescriptor& source, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Write from a SegmentStart");
  return core_->Write(ns, std::nullopt, tokens, source, core_->Deadline(call), &start);
}

absl::StatusOr<WriteResult> Client::WriteText(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              const std::optional<SegmentStart>& start,
                                              absl::Span<const TokenId> tokens,
                                              const MemoryDescriptor& source,
                                              const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("WriteText");
  return core_->WriteText(ns, parent, tokens, source, core_->Deadline(call),
                          start.has_value() ? &*start : nullptr);
}

absl::StatusOr<WriteResult> Client::WriteText(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              const std::optional<SegmentStart>& start,
                                              absl::Span<const TokenId> tokens,
                                              absl::Span<const uint64_t> chunk_checksums,
                                              const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("WriteText");
  return core_->WriteText(ns, parent, tokens, chunk_checksums, core_->Deadline(call),
                          start.has_value() ? &*start : nullptr);
}

absl::Status Client::Read(const Namespace& ns, absl::Span<const ReadRange> ranges,
                          absl::Span<const MemoryDescriptor> destinations,
                          const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->ReadRanges(ns, ranges, destinations, call);
  return core_->Read(ns, ranges, destinations, core_->Deadline(call));
}

absl::Status Client::Read(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                          const MemoryDescriptor& destination, const CallOptions& call) {
  if (cluster_ != nullptr)
    return cluster_->ReadPrefix(ns, segments, pages, destination, nullptr, call);
  return core_->ReadPrefix(ns, segments, pages, destination, nullptr, core_->Deadline(call));
}

absl::Status Client::ReadLayers(const Namespace& ns, absl::Span<const Segment> segments,
                                uint32_t pages, const MemoryDescriptor& destination,
                                LayerCallback on_layer, const CallOptions& call) {
  if (cluster_ != nullptr)
    return cluster_->ReadPrefix(ns, segments, pages, destination, &on_layer, call);
  return core_->ReadPrefix(ns, segments, pages, destination, &on_layer, core_->Deadline(call));
}

absl::StatusOr<WriteResult> Client::Write(const Namespace& ns, const std::optional<Parent>& parent,
                                          absl::Span<const TokenId> tokens,
                                          const MemoryDescriptor& source, const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->Write(ns, parent, tokens, source, call);
  return core_->Write(ns, parent, tokens, source, core_->Deadline(call));
}

std::vector<absl::Status> Client::ReadBatch(const Namespace& ns, absl::Span<const ReadItem> items,
                                            const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->ReadBatch(ns, items, call);
  return core_->ReadBatch(ns, items, core_->Deadline(call));
}

std::vector<absl::StatusOr<WriteResult>> Client::WriteBatch(const Namespace& ns,
                                                            absl::Span<const WriteItem> items,
                                                            const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->WriteBatch(ns, items, call);
  return core_->WriteBatch(ns, items, core_->Deadline(call));
}

void Client::ReadAsync(const Namespace& ns, absl::Span<const ReadRange> ranges,
                       absl::Span<const MemoryDescriptor> destinations, const CallOptions& call,
                       StatusCallback done) {
  if (cluster_ != nullptr) {
    cluster_->executor().Schedule(
        [backend = cluster_.get(), ns,
         ranges = std::vector<ReadRange>(ranges.begin(), ranges.end()),
         destinations = std::vector<MemoryDescriptor>(destinations.begin(), destinations.end()),
         fixed = Fixed(call, options().default_timeout), done = std::move(done)]() mutable {
          std::move(done)(backend->ReadRanges(ns, ranges, destinations, fixed));
        });
    return;
  }
  core_->executor().Schedule(
      [core = core_.get(), ns, ranges = std::vector<ReadRange>(ranges.begin(), ranges.end()),
       destinations = std::vector<MemoryDescriptor>(destinations.begin(), destinations.end()),
       deadline = core_->Deadline(call), done = std::move(done)]() mutable {
        std::move(done)(core->Read(ns, ranges, destinations, deadline));
      });
}

void Client::WriteAsync(const Namespace& ns, const std::optional<Parent>& parent,
                        absl::Span<const TokenId> tokens, const MemoryDescriptor& source,
                        const CallOptions& call, WriteCallback done) {
  if (cluster_ != nullptr) {
    cluster_->executor().Schedule([backend = cluster_.get(), ns, parent,
                                   tokens = std::vector<TokenId>(tokens.begin(), tokens.end()),
                                   source, fixed = Fixed(call, options().default_timeout),
                                   done = std::move(done)]() mutable {
      std::move(done)(backend->Write(ns, parent, tokens, source, fixed));
    });
    return;
  }
  core_->executor().Schedule([core = core_.get(), ns, parent,
                              tokens = std::vector<TokenId>(tokens.begin(), tokens.end()), source,
                              deadline = core_->Deadline(call), done = std::move(done)]() mutable {
    std::move(done)(core->Write(ns, parent, tokens, source, deadline));
  });
}

absl::StatusOr<PrefetchResult> Client::Prefetch(const Namespace& ns,
                                                absl::Span<const TokenId> tokens,
                                                const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Prefetch");
  return core_->Prefetch(ns, tokens, core_->Deadline(call));
}

absl::StatusOr<RebuildRequestResult> Client::RequestRebuild(const BlobKey& key, bool with_prefix,
                                                            const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("RequestRebuild");
  return core_->RequestRebuild(key, with_prefix, core_->Deadline(call));
}

absl::StatusOr<std::vector<RebuildTask>> Client::PullRebuildTasks(uint32_t max_tasks,
                                                                  absl::Duration wait,
                                                                  const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("PullRebuildTasks");
  // Without a deadline of its own, the call waits up to `wait` and then the default.
  const absl::Duration waited = std::max(wait, absl::ZeroDuration());
  const absl::Time deadline = call.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + waited + options().default_timeout
                                  : call.deadline;
  return core_->PullRebuildTasks(max_tasks, wait, deadline);
}

absl::StatusOr<DeleteResult> Client::Delete(const BlobKey& key, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Delete");
  return core_->Delete(key, core_->Deadline(call));
}

absl::Status Client::Pin(const BlobKey& key, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Pin");
  return core_->Pin(key, true, core_->Deadline(call));
}

absl::Status Client::Unpin(const BlobKey& key, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Unpin");
  return core_->Pin(key, false, core_->Deadline(call));
}

absl::StatusOr<BlobInfo> Client::Stat(const BlobKey& key, bool include_tokens,
                                      const CallOptions& call) {
  if (cluster_ != nullptr) return cluster_->Stat(key, include_tokens, call);
  return core_->Stat(key, include_tokens, core_->Deadline(call));
}

absl::StatusOr<ListResult> Client::List(const ListOptions& list, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("List");
  return core_->List(list, core_->Deadline(call));
}

absl::StatusOr<NodeTiers> Client::Tiers(const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Tiers");
  return core_->Tiers(core_->Deadline(call));
}

absl::StatusOr<EvictResult> Client::Evict(Tier tier, uint64_t bytes, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Evict");
  return core_->Evict(tier, bytes, core_->Deadline(call));
}

absl::Status Client::Drain(absl::Duration timeout, const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Drain");
  // Without a deadline of its own, the call waits the drain's timeout and then the default.
  const absl::Time deadline = call.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + timeout + options().default_timeout
                                  : call.deadline;
  return core_->Drain(timeout, deadline);
}

absl::StatusOr<LeaveResult> Client::Leave(absl::Duration timeout, uint64_t hand_over_bytes,
                                          const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Leave");
  // Without a deadline of its own: the drain's timeout, the hand-over's ten minutes at most,
  // and the default.
  const absl::Time deadline =
      call.deadline == absl::InfiniteFuture()
          ? absl::Now() + timeout + absl::Minutes(10) + options().default_timeout
          : call.deadline;
  return core_->Leave(timeout, hand_over_bytes, deadline);
}

absl::StatusOr<HealthInfo> Client::Health(const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("Health");
  return core_->Health(core_->Deadline(call));
}

absl::StatusOr<std::string> Client::DescribeDataPlane(const CallOptions& call) {
  if (cluster_ != nullptr) return NodeCall("DescribeDataPlane");
  return core_->DescribeDataPlane(core_->Deadline(call));
}

absl::Status Client::RegisterMemory(const MemoryDescriptor& memory) {
  if (cluster_ != nullptr) return NodeCall("RegisterMemory");
  return core_->RegisterMemory(memory);
}

absl::Status Client::UnregisterMemory(const void* ptr) {
  if (cluster_ != nullptr) return NodeCall("UnregisterMemory");
  return core_->UnregisterMemory(ptr);
}

ClientStats Client::stats() const {
  return cluster_ != nullptr ? cluster_->stats() : core_->stats();
}

}  // namespace strata
