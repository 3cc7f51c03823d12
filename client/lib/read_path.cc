// ClientCore's read path: Read, ReadPrefix (and ReadLayers), ReadBatch.
//
// A read is one data-plane READ per run of planned ranges (a run is what one READ may
// carry): the node leases the blobs, sends the grant (their chunk checksums) and then the
// layer ranges, which land straight in the caller's memory; the calling thread verifies each
// landed layer run against the grant while later ones are still arriving and, for
// ReadLayers, calls back each layer once every range has it. A read of several runs keeps
// up to ClientOptions::reads_in_flight READs sent ahead and finishes them in order. The
// node ends each READ's lease with the READ.
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"

#include "client/lib/chunk_verify.h"
#include "client/lib/client_core.h"
#include "client/lib/retry_policy.h"
#include "client/lib/wire_types.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/radix/prefix_hash.h"

namespace strata::client_internal {
namespace {

namespace wire = store::transport::wire;

// The node's default lease TTL (docs/api.md): a call that may run longer asks for more.
constexpr absl::Duration kNodeDefaultLeaseTtl = absl::Seconds(30);
constexpr absl::Duration kLeaseSlack = absl::Seconds(5);

// The lease TTL to ask for: the configured one; else the node's default (0) unless the
// call's deadline lies beyond it, then the time to the deadline plus some slack (the node
// clamps to its maximum).
uint32_t LeaseTtlMs(absl::Duration configured, absl::Time deadline) {
  absl::Duration ttl = configured;
  if (ttl <= absl::ZeroDuration()) {
    const absl::Duration left = deadline - absl::Now();
    if (left + kLeaseSlack <= kNodeDefaultLeaseTtl) return 0;
    ttl = left + kLeaseSlack;
  }
  return static_cast<uint32_t>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(ttl), 1, int64_t{UINT32_MAX}));
}

// Codes of a batched Read that may concern only some of its items.
bool MayBeOneItems(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

// The wire form of planned ranges (the READ's range list).
std::vector<wire::ReadRangeBits> WireRanges(absl::Span<const PlannedRange> ranges) {
  std::vector<wire::ReadRangeBits> out;
  out.reserve(ranges.size());
  for (const PlannedRange& r : ranges) {
    out.push_back(wire::ReadRangeBits{.key = {r.blob.hash.hi, r.blob.hash.lo},
                                      .first_page = r.first_page,
                                      .num_pages = r.num_pages,
                                      .layer_begin = r.layer_begin,
                                      .layer_end = r.layer_end});
  }
  return out;
}

}  // namespace

absl::Status ClientCore::Read(const Namespace& ns, absl::Span<const ReadRange> ranges,
                              absl::Span<const MemoryDescriptor> destinations,
                              absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(std::vector<PlannedRange> plan,
                          PlanRanges(ns.layout(), ranges, destinations));
  return ReadPlanned(ns, std::move(plan), nullptr, deadline);
}

absl::Status ClientCore::ReadPrefix(const Namespace& ns, absl::Span<const Segment> segments,
                                    uint32_t pages, const MemoryDescriptor& destination,
                                    const Client::LayerCallback* on_layer, absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(std::vector<PlannedRange> plan,
                          PlanPrefix(ns.layout(), segments, pages, destination));
  if (plan.empty()) return absl::OkStatus();
  return ReadPlanned(ns, std::move(plan), on_layer, deadline);
}

absl::Status ClientCore::ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                                  uint32_t total_pages, const MemoryDescriptor& destination,
                                  absl::Time deadline, const Client::LayerCallback* on_layer) {
  STRATA_ASSIGN_OR_RETURN(std::vector<PlannedRange> plan,
                          PlanInto(ns.layout(), segments, total_pages, destination));
  if (plan.empty()) return absl::OkStatus();
  return ReadPlanned(ns, std::move(plan), on_layer, deadline);
}

