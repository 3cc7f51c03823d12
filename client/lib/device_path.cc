// ClientCore's device-memory paths (docs/design/device-memory.md): reads into and writes
// from MemoryKind::kDevice memory through a gpu::Device.
//
//   same host   the node's arena, mapped read-only and registered with the device once, is
//               the DMA source: each leased item is copied by the device straight into the
//               destination, the source verified after the copies completed.
//   staged      the read is cut into batches of at most half the pinned pool; batch k lands
//               (and is verified) in one half while the device copies batch k-1 out of the
//               other. ReadLayers gets layer l once every copy of layer l completed.
//   write       the blob is copied from the device into the pinned pool and written from
//               there like host memory (its checksums computed from the staged bytes).
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

#include "client/lib/client_core.h"
#include "strata/base/status_macros.h"
#include "strata/proto/limits.h"

namespace strata::client_internal {

absl::StatusOr<DeviceContext*> ClientCore::DeviceFor(int ordinal) {
  absl::MutexLock lock(&devices_mu_);
  auto it = devices_.find(ordinal);
  if (it != devices_.end()) return it->second.get();
  absl::StatusOr<std::shared_ptr<gpu::Device>> device =
      options_.open_device
          ? options_.open_device(ordinal)
          : absl::StatusOr<std::shared_ptr<gpu::Device>>(gpu::OpenCudaDevice(ordinal));
  if (!device.ok()) {
    return absl::Status(device.status().code(),
                        absl::StrCat("device ", ordinal, ": ", device.status().message()));
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<DeviceContext> context,
                          DeviceContext::Open(*std::move(device), options_.device_staging_bytes));
  DeviceContext* raw = context.get();
  devices_.emplace(ordinal, std::move(context));
  return raw;
}

absl::Status ClientCore::ReadToDevice(const Namespace& ns, std::vector<PlannedRange> plan,
                                      const Client::LayerCallback* on_layer, absl::Time deadline) {
  const int ordinal = plan.front().device;
  for (const PlannedRange& r : plan) {
    if (r.device != ordinal) {
      return absl::InvalidArgumentError(
          "destinations: memory of different devices (or host and device) in one read; use "
          "one kind per call");
    }
  }
  STRATA_ASSIGN_OR_RETURN(DeviceContext * context, DeviceFor(ordinal));
  absl::MutexLock lock(&context->mu());
  std::shared_ptr<SameHostChannel> local = SameHost(deadline);
  // A device that cannot map the arena (no read-only registration, too large to pin) reads
  // through the staging pool instead; the channel remembers and does not try again.
  if (local != nullptr && local->RegisterWith(context->device()).ok()) {
    absl::Status status;
    bool delivered = false;
    {
      const std::vector<PlannedRange> cut =
          CutLargeRanges(plan, proto::kMaxChunksPerRead, ns.layout().BytesPerLayerPage());
      const auto runs = SplitIntoReads(cut, proto::kMaxReadRanges, proto::kMaxChunksPerRead);
      const SameHostChannel::DeviceTarget target{&context->device(), &context->stream(),
                                                 &device_bytes_from_hbm_};
      status = ReadSameHost(*local, ns, cut, runs, on_layer, deadline, &delivered, &target);
      if (status.ok()) device_reads_direct_.fetch_add(1, std::memory_order_relaxed);
    }
    if (status.code() != absl::StatusCode::kUnavailable || delivered) return status;
    DropSameHost(local);
  }
  // (a) Received by the transport straight into the device memory, verified there: where
  // the transport can write it (UCX with CUDA for a GPU; the host device's host memory).
  if (options_.device_direct) {
    STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
    if (context->device().memory_kind() == gpu::MemoryKind::kHost || plane->accepts_cuda_memory()) {
      const DirectTarget direct{&context->device(), &context->stream()};
      STRATA_RETURN_IF_ERROR(ReadPlanned(ns, std::move(plan), on_layer, deadline, &direct));
      device_reads_received_.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
  }
  // (b) Through the pinned staging pool.
  STRATA_RETURN_IF_ERROR(ReadStaged(*context, ns, std::move(plan), on_layer, deadline));
  device_reads_staged_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status ClientCore::ReadStaged(DeviceContext& context, const Namespace& ns,
                                    std::vector<PlannedRange> plan,
                                    const Client::LayerCallback* on_layer, absl::Time deadline) {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t chunk = layout.BytesPerLayerPage();
  const uint64_t half = context.half_bytes();
  if (chunk > half) {
    return absl::ResourceExhaustedError(
        absl::StrCat("device_staging_bytes: half of the pinned pool (", half,
                     " bytes) is smaller than one layer of one page (", chunk, " bytes)"));
  }
  // No item (one layer of a range) larger than a half: pieces of at most half / chunk pages
  // (CutLargeRanges divides the budget by each range's own layer count).
  uint32_t fewest_layers = layout.num_layers;
  for (const PlannedRange& r : plan) {
    fewest_layers = std::min(fewest_layers, std::max<uint32_t>(1, r.layer_end - r.layer_begin));
  }
  plan = CutLargeRanges(std::move(plan), (half / chunk) * fewest_layers, chunk);
  // Items in delivery order: layer by layer for ReadLayers, else range by range.
  struct Item {
    size_t range;
    uint32_t layer;
  };
  std::vector<Item> items;
  if (on_layer != nullptr) {
    for (uint32_t l = 0; l < layout.num_layers; ++l) {
      for (size_t i = 0; i < plan.size(); ++i) {
        if (l >= plan[i].layer_begin && l < plan[i].layer_end) items.push_back({i, l});
      }
    }
  } else {
    for (size_t i = 0; i < plan.size(); ++i) {
      for (uint32_t l = plan[i].layer_begin; l < plan[i].layer_end; ++l) items.push_back({i, l});
    }
  }
  gpu::Device& device = context.device();
  // However this ends, no copy of this call is left running: into the caller's memory
  // after it returned, or out of a half the next call receives into.
  absl::Cleanup drain = [&] { (void)device.Synchronize(context.stream()); };
  uint32_t next_layer = 0;  // the next layer to hand to on_layer
  // The layers all of whose items are in batches up to `last_item` (exclusive) go out,
  // in order, once those batches' copies completed.
  auto deliver_through = [&](size_t end_item) -> absl::Status {
    if (on_layer == nullptr) return absl::OkStatus();
    const uint32_t complete = end_item == items.size() ? layout.num_layers : items[end_item].layer;
    while (next_layer < complete) STRATA_RETURN_IF_ERROR((*on_layer)(next_layer++));
    return absl::OkStatus();
  };
  size_t begin = 0;
  size_t previous_end = 0;  // the items of the batch before this one end here
  for (int batch = 0; begin < items.size(); ++batch) {
    const int h = batch % 2;
    // The device's copies out of this half (two batches ago) must be done before it is
    // received into again.
    if (batch >= 2) STRATA_RETURN_IF_ERROR(context.event(h).Synchronize());
    std::vector<PlannedRange> staged;
    std::vector<std::pair<std::byte*, uint64_t>> at;  // (staging address, bytes) per item
    uint64_t used = 0;
    size_t end = begin;
    for (; end < items.size(); ++end) {
      const PlannedRange& r = plan[items[end].range];
      const uint64_t bytes = uint64_t{r.num_pages} * chunk;
      if (used + bytes > half) break;
      std::byte* slot = context.half(h) + used;
      staged.push_back(PlannedRange{
          r.blob, r.first_page, r.num_pages, items[end].layer, items[end].layer + 1, {slot}});
      at.emplace_back(slot, bytes);
      used += bytes;
    }
    if (end == begin) {
      return absl::InternalError("device staging: an item larger than half the pinned pool");
    }
    // Lands and verifies in the pinned half (the host path: UCX, or the same-host copy).
    STRATA_RETURN_IF_ERROR(ReadPlanned(ns, std::move(staged), nullptr, deadline));
    for (size_t k = begin; k < end; ++k) {
      const PlannedRange& r = plan[items[k].range];
      STRATA_RETURN_IF_ERROR(device.CopyToDeviceAsync(r.layer_dest[items[k].layer - r.layer_begin],
                                                      at[k - begin].first, at[k - begin].second,
                                                      context.stream()));
    }
    STRATA_RETURN_IF_ERROR(context.event(h).Record(context.stream()));
    // The batch before this one has had a whole receive to copy: its layers go out.
    if (batch >= 1 && on_layer != nullptr) {
      STRATA_RETURN_IF_ERROR(context.event(1 - h).Synchronize());
      STRATA_RETURN_IF_ERROR(deliver_through(previous_end));
    }
    previous_end = end;
    begin = end;
  }
  STRATA_RETURN_IF_ERROR(device.Synchronize(context.stream()));
  return deliver_through(items.size());
}

absl::StatusOr<WriteResult> ClientCore::WriteFromDevice(
    const MemoryDescriptor& source,
    absl::FunctionRef<absl::StatusOr<WriteResult>(const MemoryDescriptor& staged)> write) {
  STRATA_RETURN_IF_ERROR(CheckMemoryDescriptor(source, source.bytes, "source"));
  STRATA_ASSIGN_OR_RETURN(DeviceContext * context, DeviceFor(source.device));
  absl::MutexLock lock(&context->mu());
  if (source.bytes > context->staging_bytes()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("source: a write from device memory stages the whole blob in pinned host "
                     "memory; ",
                     source.bytes, " bytes are more than device_staging_bytes (",
                     context->staging_bytes(), ")"));
  }
  STRATA_RETURN_IF_ERROR(context->device().CopyToHostAsync(context->staging(), source.ptr,
                                                           source.bytes, context->stream()));
  STRATA_RETURN_IF_ERROR(context->device().Synchronize(context->stream()));
  STRATA_ASSIGN_OR_RETURN(WriteResult written,
                          write(MemoryDescriptor::Host(context->staging(), source.bytes)));
  device_writes_.fetch_add(1, std::memory_order_relaxed);
  return written;
}

}  // namespace strata::client_internal
