// ClientCore's write path: Write (a two-phase put of one blob, in one data-plane round
// trip) and WriteBatch.
//
//   checksums  radix::ChunkChecksums over the caller's bytes (layer-major, one per chunk)
//   PUT        what BeginPut carried (namespace, parent or key, tokens, checksums): the node
//              validates, computes the key and reserves space, and answers PUT_RESULT
//              granted — or final when the key exists (nothing more is sent) or it refuses
//   PUT_DATA   the blob in pieces of options.put_message_bytes, each a rendezvous straight
//              from the caller's buffer: the first options.put_window_bytes with the PUT,
//              the rest on the grant
//   (node)     when every byte landed it verifies every chunk and commits (readers never see
//              a partial blob); PUT_RESULT final carries the key and the indexed pages. On
//              any failure the node aborts the put (a broken connection included); an
//              abandoned put is reclaimed after its TTL.
#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/lib/client_core.h"
#include "client/lib/device_context.h"
#include "client/lib/wire_types.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/chunk_checksum.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/transport/wire.h"

namespace strata::client_internal {

namespace wire = store::transport::wire;

namespace {

// A blob to write, checked, with its chunk checksums.
struct CheckedBlob {
  uint64_t bytes = 0;
  absl::Span<const std::byte> blob;
  std::vector<uint64_t> checksums;
};

// The blob's parent or start and tokens checked: its pages.
absl::StatusOr<uint32_t> CheckShape(const Namespace& ns, const std::optional<Parent>& parent,
                                    absl::Span<const TokenId> tokens, const SegmentStart* start) {
  const radix::KvLayout& layout = ns.layout();
  if (start != nullptr && (parent.has_value() || start->pages == 0)) {
    return absl::InvalidArgumentError(parent.has_value()
                                          ? "a write names a parent or a segment start, not both"
                                          : "start.pages: 0 (page 0 starts no segment)");
  }
  if (tokens.empty()) return absl::InvalidArgumentError("tokens: empty (a blob has >= 1 page)");
  STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens.size(), proto::kMaxTokensPerRequest));
  if (absl::Status s = radix::CheckPageAligned(tokens.size(), layout.page_tokens); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tokens: ", s.message()));
  }
  const uint32_t pages = radix::WholePages(tokens.size(), layout.page_tokens);
  STRATA_RETURN_IF_ERROR(proto::CheckCount("chunk_checksums", uint64_t{layout.num_layers} * pages,
                                           proto::kMaxChunksPerBlob));
  if (parent.has_value() && parent->key == BlobKey{}) {
    return absl::InvalidArgumentError("parent.key: missing (all zero)");
  }
  return pages;
}

absl::StatusOr<CheckedBlob> CheckBlob(const Namespace& ns, const std::optional<Parent>& parent,
                                      absl::Span<const TokenId> tokens,
                                      const MemoryDescriptor& source, const SegmentStart* start) {
  const radix::KvLayout& layout = ns.layout();
  STRATA_ASSIGN_OR_RETURN(const uint32_t pages, CheckShape(ns, parent, tokens, start));
  const uint64_t bytes = PagesBytes(layout, pages);
  STRATA_RETURN_IF_ERROR(CheckMemoryDescriptor(source, bytes, "source"));
  const auto blob = absl::MakeConstSpan(static_cast<const std::byte*>(source.ptr), bytes);
  STRATA_ASSIGN_OR_RETURN(std::vector<uint64_t> checksums,
                          radix::ChunkChecksums(blob, layout, pages));
  return CheckedBlob{bytes, blob, std::move(checksums)};
}

}  // namespace

absl::StatusOr<WriteResult> ClientCore::WriteText(const Namespace& ns,
                                                  const std::optional<Parent>& parent,
                                                  absl::Span<const TokenId> tokens,
                                                  const MemoryDescriptor& source,
                                                  absl::Time deadline, const SegmentStart* start) {
  if (source.kind == MemoryKind::kDevice) {
    return WriteFromDevice(source, [&](const MemoryDescriptor& staged) {
      return WriteText(ns, parent, tokens, staged, deadline, start);
    });
  }
  STRATA_ASSIGN_OR_RETURN(const CheckedBlob checked, CheckBlob(ns, parent, tokens, source, start));
  return WriteText(ns, parent, tokens, checked.checksums, deadline, start);
}

