// ClusterBackend (cluster_backend.h).
#include "client/lib/cluster_backend.h"

#include <algorithm>
#include <future>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "strata/base/status_macros.h"

namespace strata::client_internal {
namespace {

// The first error of `statuses`, else OK.
absl::Status FirstError(std::vector<absl::Status> statuses) {
  for (absl::Status& s : statuses) {
    if (!s.ok()) return std::move(s);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBackend>> ClusterBackend::Connect(
    const ClientOptions& options) {
  ClusterClientOptions c;
  c.cluster_url = options.cluster;
  c.nodes = options.cluster_nodes;
  c.node_options = options;
  c.node_options.cluster.clear();
  c.node_options.cluster_nodes.clear();
  c.segment_pages = options.segment_pages;
  c.text_replicas = options.text_replicas;
  c.node_timeout = options.node_timeout;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> cluster, ClusterClient::Connect(c));
  if (options.wait_for_node) {
    const absl::Time deadline = absl::Now() + options.default_timeout;
    while (cluster->Nodes().empty() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    if (cluster->Nodes().empty()) {
      return absl::UnavailableError(absl::StrCat("cluster ", options.cluster,
                                                 ": no serving node within ",
                                                 absl::FormatDuration(options.default_timeout)));
    }
  }
  return std::unique_ptr<ClusterBackend>(
      new ClusterBackend(std::move(cluster), options.async_threads));
}

ClusterBackend::ClusterBackend(std::unique_ptr<ClusterClient> cluster, int async_threads)
    : cluster_(std::move(cluster)), executor_(async_threads) {}

void ClusterBackend::Remember(const BlobKey& key, Remembered entry) {
  absl::MutexLock lock(&mu_);
  auto [it, added] = remembered_.insert_or_assign(key, std::move(entry));
  if (!added) return;
  order_.push_back(key);
  while (order_.size() > kRememberedBlobs) {
    remembered_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<ClusterBackend::Remembered> ClusterBackend::Recall(const BlobKey& key) const {
  absl::MutexLock lock(&mu_);
  const auto it = remembered_.find(key);
  if (it == remembered_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::string> ClusterBackend::NodeOf(const BlobKey& key, const CallOptions& call) {
  if (std::optional<Remembered> r = Recall(key); r.has_value()) return r->node;
  return cluster_->Locate(key, call);
}

absl::StatusOr<MatchResult> ClusterBackend::Match(const Namespace& ns,
                                                  absl::Span<const TokenId> tokens,
                                                  LookupPhase phase, const CallOptions& call) {
  STRATA_ASSIGN_OR_RETURN(ClusterMatch found, cluster_->Match(ns, tokens, phase, call));
  if (found.match.segments.empty()) return std::move(found.match);
  // The tokens through the match's end: no entry is trusted past its segment's end.
  const size_t through = size_t{found.match.matched_pages} * ns.layout().page_tokens;
  auto sequence =
      std::make_shared<const std::vector<TokenId>>(tokens.begin(), tokens.begin() + through);
  for (size_t i = 0; i < found.match.segments.size(); ++i) {
    const Segment& seg = found.match.segments[i];
    Remember(seg.blob, Remembered{.node = found.owners[i],
                                  .move_to = found.move_to.empty() ? "" : found.move_to[i],
                                  .holders = found.holders.empty() ? std::vector<std::string>()
                                                                   : found.holders[i],
                                  .sequence = sequence,
                                  .through = seg.seq_page_begin + seg.page_count});
  }
  return std::move(found.match);
}

absl::StatusOr<ClusterMatch> ClusterBackend::MatchOf(const Namespace& ns,
                                                     absl::Span<const Segment> segments,
                                                     const CallOptions& call) {
  ClusterMatch out;
  out.match.segments.assign(segments.begin(), segments.end());
  out.match.matched_pages =
      segments.empty() ? 0 : segments.back().seq_page_begin + segments.back().page_count;
  std::optional<Remembered> last;  // the last segment's: the tokens a move writes
  bool moves = false;
  for (const Segment& seg : segments) {
    std::optional<Remembered> r = Recall(seg.blob);
    if (!r.has_value()) {
      STRATA_ASSIGN_OR_RETURN(std::string node, cluster_->Locate(seg.blob, call));
      r = Remembered{.node = std::move(node)};
    }
    out.owners.push_back(r->node);
    out.move_to.push_back(r->move_to);
    out.holders.push_back(r->holders);
    moves = moves || !r->move_to.empty();
    last = std::move(r);
  }
  // A move writes the sequence's tokens through the match's end. Only the last segment's
  // remembered sequence is known to be this sequence that far (its blob's key fixes every
  // token through `through`); another segment's may have been remembered from a sibling
  // branch since.
  const size_t needed = size_t{out.match.matched_pages} * ns.layout().page_tokens;
  if (moves && last.has_value() && last->sequence != nullptr &&
      last->through >= out.match.matched_pages && last->sequence->size() >= needed) {
    out.tokens.assign(last->sequence->begin(), last->sequence->begin() + needed);
  } else {
    for (std::string& to : out.move_to) to.clear();  // nothing to write a move with
  }
  return out;
}

absl::Status ClusterBackend::ReadPrefix(const Namespace& ns, absl::Span<const Segment> segments,
                                        uint32_t pages, const MemoryDescriptor& destination,
                                        absl::FunctionRef<absl::Status(uint32_t)>* on_layer,
                                        const CallOptions& call) {
  if (pages == 0) return absl::OkStatus();
  STRATA_ASSIGN_OR_RETURN(const ClusterMatch match, MatchOf(ns, segments, call));
  if (on_layer == nullptr) return cluster_->Read(ns, match, pages, destination, call);
  return cluster_->ReadLayers(ns, match, pages, destination, *on_layer, call);
}

absl::Status ClusterBackend::ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                                      uint32_t total_pages, const MemoryDescriptor& destination,
                                      const CallOptions& call) {
  if (segments.empty()) return absl::InvalidArgumentError("segments: empty");
  std::map<std::string, std::vector<Segment>> by_node;
  for (const Segment& seg : segments) {
    STRATA_ASSIGN_OR_RETURN(const std::string node, NodeOf(seg.blob, call));
    by_node[node].push_back(seg);
  }
  std::vector<std::future<absl::Status>> reads;
  for (const auto& [id, segs] : by_node) {
    reads.push_back(std::async(std::launch::async, [&, id = id, segs = &segs] {
      STRATA_ASSIGN_OR_RETURN(Client * node, cluster_->Node(id));
      return node->ReadInto(ns, *segs, total_pages, destination, call);
    }));
  }
  std::vector<absl::Status> statuses;
  for (auto& read : reads) statuses.push_back(read.get());
  return FirstError(std::move(statuses));
}

absl::Status ClusterBackend::ReadRanges(const Namespace& ns, absl::Span<const ReadRange> ranges,
                                        absl::Span<const MemoryDescriptor> destinations,
                                        const CallOptions& call) {
  if (ranges.empty() || ranges.size() != destinations.size()) {
    return absl::InvalidArgumentError(absl::StrCat("ranges and destinations: ", ranges.size(),
                                                   " and ", destinations.size(),
                                                   " (at least one of each, as many)"));
  }
  std::map<std::string, std::pair<std::vector<ReadRange>, std::vector<MemoryDescriptor>>> by_node;
  for (size_t i = 0; i < ranges.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(const std::string node, NodeOf(ranges[i].blob, call));
    by_node[node].first.push_back(ranges[i]);
    by_node[node].second.push_back(destinations[i]);
  }
  std::vector<std::future<absl::Status>> reads;
  for (const auto& [id, part] : by_node) {
    reads.push_back(std::async(std::launch::async, [&, id = id, part = &part] {
      STRATA_ASSIGN_OR_RETURN(Client * node, cluster_->Node(id));
      return node->Read(ns, part->first, part->second, call);
    }));
  }
  std::vector<absl::Status> statuses;
  for (auto& read : reads) statuses.push_back(read.get());
  return FirstError(std::move(statuses));
}

std::vector<absl::Status> ClusterBackend::ReadBatch(const Namespace& ns,
                                                    absl::Span<const ReadItem> items,
                                                    const CallOptions& call) {
  std::vector<absl::Status> out(items.size(), absl::OkStatus());
  std::map<std::string, std::vector<size_t>> by_node;
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<std::string> node = NodeOf(items[i].range.blob, call);
    if (node.ok()) {
      by_node[*node].push_back(i);
    } else {
      out[i] = node.status();
    }
  }
  std::vector<std::future<void>> reads;
  for (const auto& [id, indices] : by_node) {
    reads.push_back(std::async(std::launch::async, [&, id = id, indices = &indices] {
      std::vector<ReadItem> part;
      for (const size_t i : *indices) part.push_back(items[i]);
      absl::StatusOr<Client*> node = cluster_->Node(id);
      std::vector<absl::Status> got = node.ok()
                                          ? (*node)->ReadBatch(ns, part, call)
                                          : std::vector<absl::Status>(part.size(), node.status());
      for (size_t k = 0; k < indices->size(); ++k) out[(*indices)[k]] = std::move(got[k]);
    }));
  }
  for (auto& read : reads) read.get();
  return out;
}

absl::StatusOr<WriteResult> ClusterBackend::Write(const Namespace& ns,
                                                  const std::optional<Parent>& parent,
                                                  absl::Span<const TokenId> tokens,
                                                  const MemoryDescriptor& source,
                                                  const CallOptions& call) {
  const uint32_t page_tokens = ns.layout().page_tokens;
  if (tokens.empty() || tokens.size() % page_tokens != 0) {
    return absl::InvalidArgumentError(absl::StrCat("tokens: ", tokens.size(),
                                                   " is not a whole, non-zero number of ",
                                                   page_tokens, "-token pages"));
  }
  // The sequence from page 0: the tokens before the parent's page, then these.
  std::vector<TokenId> sequence;
  uint32_t first_page = 0;
  if (parent.has_value()) {
    if (parent->pages == 0) return absl::InvalidArgumentError("parent.pages: must be >= 1");
    const size_t before = size_t{parent->pages} * page_tokens;
    if (std::optional<Remembered> r = Recall(parent->key);
        r.has_value() && r->sequence != nullptr && r->through >= parent->pages &&
        r->sequence->size() >= before) {
      sequence.assign(r->sequence->begin(), r->sequence->begin() + before);
    } else {
      absl::StatusOr<std::vector<TokenId>> found = cluster_->TokensBefore(ns, *parent, call);
      if (!found.ok()) {
        return absl::IsNotFound(found.status())
                   ? absl::FailedPreconditionError(absl::StrCat("parent blob ", parent->key.ToHex(),
                                                                ": ", found.status().message()))
                   : found.status();
      }
      sequence = *std::move(found);
    }
    first_page = parent->pages;
  }
  sequence.insert(sequence.end(), tokens.begin(), tokens.end());
  STRATA_ASSIGN_OR_RETURN(const ClusterWriteResult written,
                          cluster_->Write(ns, sequence, first_page, source, parent, call));
  const auto shared = std::make_shared<const std::vector<TokenId>>(std::move(sequence));
  const auto pages = static_cast<uint32_t>(shared->size() / page_tokens);
  WriteResult out;
  out.existed = true;
  for (size_t i = 0; i < written.pieces.size(); ++i) {
    const uint32_t end = i + 1 < written.first_pages.size() ? written.first_pages[i + 1] : pages;
    Remember(written.pieces[i].key,
             Remembered{.node = written.owners[i], .sequence = shared, .through = end});
    out.key = written.pieces[i].key;
    out.existed = out.existed && written.pieces[i].existed;
    out.indexed_pages += written.pieces[i].indexed_pages;
  }
  return out;
}

std::vector<absl::StatusOr<WriteResult>> ClusterBackend::WriteBatch(
    const Namespace& ns, absl::Span<const WriteItem> items, const CallOptions& call) {
  const uint32_t page_tokens = ns.layout().page_tokens;
  std::vector<absl::StatusOr<WriteResult>> out;
  std::vector<uint32_t> end(items.size(), 0);  // each item's blob's end page
  for (size_t i = 0; i < items.size(); ++i) {
    const WriteItem& item = items[i];
    std::optional<Parent> parent = item.parent;
    if (item.parent_item.has_value()) {
      const size_t p = *item.parent_item;
      if (item.parent.has_value() || p >= i) {
        out.push_back(absl::InvalidArgumentError(
            absl::StrCat("items[", i, "]: ",
                         item.parent.has_value() ? "parent and parent_item both set"
                                                 : "parent_item must name an earlier item")));
        continue;
      }
      if (!out[p].ok()) {
        out.push_back(absl::FailedPreconditionError(
            absl::StrCat("items[", i, "]: its parent item ", p, " failed")));
        continue;
      }
      parent = Parent{out[p]->key, end[p]};
    }
    out.push_back(Write(ns, parent, item.tokens, item.source, call));
    end[i] = (parent.has_value() ? parent->pages : 0) +
             static_cast<uint32_t>(item.tokens.size() / page_tokens);
  }
  return out;
}

absl::StatusOr<BlobInfo> ClusterBackend::Stat(const BlobKey& key, bool include_tokens,
                                              const CallOptions& call) {
  STRATA_ASSIGN_OR_RETURN(const std::string id, NodeOf(key, call));
  STRATA_ASSIGN_OR_RETURN(Client * node, cluster_->Node(id));
  return node->Stat(key, include_tokens, call);
}

ClientStats ClusterBackend::stats() const {
  ClientStats sum;
  for (const ClusterNodeInfo& info : cluster_->Nodes()) {
    absl::StatusOr<Client*> node = cluster_->Node(info.id);
    if (!node.ok()) continue;
    const ClientStats one = (*node)->stats();
    sum.rpcs += one.rpcs;
    sum.rpc_retries += one.rpc_retries;
    sum.reads += one.reads;
    sum.bytes_read += one.bytes_read;
    sum.writes_committed += one.writes_committed;
    sum.writes_existing += one.writes_existing;
    sum.bytes_written += one.bytes_written;
    sum.checksum_failures += one.checksum_failures;
  }
  return sum;
}

}  // namespace strata::client_internal