// One READ in flight: its ranges, what the grant will fill in, and the group its transfers
// report to. Destroying one that has not finished abandons it (the caller's memory is free
// again when that returns).
struct ClientCore::ReadInFlight {
  ReadInFlight(const radix::KvLayout& layout, absl::Span<const PlannedRange> planned,
               std::vector<wire::ReadRangeBits> bits)
      : chunk_bytes(layout.BytesPerLayerPage()),
        ranges(planned),
        wire_ranges(std::move(bits)),
        items(wire_ranges),
        layer_waiting(layout.num_layers, 0),
        checksums(items.total_checksums()) {}
  ReadInFlight(const ReadInFlight&) = delete;
  ReadInFlight& operator=(const ReadInFlight&) = delete;
  ~ReadInFlight() {
    if (plane != nullptr && !ended) plane->Abandon(group);
  }

  const uint64_t chunk_bytes;
  absl::Span<const PlannedRange> ranges;
  std::vector<wire::ReadRangeBits> wire_ranges;
  // Items in READ order (wire::ReadItems, the wire contract's numbering): range i's layer
  // (layer_begin + j) is item items.First(i) + j; its checksums sit at
  // items.FirstChecksum(i) + j * num_pages in the grant.
  wire::ReadItems items;
  std::vector<uint32_t> layer_waiting;  // per layer, the ranges whose item has not landed
  std::vector<uint64_t> checksums;      // filled in by the grant
  std::shared_ptr<TransferGroup> group = std::make_shared<TransferGroup>();
  DataPlane* plane = nullptr;  // set once the READ was sent
  // Device memory received into directly: its device verifies (no device: the CPU does).
  DirectTarget direct;
  std::vector<uint64_t> computed;  // the device's checksums of one item
  bool ended = false;              // finished, or abandoned after a failure
};

absl::Status ClientCore::ReadPlanned(const Namespace& ns, std::vector<PlannedRange> plan,
                                     const Client::LayerCallback* on_layer, absl::Time deadline,
                                     const DirectTarget* direct) {
  if (direct == nullptr && !plan.empty() && plan.front().device >= 0) {
    return ReadToDevice(ns, std::move(plan), on_layer, deadline);
  }
  for (const PlannedRange& r : plan) {
    if ((r.device >= 0) != (direct != nullptr)) {
      return absl::InvalidArgumentError(
          "destinations: host and device memory mixed in one read; use one kind per call");
    }
  }
  plan = CutLargeRanges(std::move(plan), proto::kMaxChunksPerRead, ns.layout().BytesPerLayerPage());
  const auto runs = SplitIntoReads(plan, proto::kMaxReadRanges, proto::kMaxChunksPerRead);
  auto run_span = [&](size_t r) {
    return absl::MakeConstSpan(plan).subspan(runs[r].first, runs[r].second - runs[r].first);
  };
  // Layer callbacks come from the last run: the earlier ones have fully landed by then
  // (runs finish in order).
  auto callback_of = [&](size_t r) { return r + 1 == runs.size() ? on_layer : nullptr; };
  // On the node's host: copied out of its arena, verified, no network stack. A channel
  // that broke (the node restarted) leaves the read to UCX unless a layer went out.
  if (std::shared_ptr<SameHostChannel> local = direct == nullptr ? SameHost(deadline) : nullptr;
      local != nullptr) {
    bool delivered = false;
    const absl::Status status =
        ReadSameHost(*local, ns, plan, runs, on_layer, deadline, &delivered);
    if (status.code() != absl::StatusCode::kUnavailable || delivered) return status;
    DropSameHost(local);
  }
  // Up to reads_in_flight runs are sent ahead: the node grants and sends the next run while
  // this thread verifies the current one, and no round trip separates them. A run that
  // could not be sent keeps its error until its turn (the runs before it may fail first).
  const size_t window = std::max<size_t>(1, options_.reads_in_flight);
  std::deque<absl::StatusOr<std::unique_ptr<ReadInFlight>>> flying;
  size_t next = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    while (next < runs.size() && next < r + window) {
      flying.push_back(StartRun(ns, run_span(next), callback_of(next), deadline, direct));
      ++next;
    }
    absl::StatusOr<std::unique_ptr<ReadInFlight>> started = std::move(flying.front());
    flying.pop_front();
    bool delivered = false;
    absl::Status status = started.status();
    if (status.ok()) status = FinishRun(**started, callback_of(r), deadline, &delivered);
    started = absl::CancelledError();  // the run's memory is released before a repeat
    // A READ changes nothing on the node (its lease ends with it), so one that failed
    // UNAVAILABLE (connection lost, node restarted) is repeated like the retryable RPCs —
    // on its own, the runs sent after it still in flight. Not after a layer was handed to
    // the caller: that cannot be taken back.
    const RetryPolicy policy(options_.retry);
    absl::BitGen random;
    for (int attempt = 1; !status.ok(); ++attempt) {
      const absl::Duration backoff = policy.Backoff(attempt, absl::Uniform(random, 0.0, 1.0));
      if (delivered || !policy.ShouldRetry(Retry::kUnavailable, status, attempt, backoff,
                                           absl::Now(), deadline)) {
        return status;  // `flying` abandons the runs sent after this one
      }
      absl::SleepFor(backoff);
      status = ReadOnce(ns, run_span(r), callback_of(r), deadline, &delivered, direct);
    }
  }
  return absl::OkStatus();
}