absl::StatusOr<WriteResult> ClientCore::WriteText(const Namespace& ns,
                                                  const std::optional<Parent>& parent,
                                                  absl::Span<const TokenId> tokens,
                                                  absl::Span<const uint64_t> chunk_checksums,
                                                  absl::Time deadline, const SegmentStart* start) {
  STRATA_ASSIGN_OR_RETURN(const uint32_t pages, CheckShape(ns, parent, tokens, start));
  if (chunk_checksums.size() != uint64_t{ns.layout().num_layers} * pages) {
    return absl::InvalidArgumentError(absl::StrCat("chunk_checksums: ", chunk_checksums.size(),
                                                   " for ", pages, " pages of ",
                                                   ns.layout().num_layers, " layers"));
  }
  v1::BeginPutRequest request;
  proto::ToProto(ns, request.mutable_ns());
  if (parent.has_value()) {
    v1::Parent* p = request.mutable_parent();
    proto::ToProto(parent->key, p->mutable_key());
    p->set_pages(parent->pages);
  }
  if (start != nullptr) {
    SegmentStartToProto(*start, request.mutable_segment_start());
  }
  proto::TokensToProto(tokens, request.mutable_tokens());
  request.set_bytes(PagesBytes(ns.layout(), pages));
  request.mutable_chunk_checksums()->Add(chunk_checksums.begin(), chunk_checksums.end());
  request.set_text_only(true);
  v1::BeginPutResponse response;
  // Safe to repeat: a TEXT put whose answer was lost finds its key existing.
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::BeginPut, request,
                                       &response, deadline, Retry::kUnavailable));
  STRATA_ASSIGN_OR_RETURN(const BlobKey key, proto::BlobKeyFromProto(response.key(), "key"));
  return WriteResult{key, response.exists(), response.indexed_pages()};
}

absl::StatusOr<WriteResult> ClientCore::Write(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              absl::Span<const TokenId> tokens,
                                              const MemoryDescriptor& source, absl::Time deadline,
                                              const SegmentStart* start) {
  if (source.kind == MemoryKind::kDevice) {
    // On the node's host the device copies the blob straight into the staging file; off it
    // the transport sends it from the device memory; else (or UNIMPLEMENTED) it is staged.
    // (Local checks and the device first: nothing is sent for a call refused here.)
    absl::StatusOr<WriteResult> direct =
        WriteDirectFromDevice(ns, parent, tokens, source, deadline, start);
    if (!absl::IsUnimplemented(direct.status())) return direct;
    return WriteFromDevice(source, [&](const MemoryDescriptor& staged) {
      return Write(ns, parent, tokens, staged, deadline, start);
    });
  }
  STRATA_ASSIGN_OR_RETURN(CheckedBlob checked, CheckBlob(ns, parent, tokens, source, start));
  return PutChecked(ns, parent, tokens, checked.blob, checked.checksums, deadline, start,
                    /*same_host=*/true);
}

absl::StatusOr<WriteResult> ClientCore::WriteDirectFromDevice(
    const Namespace& ns, const std::optional<Parent>& parent, absl::Span<const TokenId> tokens,
    const MemoryDescriptor& source, absl::Time deadline, const SegmentStart* start) {
  const radix::KvLayout& layout = ns.layout();
  STRATA_ASSIGN_OR_RETURN(const uint32_t pages, CheckShape(ns, parent, tokens, start));
  const uint64_t bytes = PagesBytes(layout, pages);
  STRATA_RETURN_IF_ERROR(CheckMemoryDescriptor(source, bytes, "source"));
  STRATA_ASSIGN_OR_RETURN(DeviceContext * context, DeviceFor(source.device));
  std::shared_ptr<SameHostChannel> local = SameHost(deadline);
  if (local != nullptr && bytes > local->staging_bytes()) local = nullptr;
  if (local == nullptr) {
    STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
    if (!options_.device_direct || (context->device().memory_kind() != gpu::MemoryKind::kHost &&
                                    !plane->accepts_cuda_memory())) {
      return absl::UnimplementedError("the transport cannot send from this device's memory");
    }
  }
  // The checksums, layer-major by page (radix::ChunkChecksums' order): the blob's chunks in
  // order, computed where the bytes are.
  std::vector<uint64_t> checksums(uint64_t{layout.num_layers} * pages);
  {
    absl::MutexLock lock(&context->mu());
    STRATA_RETURN_IF_ERROR(context->device().ChecksumChunks(
        source.ptr, layout.BytesPerLayerPage(), checksums.size(), radix::kPrefixHashSeed,
        checksums.data(), context->stream()));
  }
  const auto blob = absl::MakeConstSpan(static_cast<const std::byte*>(source.ptr), bytes);
  absl::StatusOr<WriteResult> written;
  if (local != nullptr) {
    absl::MutexLock lock(&context->mu());
    const SameHostChannel::DeviceTarget target{&context->device(), &context->stream()};
    written = PutChecked(ns, parent, tokens, blob, checksums, deadline, start, /*same_host=*/true,
                         &target);
  } else {
    written = PutChecked(ns, parent, tokens, blob, checksums, deadline, start, /*same_host=*/false);
  }
  if (!written.ok()) return written.status();
  device_writes_.fetch_add(1, std::memory_order_relaxed);
  device_writes_direct_.fetch_add(1, std::memory_order_relaxed);
  return written;
}

