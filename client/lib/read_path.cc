// ClientCore's read path: Read, ReadPrefix (and ReadLayers), ReadBatch.
//
// One Read RPC grants a lease over a run of planned ranges; one FETCH per range asks for its
// layer ranges in layer order; every FETCH_DATA lands straight in the caller's memory; the
// calling thread verifies each landed layer run against the granted checksums (while later
// ones are still arriving) and, for ReadLayers, calls back each layer once every range has
// it. The lease is released in the background whatever the outcome.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

#include "client/lib/chunk_verify.h"
#include "client/lib/client_core.h"
#include "client/lib/wire_types.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"

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

absl::Status ClientCore::ReadPlanned(const Namespace& ns, std::vector<PlannedRange> plan,
                                     const Client::LayerCallback* on_layer, absl::Time deadline) {
  plan = CutLargeRanges(std::move(plan), proto::kMaxChunksPerRead, ns.layout().BytesPerLayerPage());
  const auto runs = SplitIntoReads(plan, proto::kMaxReadRanges, proto::kMaxChunksPerRead);
  for (size_t r = 0; r < runs.size(); ++r) {
    // Layer callbacks come from the last run: the earlier ones have fully landed by then.
    const Client::LayerCallback* callback = r + 1 == runs.size() ? on_layer : nullptr;
    STRATA_RETURN_IF_ERROR(ReadOnce(
        ns, absl::MakeConstSpan(plan).subspan(runs[r].first, runs[r].second - runs[r].first),
        callback, deadline));
  }
  return absl::OkStatus();
}