absl::Status ClientCore::ReadSameHost(SameHostChannel& channel, const Namespace& ns,
                                      absl::Span<const PlannedRange> plan,
                                      absl::Span<const std::pair<size_t, size_t>> runs,
                                      const Client::LayerCallback* on_layer, absl::Time deadline,
                                      bool* delivered,
                                      const SameHostChannel::DeviceTarget* device) {
  const radix::KvLayout& layout = ns.layout();
  const std::string ns_encoding = ns.CanonicalEncoding();
  const auto ns_bytes =
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns_encoding.data()), ns_encoding.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto ranges = plan.subspan(runs[r].first, runs[r].second - runs[r].first);
    const std::vector<wire::ReadRangeBits> wire_ranges = WireRanges(ranges);
    const wire::ReadHeader header{.request_id = 0,
                                  .range_count = static_cast<uint32_t>(ranges.size()),
                                  .lease_ttl_ms = LeaseTtlMs(options_.lease_ttl, deadline),
                                  .ns_bytes = static_cast<uint32_t>(ns_encoding.size())};
    uint64_t failures = 0;
    // Layer callbacks come from the last run: the earlier ones have landed by then.
    const absl::Status status = channel.Read(
        header, wire::EncodeReadPayload(ns_bytes, wire_ranges), ranges, wire_ranges,
        layout.BytesPerLayerPage(), layout.num_layers, r + 1 == runs.size() ? on_layer : nullptr,
        deadline, delivered, &failures, device);
    checksum_failures_.fetch_add(failures, std::memory_order_relaxed);
    if (!status.ok()) return status;
    reads_.fetch_add(1, std::memory_order_relaxed);
    same_host_reads_.fetch_add(1, std::memory_order_relaxed);
    for (const PlannedRange& range : ranges) {
      bytes_read_.fetch_add(range.chunks() * layout.BytesPerLayerPage(), std::memory_order_relaxed);
    }
  }
  return absl::OkStatus();
}

absl::Status ClientCore::ReadOnce(const Namespace& ns, absl::Span<const PlannedRange> ranges,
                                  const Client::LayerCallback* on_layer, absl::Time deadline,
                                  bool* delivered, const DirectTarget* direct) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ReadInFlight> run,
                          StartRun(ns, ranges, on_layer, deadline, direct));
  return FinishRun(*run, on_layer, deadline, delivered);
}