absl::StatusOr<WriteResult> ClientCore::PutChecked(
    const Namespace& ns, const std::optional<Parent>& parent, absl::Span<const TokenId> tokens,
    absl::Span<const std::byte> blob, const std::vector<uint64_t>& checksums, absl::Time deadline,
    const SegmentStart* start, bool same_host, const SameHostChannel::DeviceTarget* device) {
  const radix::KvLayout& layout = ns.layout();
  const uint64_t bytes = blob.size();

  const std::string ns_encoding = ns.CanonicalEncoding();
  wire::PutHeader header{.bytes = bytes,
                         .token_count = static_cast<uint32_t>(tokens.size()),
                         .ns_bytes = static_cast<uint32_t>(ns_encoding.size()),
                         .checksum_count = static_cast<uint32_t>(checksums.size())};
  wire::BlobKeyBits parent_key;
  wire::BlobKeyBits key;
  if (parent.has_value()) {
    header.has_parent = true;
    header.parent_pages = parent->pages;
    parent_key = {parent->key.hash.hi, parent->key.hash.lo};
  } else {
    // From page 0 (or a segment start) the key is known here; the node checks it (hash
    // drift is a bug).
    const radix::PrefixHash from = start != nullptr ? start->hash : radix::NamespaceHash(ns);
    const radix::PrefixHash hash = radix::PrefixHashAt(from, tokens, layout.page_tokens);
    header.has_key = true;
    key = {hash.hi, hash.lo};
  }
  wire::BlobKeyBits segment_hash;
  if (start != nullptr) {
    header.has_segment_start = true;
    header.segment_pages = start->pages;
    segment_hash = {start->hash.hi, start->hash.lo};
  }
  const std::vector<uint8_t> metadata = wire::EncodePutPayload(
      header,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns_encoding.data()), ns_encoding.size()),
      parent_key, key, tokens, checksums, segment_hash);
  const auto source_bytes =
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(blob.data()), blob.size());
  // A broken connection ends the node's side of the put (it aborts it): once more on a new
  // connection. A put whose result was lost after its commit finds its key existing.
  absl::StatusOr<DataPlane::PutOutcome> outcome = absl::UnavailableError("not sent");
  // On the node's host a blob that fits its staging file goes through the same-host
  // channel; one that broke leaves the put to UCX (a put it committed is found existing).
  if (std::shared_ptr<SameHostChannel> local = same_host ? SameHost(deadline) : nullptr;
      local != nullptr && bytes <= local->staging_bytes()) {
    outcome = local->Put(header, metadata, source_bytes, deadline, device);
    if (outcome.ok()) same_host_writes_.fetch_add(1, std::memory_order_relaxed);
    if (outcome.status().code() == absl::StatusCode::kUnavailable) DropSameHost(local);
  }
  if (device != nullptr && outcome.status().code() == absl::StatusCode::kUnavailable) {
    // The channel broke under a put of device memory: UCX may send it from there only if it
    // can read that memory; else the caller stages it (a put the channel committed is found
    // existing then).
    STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
    if (device->device->memory_kind() != gpu::MemoryKind::kHost && !plane->accepts_cuda_memory()) {
      return absl::UnimplementedError("same-host put of device memory failed; staging it");
    }
  }
  for (int attempt = 0; attempt < 2 && outcome.status().code() == absl::StatusCode::kUnavailable;
       ++attempt) {
    outcome = PutBlob(header, metadata, source_bytes, deadline);
  }
  if (!outcome.ok()) return outcome.status();
  if (outcome->exists) {
    writes_existing_.fetch_add(1, std::memory_order_relaxed);
    return WriteResult{outcome->key, true, 0};
  }
  writes_committed_.fetch_add(1, std::memory_order_relaxed);
  bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
  return WriteResult{outcome->key, false, outcome->indexed_pages};
}

