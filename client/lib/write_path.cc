// ClientCore's write path: Write (a two-phase put of one blob) and WriteBatch.
//
//   checksums  radix::ChunkChecksums over the caller's bytes (layer-major, one per chunk)
//   BeginPut   the node validates, computes the key, reserves space; `exists`: done, nothing
//              is sent
//   PUT_DATA   the blob in pieces of options.put_message_bytes, all in flight at once, each
//              a rendezvous straight from the caller's buffer; each answered by PUT_DONE
//   CommitPut  the node verifies every chunk and makes the blob visible
//   AbortPut   on any failure between BeginPut and a successful CommitPut
#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/lib/client_core.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/chunk_checksum.h"
#include "strata/radix/prefix_hash.h"

namespace strata::client_internal {
namespace {

// AbortPut after a failure is a courtesy (abandoned puts expire); it gets this long.
constexpr absl::Duration kAbortTimeout = absl::Seconds(2);

}  // namespace

absl::StatusOr<WriteResult> ClientCore::Write(const Namespace& ns,
                                              const std::optional<Parent>& parent,
                                              absl::Span<const TokenId> tokens,
                                              const MemoryDescriptor& source, absl::Time deadline) {
  const radix::KvLayout& layout = ns.layout();
  if (tokens.empty()) return absl::InvalidArgumentError("tokens: empty (a blob has >= 1 page)");
  STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens.size(), proto::kMaxTokensPerRequest));
  if (absl::Status s = radix::CheckPageAligned(tokens.size(), layout.page_tokens); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tokens: ", s.message()));
  }
  const uint32_t pages = radix::WholePages(tokens.size(), layout.page_tokens);
  STRATA_RETURN_IF_ERROR(proto::CheckCount("chunk_checksums", uint64_t{layout.num_layers} * pages,
                                           proto::kMaxChunksPerBlob));
  const uint64_t bytes = PagesBytes(layout, pages);
  STRATA_RETURN_IF_ERROR(CheckMemoryDescriptor(source, bytes, "source"));
  if (parent.has_value() && parent->key == BlobKey{}) {
    return absl::InvalidArgumentError("parent.key: missing (all zero)");
  }
  const auto blob = absl::MakeConstSpan(static_cast<const std::byte*>(source.ptr), bytes);
  STRATA_ASSIGN_OR_RETURN(std::vector<uint64_t> checksums,
                          radix::ChunkChecksums(blob, layout, pages));

  v1::BeginPutRequest begin;
  proto::ToProto(ns, begin.mutable_ns());
  if (parent.has_value()) {
    proto::ToProto(parent->key, begin.mutable_parent()->mutable_key());
    begin.mutable_parent()->set_pages(parent->pages);
  } else {
    // From page 0 the key is known here; the node checks it (hash drift is a bug).
    proto::ToProto(
        BlobKey{radix::PrefixHashAt(radix::NamespaceHash(ns), tokens, layout.page_tokens)},
        begin.mutable_key());
  }
  proto::TokensToProto(tokens, begin.mutable_tokens());
  begin.set_bytes(bytes);
  proto::ChecksumsToProto(checksums, begin.mutable_chunk_checksums());
  v1::BeginPutResponse begun;
  int attempts = 0;
  STRATA_RETURN_IF_ERROR(control_.Call(control_.store(), &v1::Store::Stub::BeginPut, begin, &begun,
                                       deadline, Retry::kUnavailable, &attempts));
  const BlobKey key = proto::BlobKeyOf(begun.key());
  if (begun.exists()) {
    if (attempts > 1) {
      // An earlier attempt may have begun this very put and lost its answer: then the key is
      // pending under a put nobody will complete. Only a committed blob counts.
      absl::StatusOr<BlobInfo> info = Stat(key, false, deadline);
      if (info.status().code() == absl::StatusCode::kNotFound) {
        return absl::UnavailableError(absl::StrCat(
            "BeginPut of ", key.ToHex(),
            " was retried and found a pending put that may be this call's own lost attempt; "
            "match again after the node's put TTL"));
      }
      if (!info.ok()) return info.status();
    }
    writes_existing_.fetch_add(1, std::memory_order_relaxed);
    return WriteResult{key, true, 0};
  }

  const uint64_t put_id = begun.put_id();
  absl::Status sent = SendPutData(
      begun.data_plane().ucx_address(), put_id,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(blob.data()), blob.size()), deadline);
  if (!sent.ok()) {
    (void)AbortPut(put_id);
    return sent;
  }

  v1::CommitPutRequest commit;
  commit.set_put_id(put_id);
  v1::CommitPutResponse committed;
  absl::Status status = control_.Call(control_.store(), &v1::Store::Stub::CommitPut, commit,
                                      &committed, deadline, Retry::kUnavailable, &attempts);
  if (!status.ok() && attempts > 1 && status.code() == absl::StatusCode::kNotFound) {
    // A retried commit finds no put when an earlier attempt committed it.
    absl::StatusOr<BlobInfo> info = Stat(key, false, deadline);
    if (info.ok()) {
      writes_committed_.fetch_add(1, std::memory_order_relaxed);
      bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
      return WriteResult{key, false, info->pages_indexed};
    }
  }
  if (!status.ok()) {
    // DATA_LOSS: the node aborted the put itself.
    if (status.code() != absl::StatusCode::kDataLoss) (void)AbortPut(put_id);
    return status;
  }
  writes_committed_.fetch_add(1, std::memory_order_relaxed);
  bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
  return WriteResult{key, false, committed.indexed_pages()};
}

absl::Status ClientCore::SendPutData(const std::string& address, uint64_t put_id,
                                     absl::Span<const uint8_t> bytes, absl::Time deadline) {
  STRATA_ASSIGN_OR_RETURN(DataPlane * plane, data_plane());
  STRATA_ASSIGN_OR_RETURN(DataPlane::PeerId peer, plane->Connect(address, deadline));
  std::shared_ptr<const DataPlane::MemoryRegion> region = RegionFor(bytes.data(), bytes.size());
  auto group = std::make_shared<TransferGroup>();
  const size_t piece = options_.put_message_bytes;
  const uint32_t pieces = static_cast<uint32_t>((bytes.size() + piece - 1) / piece);
  for (uint32_t k = 0; k < pieces; ++k) {
    const size_t offset = size_t{k} * piece;
    plane->StartPut(peer, put_id, offset,
                    bytes.subspan(offset, std::min(piece, bytes.size() - offset)), k, group,
                    region);
  }
  uint32_t taken = 0;
  std::vector<uint32_t> landed;
  for (;;) {
    bool finished = false;
    landed.clear();
    absl::Status status = group->WaitForProgress(deadline, &landed, &finished);
    taken += static_cast<uint32_t>(landed.size());
    if (!status.ok()) {
      plane->Abandon(group);
      return status;
    }
    if (finished) break;
  }
  if (taken != pieces) {
    return absl::InternalError(
        absl::StrCat("the node took ", taken, " of ", pieces, " PUT_DATA pieces"));
  }
  return absl::OkStatus();
}

absl::Status ClientCore::AbortPut(uint64_t put_id) {
  v1::AbortPutRequest request;
  request.set_put_id(put_id);
  v1::AbortPutResponse response;
  return control_.Call(control_.store(), &v1::Store::Stub::AbortPut, request, &response,
                       absl::Now() + kAbortTimeout, Retry::kNever);
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
