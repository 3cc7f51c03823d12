#include "strata/client.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "client/lib/client_core.h"
#include "strata/base/status_macros.h"

namespace strata {

using client_internal::ClientCore;

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(ClientOptions options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
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

const ClientOptions& Client::options() const { return core_->options(); }

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          const CallOptions& call) {
  return core_->Match(ns, tokens, LookupPhase::kUnspecified, core_->Deadline(call));
}

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                          LookupPhase phase, const CallOptions& call) {
  return core_->Match(ns, tokens, phase, core_->Deadline(call));
}

absl::StatusOr<MatchResult> Client::Match(const Namespace& ns, const SegmentStart& start,
                                          absl::Span<const TokenId> tokens, LookupPhase phase,
                                          const CallOptions& call) {
  return core_->Match(ns, tokens, phase, core_->Deadline(call), &start);
}

absl::StatusOr<std::vector<MatchResult>> Client::MatchSegments(
    const Namespace& ns, absl::Span<const SegmentQuery> queries, LookupPhase phase,
    bool stop_at_first_short, const CallOptions& call) {
  return core_->MatchSegments(ns, queries, phase, stop_at_first_short, core_->Deadline(call));
}

absl::Status Client::ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                              uint32_t total_pages, const MemoryDescriptor& destination,
                              const CallOptions& call) {
  return core_->ReadInto(ns, segments, total_pages, destination, core_->Deadline(call));
}

absl::Status Client::ReadIntoLayers(const Namespace& ns, absl::Span<const Segment> segments,
                                    uint32_t total_pages, const MemoryDescriptor& destination,
                                    LayerCallback on_layer, const CallOptions& call) {
  return core_->ReadInto(ns, segments, total_pages, destination, core_->Deadline(call), &on_layer);
}

absl::StatusOr<WriteResult> Client::Write(const Namespace& ns, const SegmentStart& start,
                                          absl::Span<const TokenId> tokens,
                                          const MemoryDescriptor& source, const CallOptions& call) {
  return core_->Write(ns, std::nullopt, tokens, source, core_->Deadline(call), &start);
}

absl::StatusOr<WriteResult> Client::WriteText(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              const std::optional<SegmentStart>& start,
                                              absl::Span<const TokenId> tokens,
                                              const MemoryDescriptor& source,
                                              const CallOptions& call) {
  return core_->WriteText(ns, parent, tokens, source, core_->Deadline(call),
                          start.has_value() ? &*start : nullptr);
}

absl::StatusOr<WriteResult> Client::WriteText(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              const std::optional<SegmentStart>& start,
                                              absl::Span<const TokenId> tokens,
                                              absl::Span<const uint64_t> chunk_checksums,
                                              const CallOptions& call) {
  return core_->WriteText(ns, parent, tokens, chunk_checksums, core_->Deadline(call),
                          start.has_value() ? &*start : nullptr);
}

absl::Status Client::Read(const Namespace& ns, absl::Span<const ReadRange> ranges,
                          absl::Span<const MemoryDescriptor> destinations,
                          const CallOptions& call) {
  return core_->Read(ns, ranges, destinations, core_->Deadline(call));
}

absl::Status Client::Read(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                          const MemoryDescriptor& destination, const CallOptions& call) {
  return core_->ReadPrefix(ns, segments, pages, destination, nullptr, core_->Deadline(call));
}

absl::Status Client::ReadLayers(const Namespace& ns, absl::Span<const Segment> segments,
                                uint32_t pages, const MemoryDescriptor& destination,
                                LayerCallback on_layer, const CallOptions& call) {
  return core_->ReadPrefix(ns, segments, pages, destination, &on_layer, core_->Deadline(call));
}

absl::StatusOr<WriteResult> Client::Write(const Namespace& ns, const std::optional<Parent>& parent,
                                          absl::Span<const TokenId> tokens,
                                          const MemoryDescriptor& source, const CallOptions& call) {
  return core_->Write(ns, parent, tokens, source, core_->Deadline(call));
}

std::vector<absl::Status> Client::ReadBatch(const Namespace& ns, absl::Span<const ReadItem> items,
                                            const CallOptions& call) {
  return core_->ReadBatch(ns, items, core_->Deadline(call));
}