absl::StatusOr<std::unique_ptr<ClientCore::ReadInFlight>> ClientCore::StartRun(
    const Namespace& ns, absl::Span<const PlannedRange> ranges,
    const Client::LayerCallback* on_layer, absl::Time deadline, const DirectTarget* direct) {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();
  auto run = std::make_unique<ReadInFlight>(layout, ranges, WireRanges(ranges));
  if (direct != nullptr) run->direct = *direct;
  std::vector<absl::Span<uint8_t>> dests;
  for (const PlannedRange& r : ranges) {
    for (uint32_t l = r.layer_begin; l < r.layer_end; ++l) {
      ++run->layer_waiting[l];
      dests.emplace_back(reinterpret_cast<uint8_t*>(r.layer_dest[l - r.layer_begin]),
                         uint64_t{r.num_pages} * chunk_bytes);
    }
  }
  // The transport may write anywhere in [lowest, highest) of the caller's memory.
  const std::byte* lowest = nullptr;
  const std::byte* highest = nullptr;
  for (const absl::Span<uint8_t>& d : dests) {
    const auto* b = reinterpret_cast<const std::byte*>(d.data());
    if (lowest == nullptr || b < lowest) lowest = b;
    if (highest == nullptr || b + d.size() > highest) highest = b + d.size();
  }

  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(DataPlane::PeerId peer, ConnectDataPlane(deadline));
  const std::string ns_encoding = ns.CanonicalEncoding();
  // Merging: a plain read whose every range has its layers end to end in the caller's
  // memory (a whole blob into a buffer of its size) may get them in fewer, larger messages.
  bool contiguous = on_layer == nullptr;
  for (size_t i = 0; i < ranges.size() && contiguous; ++i) {
    const uint64_t layer_bytes = uint64_t{ranges[i].num_pages} * chunk_bytes;
    for (size_t j = 1; j < ranges[i].layer_dest.size() && contiguous; ++j) {
      contiguous = ranges[i].layer_dest[j] == ranges[i].layer_dest[j - 1] + layer_bytes;
    }
  }
  const wire::ReadHeader header{
      .request_id = 0,  // StartRead numbers it
      .range_count = static_cast<uint32_t>(ranges.size()),
      .lease_ttl_ms = LeaseTtlMs(options_.lease_ttl, deadline),
      .ns_bytes = static_cast<uint32_t>(ns_encoding.size()),
      // A layer-wise read of several ranges wants layer 0 of every range first.
      .order = on_layer != nullptr && ranges.size() > 1 ? wire::ReadOrder::kLayerMajor
                                                        : wire::ReadOrder::kRangeMajor,
      .merge = contiguous};
  STRATA_RETURN_IF_ERROR(
      plane->StartRead(peer, header,
                       wire::EncodeReadPayload(
                           absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns_encoding.data()),
                                               ns_encoding.size()),
                           run->wire_ranges),
                       std::move(dests), absl::MakeSpan(run->checksums), 0, run->group,
                       RegionFor(lowest, static_cast<size_t>(highest - lowest)), deadline));
  run->plane = plane;
  reads_.fetch_add(1, std::memory_order_relaxed);
  return run;
}