absl::StatusOr<DataPlane::PutOutcome> ClientCore::PutBlob(const wire::PutHeader& header,
                                                          const std::vector<uint8_t>& metadata,
                                                          absl::Span<const uint8_t> bytes,
                                                          absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(DataPlane::PeerId peer, ConnectDataPlane(deadline));
  auto group = std::make_shared<TransferGroup>();
  auto outcome = std::make_shared<DataPlane::PutOutcome>();
  plane->StartPutBlob(peer, header, metadata, bytes, options_.put_message_bytes,
                      options_.put_window_bytes, group, RegionFor(bytes.data(), bytes.size()),
                      outcome);
  bool committed = false;
  std::vector<uint32_t> landed;
  for (;;) {
    bool finished = false;
    landed.clear();
    absl::Status status = group->WaitForProgress(deadline, &landed, &finished);
    committed = committed || !landed.empty();
    if (!status.ok()) {
      plane->Abandon(group);
      return status;
    }
    if (finished) break;
  }
  if (!committed) return absl::InternalError("the node ended the PUT without a result");
  return *outcome;
}

std::vector<absl::StatusOr<WriteResult>> ClientCore::WriteBatch(const Namespace& ns,
                                                                absl::Span<const WriteItem> items,
                                                                absl::Time deadline) {
  const size_t n = items.size();
  std::vector<absl::StatusOr<WriteResult>> results(n, absl::UnknownError("not run"));
  // Sequence pages before each item's blob ends (to continue it), where known.
  std::vector<std::optional<uint64_t>> end_page(n);
  std::vector<bool> done(n, false);
  absl::Mutex mu;
  size_t next = 0;  // items are started in order; an item waits for its parent item

  // Each worker takes the next item in order and runs it; an item whose parent item is not
  // done yet waits for it (parents come earlier, so the first unfinished item never waits).
  auto worker = [&]() {
    for (;;) {
      size_t i;
      std::optional<Parent> parent;
      {
        absl::MutexLock lock(&mu);
        if (next >= n) return;
        i = next++;
        const WriteItem& item = items[i];
        if (item.parent.has_value() && item.parent_item.has_value()) {
          results[i] = absl::InvalidArgumentError(
              absl::StrCat("items[", i, "]: set parent or parent_item, not both"));
          done[i] = true;
          continue;
        }
        parent = item.parent;
        if (item.parent_item.has_value()) {
          const size_t p = *item.parent_item;
          if (p >= i) {
            results[i] = absl::InvalidArgumentError(
                absl::StrCat("items[", i, "].parent_item: ", p, " is not an earlier item"));
            done[i] = true;
            continue;
          }
          auto parent_done = [&done, p]() { return static_cast<bool>(done[p]); };
          mu.Await(absl::Condition(&parent_done));
          if (!results[p].ok() || !end_page[p].has_value()) {
            results[i] = absl::FailedPreconditionError(
                absl::StrCat("items[", i, "]: parent item ", p,
                             " was not written: ", results[p].status().ToString()));
            done[i] = true;
            continue;
          }
          parent = Parent{results[p]->key, static_cast<uint32_t>(*end_page[p])};
        }
      }
      const WriteItem& item = items[i];
      absl::StatusOr<WriteResult> result = Write(ns, parent, item.tokens, item.source, deadline);
      absl::MutexLock lock(&mu);
      if (result.ok()) {
        end_page[i] =
            (parent.has_value() ? parent->pages : 0) + item.tokens.size() / ns.layout().page_tokens;
      }
      results[i] = std::move(result);
      done[i] = true;
    }
  };
  const size_t threads = std::min<size_t>(n, static_cast<size_t>(options_.async_threads));
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& helper : helpers) helper.join();
  return results;
}

}  // namespace strata::client_internal