std::vector<absl::StatusOr<WriteResult>> Client::WriteBatch(const Namespace& ns,
                                                            absl::Span<const WriteItem> items,
                                                            const CallOptions& call) {
  return core_->WriteBatch(ns, items, core_->Deadline(call));
}

void Client::ReadAsync(const Namespace& ns, absl::Span<const ReadRange> ranges,
                       absl::Span<const MemoryDescriptor> destinations, const CallOptions& call,
                       StatusCallback done) {
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
  core_->executor().Schedule([core = core_.get(), ns, parent,
                              tokens = std::vector<TokenId>(tokens.begin(), tokens.end()), source,
                              deadline = core_->Deadline(call), done = std::move(done)]() mutable {
    std::move(done)(core->Write(ns, parent, tokens, source, deadline));
  });
}

absl::StatusOr<PrefetchResult> Client::Prefetch(const Namespace& ns,
                                                absl::Span<const TokenId> tokens,
                                                const CallOptions& call) {
  return core_->Prefetch(ns, tokens, core_->Deadline(call));
}

absl::StatusOr<RebuildRequestResult> Client::RequestRebuild(const BlobKey& key, bool with_prefix,
                                                            const CallOptions& call) {
  return core_->RequestRebuild(key, with_prefix, core_->Deadline(call));
}

absl::StatusOr<std::vector<RebuildTask>> Client::PullRebuildTasks(uint32_t max_tasks,
                                                                  absl::Duration wait,
                                                                  const CallOptions& call) {
  // Without a deadline of its own, the call waits up to `wait` and then the default.
  const absl::Duration waited = std::max(wait, absl::ZeroDuration());
  const absl::Time deadline = call.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + waited + options().default_timeout
                                  : call.deadline;
  return core_->PullRebuildTasks(max_tasks, wait, deadline);
}

absl::StatusOr<DeleteResult> Client::Delete(const BlobKey& key, const CallOptions& call) {
  return core_->Delete(key, core_->Deadline(call));
}

absl::Status Client::Pin(const BlobKey& key, const CallOptions& call) {
  return core_->Pin(key, true, core_->Deadline(call));
}

absl::Status Client::Unpin(const BlobKey& key, const CallOptions& call) {
  return core_->Pin(key, false, core_->Deadline(call));
}

absl::StatusOr<BlobInfo> Client::Stat(const BlobKey& key, bool include_tokens,
                                      const CallOptions& call) {
  return core_->Stat(key, include_tokens, core_->Deadline(call));
}

absl::StatusOr<ListResult> Client::List(const ListOptions& list, const CallOptions& call) {
  return core_->List(list, core_->Deadline(call));
}

absl::StatusOr<NodeTiers> Client::Tiers(const CallOptions& call) {
  return core_->Tiers(core_->Deadline(call));
}

absl::StatusOr<EvictResult> Client::Evict(Tier tier, uint64_t bytes, const CallOptions& call) {
  return core_->Evict(tier, bytes, core_->Deadline(call));
}

absl::Status Client::Drain(absl::Duration timeout, const CallOptions& call) {
  // Without a deadline of its own, the call waits the drain's timeout and then the default.
  const absl::Time deadline = call.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + timeout + options().default_timeout
                                  : call.deadline;
  return core_->Drain(timeout, deadline);
}

absl::StatusOr<LeaveResult> Client::Leave(absl::Duration timeout, uint64_t hand_over_bytes,
                                          const CallOptions& call) {
  // Without a deadline of its own: the drain's timeout, the hand-over's ten minutes at most,
  // and the default.
  const absl::Time deadline =
      call.deadline == absl::InfiniteFuture()
          ? absl::Now() + timeout + absl::Minutes(10) + options().default_timeout
          : call.deadline;
  return core_->Leave(timeout, hand_over_bytes, deadline);
}

absl::StatusOr<HealthInfo> Client::Health(const CallOptions& call) {
  return core_->Health(core_->Deadline(call));
}

absl::StatusOr<std::string> Client::DescribeDataPlane(const CallOptions& call) {
  return core_->DescribeDataPlane(core_->Deadline(call));
}

absl::Status Client::RegisterMemory(const MemoryDescriptor& memory) {
  return core_->RegisterMemory(memory);
}

absl::Status Client::UnregisterMemory(const void* ptr) { return core_->UnregisterMemory(ptr); }

ClientStats Client::stats() const { return core_->stats(); }

}  // namespace strata