absl::Status ClientCore::FinishRun(ReadInFlight& run, const Client::LayerCallback* on_layer,
                                   absl::Time deadline, bool* delivered) {
  const uint64_t chunk_bytes = run.chunk_bytes;
  const wire::ReadItems& items = run.items;
  const uint32_t total_items = items.total();
  // Land, verify (once the grant is in), call back — until every item is in, or something
  // fails.
  bool granted = false;
  uint32_t verified = 0;
  uint32_t next_layer = 0;
  std::vector<uint32_t> landed;
  std::vector<uint32_t> unverified;  // landed before the grant
  auto deliver_layers = [&]() -> absl::Status {
    while (on_layer != nullptr && next_layer < run.layer_waiting.size() &&
           run.layer_waiting[next_layer] == 0) {
      *delivered = true;
      STRATA_RETURN_IF_ERROR((*on_layer)(next_layer++));
    }
    return absl::OkStatus();
  };
  auto verify = [&](uint32_t item) -> absl::Status {
    const size_t i = items.RangeOf(item);
    const PlannedRange& range = run.ranges[i];
    const uint32_t j = item - items.First(i);
    const uint32_t layer = range.layer_begin + j;
    const auto expected =
        absl::MakeConstSpan(run.checksums)
            .subspan(items.FirstChecksum(i) + uint64_t{j} * range.num_pages, range.num_pages);
    absl::Status status;
    if (run.direct.device != nullptr) {
      // The bytes are in device memory: the device checksums them where they landed.
      run.computed.resize(range.num_pages);
      status = run.direct.device->ChecksumChunks(range.layer_dest[j], chunk_bytes, range.num_pages,
                                                 radix::kPrefixHashSeed, run.computed.data(),
                                                 *run.direct.stream);
      if (status.ok()) {
        status = CompareLayerRun(run.computed, expected, range.blob, layer, range.first_page);
      }
    } else {
      status = VerifyLayerRun(
          absl::MakeConstSpan(range.layer_dest[j], uint64_t{range.num_pages} * chunk_bytes),
          chunk_bytes, expected, range.blob, layer, range.first_page);
    }
    if (!status.ok()) {
      checksum_failures_.fetch_add(1, std::memory_order_relaxed);
      return status;
    }
    ++verified;
    --run.layer_waiting[layer];
    return deliver_layers();
  };
  for (;;) {
    bool finished = false;
    landed.clear();
    const absl::Status transfer = run.group->WaitForProgress(deadline, &landed, &finished);
    // What landed arrived whole even if something else failed: verify it and hand on each
    // completed layer before reporting a failure.
    absl::Status status;
    for (size_t k = 0; k < landed.size() && status.ok(); ++k) {
      if (landed[k] == DataPlane::kGrantItem) {
        granted = true;
        for (size_t u = 0; u < unverified.size() && status.ok(); ++u)
          status = verify(unverified[u]);
        unverified.clear();
      } else if (!granted) {
        unverified.push_back(landed[k]);
      } else {
        status = verify(landed[k]);
      }
    }
    if (status.ok()) status = transfer;
    if (!status.ok()) {
      run.plane->Abandon(run.group);
      run.ended = true;
      return status;
    }
    if (finished) break;
  }
  run.ended = true;
  if (verified != total_items) {
    return absl::InternalError(absl::StrCat("the node ended the read after ", verified, " of ",
                                            total_items, " layer ranges",
                                            granted ? "" : " without a grant"));
  }
  bytes_read_.fetch_add(run.group->landed_bytes(), std::memory_order_relaxed);
  return absl::OkStatus();
}

std::vector<absl::Status> ClientCore::ReadBatch(const Namespace& ns,
                                                absl::Span<const ReadItem> items,
                                                absl::Time deadline) {
  std::vector<ReadRange> ranges;
  std::vector<MemoryDescriptor> destinations;
  ranges.reserve(items.size());
  destinations.reserve(items.size());
  for (const ReadItem& item : items) {
    ranges.push_back(item.range);
    destinations.push_back(item.destination);
  }
  if (items.empty()) return {};
  const absl::Status together = Read(ns, ranges, destinations, deadline);
  if (together.ok() || items.size() == 1 || !MayBeOneItems(together.code())) {
    return std::vector<absl::Status>(items.size(), together);
  }
  std::vector<absl::Status> statuses;
  statuses.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    statuses.push_back(Read(ns, absl::MakeConstSpan(&ranges[i], 1),
                            absl::MakeConstSpan(&destinations[i], 1), deadline));
  }
  return statuses;
}

}  // namespace strata::client_internal