absl::Status ClientCore::ReadOnce(const Namespace& ns, absl::Span<const PlannedRange> ranges,
                                  const Client::LayerCallback* on_layer, absl::Time deadline) {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();

  v1::ReadRequest request;
  proto::ToProto(ns, request.mutable_ns());
  request.set_lease_ttl_ms(LeaseTtlMs(options_.lease_ttl, deadline));
  for (const PlannedRange& range : ranges) {
    v1::ReadRange* wire_range = request.add_ranges();
    proto::ToProto(range.blob, wire_range->mutable_blob());
    wire_range->set_first_page(range.first_page);
    wire_range->set_num_pages(range.num_pages);
    wire_range->set_layer_begin(range.layer_begin);
    wire_range->set_layer_end(range.layer_end);
  }
  v1::ReadResponse response;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::Read, request, &response,
                                       deadline, Retry::kUnavailable));
  reads_.fetch_add(1, std::memory_order_relaxed);
  absl::Cleanup release = [this, lease = response.lease_id()] {
    control_.ReleaseInBackground(lease);
  };

  if (response.grants_size() != static_cast<int>(ranges.size())) {
    return absl::InternalError(absl::StrCat("Read answered ", response.grants_size(),
                                            " grants for ", ranges.size(), " ranges"));
  }
  std::vector<GrantView> grants;
  grants.reserve(ranges.size());
  // Items: range i's layer j is item first_item[i] + j.
  std::vector<uint32_t> first_item(ranges.size() + 1, 0);
  std::vector<uint32_t> layer_waiting(layout.num_layers, 0);
  for (size_t i = 0; i < ranges.size(); ++i) {
    grants.push_back(GrantViewFromProto(response.grants(static_cast<int>(i))));
    STRATA_RETURN_IF_ERROR(
        CheckGrant(ranges[i], grants.back(), chunk_bytes, absl::StrCat("grants[", i, "]")));
    first_item[i + 1] = first_item[i] + (ranges[i].layer_end - ranges[i].layer_begin);
    for (uint32_t l = ranges[i].layer_begin; l < ranges[i].layer_end; ++l) ++layer_waiting[l];
  }
  const uint32_t total_items = first_item.back();
  // Item -> range: ranges are in item order.
  auto range_of = [&first_item](uint32_t item) {
    return static_cast<size_t>(std::upper_bound(first_item.begin(), first_item.end(), item) -
                               first_item.begin() - 1);
  };

  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(DataPlane::PeerId peer,
                          plane->Connect(response.data_plane().ucx_address(), deadline));
  // FETCH units: (range, layers [j0, j1)). A plain read asks for each range's layers in one
  // FETCH. A layer-wise read of several ranges asks layer by layer across the ranges (the
  // node serves a connection's FETCHes in order, so layer 0 of every range comes first).
  struct Unit {
    size_t range;
    uint32_t begin;  // layer index within the range
    uint32_t end;
  };
  std::vector<Unit> units;
  if (on_layer == nullptr || ranges.size() == 1) {
    for (size_t i = 0; i < ranges.size(); ++i) {
      units.push_back(Unit{i, 0, ranges[i].layer_end - ranges[i].layer_begin});
    }
  } else {
    for (uint32_t l = 0; l < layout.num_layers; ++l) {
      for (size_t i = 0; i < ranges.size(); ++i) {
        if (l < ranges[i].layer_begin || l >= ranges[i].layer_end) continue;
        const uint32_t j = l - ranges[i].layer_begin;
        units.push_back(Unit{i, j, j + 1});
      }
    }
  }
  auto group = std::make_shared<TransferGroup>();
  size_t next_unit = 0;
  // Starts the units not started yet, in order, while FETCH slots are free. Waits for a slot
  // only when none of this call's FETCHes is in flight (else one of them ending frees one,
  // and the loop below comes back here).
  auto start_units = [&]() -> absl::Status {
    while (next_unit < units.size()) {
      const Unit& unit = units[next_unit];
      const PlannedRange& range = ranges[unit.range];
      const GrantView& grant = grants[unit.range];
      const uint64_t layer_bytes = uint64_t{range.num_pages} * chunk_bytes;
      std::vector<wire::ByteRange> byte_ranges;
      std::vector<absl::Span<uint8_t>> dests;
      byte_ranges.reserve(unit.end - unit.begin);
      dests.reserve(unit.end - unit.begin);
      for (uint32_t j = unit.begin; j < unit.end; ++j) {
        byte_ranges.push_back(
            wire::ByteRange{grant.layer_ranges[j].offset, grant.layer_ranges[j].length});
        dests.emplace_back(reinterpret_cast<uint8_t*>(range.layer_dest[j]), layer_bytes);
      }
      const std::byte* lowest = range.layer_dest[unit.begin];
      const std::byte* highest = range.layer_dest[unit.end - 1] + layer_bytes;
      const bool may_wait = group->pending_requests() == 0;
      absl::Status started =
          plane->StartFetch(peer, response.lease_id(), range.blob, std::move(byte_ranges),
                            std::move(dests), first_item[unit.range] + unit.begin, group,
                            RegionFor(lowest, static_cast<size_t>(highest - lowest)),
                            may_wait ? deadline : absl::InfinitePast());
      if (!may_wait && started.code() == absl::StatusCode::kDeadlineExceeded) break;
      if (!started.ok()) return started;
      ++next_unit;
    }
    return absl::OkStatus();
  };

  // Land, verify, call back — until every item is in, or something fails.
  uint32_t verified = 0;
  uint32_t next_layer = 0;
  std::vector<uint32_t> landed;
  // Hands on every layer that is complete, in order.
  auto deliver_layers = [&]() -> absl::Status {
    while (on_layer != nullptr && next_layer < layout.num_layers &&
           layer_waiting[next_layer] == 0) {
      STRATA_RETURN_IF_ERROR((*on_layer)(next_layer++));
    }
    return absl::OkStatus();
  };
  for (;;) {
    bool finished = false;
    landed.clear();
    absl::Status transfer = start_units();
    if (transfer.ok()) transfer = group->WaitForProgress(deadline, &landed, &finished);
    // What landed arrived whole even if something else failed: verify it and hand on each
    // completed layer before reporting a failure.
    absl::Status status;
    for (size_t k = 0; k < landed.size() && status.ok(); ++k) {
      const uint32_t item = landed[k];
      const size_t i = range_of(item);
      const PlannedRange& range = ranges[i];
      const uint32_t j = item - first_item[i];
      const uint32_t layer = range.layer_begin + j;
      status = VerifyLayerRun(
          absl::MakeConstSpan(range.layer_dest[j], uint64_t{range.num_pages} * chunk_bytes),
          chunk_bytes, grants[i].checksums.subspan(size_t{j} * range.num_pages, range.num_pages),
          range.blob, layer, range.first_page);
      if (!status.ok()) {
        checksum_failures_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      ++verified;
      --layer_waiting[layer];
      status = deliver_layers();
    }
    if (status.ok()) status = transfer;
    if (!status.ok()) {
      plane->Abandon(group);
      return status;
    }
    if (finished && next_unit == units.size()) break;
  }
  if (verified != total_items) {
    return absl::InternalError(absl::StrCat("the node ended the fetch after ", verified, " of ",
                                            total_items, " layer ranges"));
  }
  bytes_read_.fetch_add(group->landed_bytes(), std::memory_order_relaxed);
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
