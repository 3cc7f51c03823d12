// ClusterClient (strata/cluster_client.h).
#include "strata/cluster_client.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/cluster.h"
#include "strata/proto/limits.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/cluster/etcd_client.h"
#include "strata/store/cluster/membership.h"
#include "strata/store/cluster/placement.h"

namespace strata {
// Not anonymous: ClusterClient::Impl (external linkage) holds a View.
namespace cluster_client_internal {

namespace cluster = store::cluster;

// The view placement works from: the nodes (by id, as Placement sorts them) and where each
// listens.
struct View {
  cluster::Placement placement{{}};
  absl::flat_hash_map<std::string, std::string> address;  // id -> gRPC address
};

// A Client's call deadline: the caller's, cut to `limit` from now.
CallOptions Within(const CallOptions& call, absl::Duration limit, absl::Duration fallback) {
  const absl::Time own =
      call.deadline == absl::InfiniteFuture() ? absl::Now() + fallback : call.deadline;
  return CallOptions{std::min(own, absl::Now() + limit)};
}

}  // namespace cluster_client_internal

using cluster_client_internal::View;
using cluster_client_internal::Within;
namespace cluster = store::cluster;

absl::Status ClusterClientOptions::Validate() const {
  if (cluster_url.empty() == nodes.empty()) {
    return absl::InvalidArgumentError(
        "cluster_url and nodes: give exactly one (etcd's URL, or the nodes' addresses)");
  }
  if (!cluster_url.empty()) STRATA_RETURN_IF_ERROR(ParseClusterUrl(cluster_url).status());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ClientOptions one = node_options;
    one.node = nodes[i];
    if (absl::Status s = one.Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("nodes[", i, "]: ", s.message()));
    }
  }
  if (absl::Status s = node_options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("node_options: ", s.message()));
  }
  if (segment_pages == 0) return absl::InvalidArgumentError("segment_pages: must be >= 1");
  if (node_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("node_timeout: must be > 0");
  }
  return absl::OkStatus();
}

class ClusterClient::Impl {
 public:
  explicit Impl(ClusterClientOptions options) : options_(std::move(options)) {}

  absl::Status Start() {
    if (!options_.nodes.empty()) {
      std::vector<cluster::PlacementNode> nodes;
      for (const std::string& address : options_.nodes) {
        nodes.push_back({.id = address, .weight = 1});
        static_view_.address[address] = address;
      }
      static_view_.placement = cluster::Placement(std::move(nodes));
      return absl::OkStatus();
    }
    STRATA_ASSIGN_OR_RETURN(const ClusterUrl url, ParseClusterUrl(options_.cluster_url));
    STRATA_ASSIGN_OR_RETURN(etcd_, cluster::EtcdClient::Create({.endpoints = url.etcd_endpoints}));
    STRATA_ASSIGN_OR_RETURN(membership_, cluster::MembershipView::Start(etcd_.get(), url.name));
    return absl::OkStatus();
  }

  const ClusterClientOptions& options() const { return options_; }

  View CurrentView() const {
    if (membership_ == nullptr) return static_view_;
    View view;
    const std::vector<cluster::NodeRecord> records = membership_->Nodes();
    view.placement = cluster::Placement::FromView(records);
    for (const cluster::NodeRecord& r : records) view.address[r.id] = r.grpc_address;
    return view;
  }

  // The node's Client (made on first use), or the reason there is none.
  absl::StatusOr<Client*> ClientFor(const View& view, const std::string& id) {
    const auto it = view.address.find(id);
    if (it == view.address.end())
      return absl::UnavailableError(absl::StrCat("node ", id, ": gone"));
    absl::MutexLock lock(&mu_);
    std::unique_ptr<Client>& client = clients_[it->second];
    if (client == nullptr) {
      ClientOptions one = options_.node_options;
      one.node = it->second;
      one.wait_for_node = false;  // a dead node must cost a deadline, not a Connect
      STRATA_ASSIGN_OR_RETURN(client, Client::Connect(one));
    }
    return client.get();
  }

  absl::StatusOr<ClusterMatch> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                     LookupPhase phase, const CallOptions& call) {
    // As one node's Match: a query too long for any node is the caller's error.
    STRATA_RETURN_IF_ERROR(proto::CheckCount("tokens", tokens.size(), proto::kMaxTokensPerRequest));
    const uint32_t page_tokens = ns.layout().page_tokens;
    const View view = CurrentView();
    if (view.placement.empty()) return absl::UnavailableError("the cluster has no serving node");
    const radix::PrefixHash h0 = radix::NamespaceHash(ns);
    const std::vector<radix::PrefixHash> hashes = radix::PrefixHashes(h0, tokens, page_tokens);
    const auto pages = static_cast<uint32_t>(hashes.size());
    const uint32_t s = options_.segment_pages;
    const std::vector<radix::PrefixHash> starts = cluster::SegmentStarts(h0, hashes, s);
    // Whether segment k's answer ends the prefix: it did not hit all the segment's pages.
    auto ends_prefix = [&](size_t k, const MatchResult& answer) {
      const uint32_t first = static_cast<uint32_t>(k) * s;
      return answer.matched_pages < std::min(pages - first, s) || answer.truncated;
    };
    const CallOptions node_call =
        Within(call, options_.node_timeout, options_.node_options.default_timeout);

    // Every owner at once, each with one MatchSegments call for all the segments it owns, in
    // page order; the node stops after the first that does not hit whole (the prefix ends
    // there). An owner's segments it was not asked about, or did not answer, stay
    // "not asked".
    struct Asked {
      std::string owner;
      absl::StatusOr<MatchResult> answer = absl::CancelledError("not asked");
    };
    std::vector<Asked> asked(starts.size());
    std::map<std::string, std::vector<size_t>> by_owner;
    for (size_t k = 0; k < starts.size(); ++k) {
      // Placed by h_{kS+1}, the hash through the segment's first page (see the header).
      asked[k].owner = view.placement.nodes()[view.placement.Owner(hashes[k * s])].id;
      by_owner[asked[k].owner].push_back(k);
    }
    std::vector<std::future<void>> owners;
    for (const auto& [id, segments] : by_owner) {
      owners.push_back(std::async(std::launch::async, [&, id = id, segs = &segments] {
        std::vector<SegmentQuery> queries;
        queries.reserve(segs->size());
        for (const size_t k : *segs) {
          const uint32_t first = static_cast<uint32_t>(k) * s;
          const uint32_t end = std::min(pages, first + s);
          SegmentQuery& q = queries.emplace_back();
          q.tokens = tokens.subspan(size_t{first} * page_tokens, size_t{end - first} * page_tokens);
          if (first > 0) q.start = SegmentStart{starts[k], first};
        }
        absl::StatusOr<Client*> client = ClientFor(view, id);
        if (!client.ok()) {
          asked[(*segs)[0]].answer = client.status();  // the prefix ends at its first
          return;
        }
        // kMaxSegmentQueries a call; a call answered short ends the owner's part.
        for (size_t done = 0; done < queries.size();) {
          const size_t n = std::min(queries.size() - done, proto::kMaxSegmentQueries);
          absl::StatusOr<std::vector<MatchResult>> answers =
              (*client)->MatchSegments(ns, absl::MakeConstSpan(queries).subspan(done, n), phase,
                                       /*stop_at_first_short=*/true, node_call);
          if (!answers.ok()) {
            asked[(*segs)[done]].answer = answers.status();
            return;
          }
          for (size_t i = 0; i < answers->size(); ++i) {
            asked[(*segs)[done + i]].answer = std::move((*answers)[i]);
          }
          if (answers->size() < n || ends_prefix((*segs)[done + n - 1], answers->back())) return;
          done += n;
        }
      }));
    }
    for (std::future<void>& owner : owners) owner.get();
    // What no other node would answer differently fails the lookup whole: the request itself
    // (too many tokens, a bad namespace), the caller's credentials, a layout mismatch.
    for (const Asked& a : asked) {
      switch (a.answer.status().code()) {
        case absl::StatusCode::kInvalidArgument:
        case absl::StatusCode::kUnauthenticated:
        case absl::StatusCode::kPermissionDenied:
        case absl::StatusCode::kFailedPrecondition:
          return a.answer.status();
        default:
          break;
      }
    }
    ClusterMatch out;
    out.segments_asked = static_cast<uint32_t>(starts.size());
    bool stopped = false;
    for (size_t k = 0; k < asked.size(); ++k) {
      absl::StatusOr<MatchResult>& answer = asked[k].answer;
      if (absl::IsCancelled(answer.status())) {  // its owner stopped before it: the prefix
        stopped = true;                          // ended at or before it
        continue;
      }
      if (!answer.ok() && !absl::IsNotFound(answer.status())) ++out.segments_unanswered;
      if (stopped || !answer.ok()) {
        stopped = true;
        continue;
      }
      const uint32_t first = static_cast<uint32_t>(k) * s;
      for (Segment seg : answer->segments) {
        seg.seq_page_begin += first;
        out.match.segments.push_back(std::move(seg));
        out.owners.push_back(asked[k].owner);
      }
      out.match.matched_pages = first + answer->matched_pages;
      out.match.truncated = out.match.truncated || answer->truncated;
      if (ends_prefix(k, *answer)) stopped = true;
    }
    return out;
  }

  absl::Status Read(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call) {
    if (pages == 0) return absl::OkStatus();
    if (match.owners.size() != match.match.segments.size()) {
      return absl::InvalidArgumentError("match: owners and segments differ in number");
    }
    if (pages > match.match.matched_pages) {
      return absl::InvalidArgumentError(
          absl::StrCat("pages: ", pages, " > the match's ", match.match.matched_pages));
    }
    // Each owner's segments inside [0, pages), cut at `pages`.
    std::map<std::string, std::vector<Segment>> by_owner;
    for (size_t i = 0; i < match.match.segments.size(); ++i) {
      Segment seg = match.match.segments[i];
      if (seg.seq_page_begin >= pages) break;
      seg.page_count = std::min(seg.page_count, pages - seg.seq_page_begin);
      if (seg.tier == Tier::kText) {
        return absl::NotFoundError(absl::StrCat(
            "sequence pages [", seg.seq_page_begin, ", ", seg.seq_page_begin + seg.page_count,
            ") are TEXT on node ", match.owners[i], ": read MatchResult::ReadablePages()"));
      }
      by_owner[match.owners[i]].push_back(seg);  // in page order, gaps between them
    }
    const View view = CurrentView();
    std::vector<std::future<absl::Status>> reads;
    for (auto& [owner, segments] : by_owner) {
      reads.push_back(std::async(std::launch::async, [&, id = owner, segs = &segments] {
        STRATA_ASSIGN_OR_RETURN(Client * client, ClientFor(view, id));
        return client->ReadInto(ns, *segs, pages, destination, call);
      }));
    }
    absl::Status first = absl::OkStatus();
    for (auto& read : reads) {
      absl::Status s = read.get();
      if (first.ok() && !s.ok()) first = std::move(s);
    }
    return first;
  }

  absl::StatusOr<ClusterWriteResult> Write(const Namespace& ns, absl::Span<const TokenId> tokens,
                                           uint32_t first_page, const MemoryDescriptor& source,
                                           const std::optional<Parent>& parent,
                                           const CallOptions& call) {
    const radix::KvLayout& layout = ns.layout();
    const uint32_t page_tokens = layout.page_tokens;
    if (tokens.size() % page_tokens != 0) {
      return absl::InvalidArgumentError("tokens: not a whole number of pages");
    }
    const auto pages = static_cast<uint32_t>(tokens.size() / page_tokens);
    if (first_page >= pages) {
      return absl::InvalidArgumentError(
          absl::StrCat("first_page: ", first_page, " >= the sequence's ", pages, " pages"));
    }
    STRATA_RETURN_IF_ERROR(
        CheckMemoryDescriptor(source, PagesBytes(layout, pages - first_page), "source"));
    if (source.kind != MemoryKind::kHost) {
      return absl::UnimplementedError("a cluster write takes host memory");
    }
    const View view = CurrentView();
    if (view.placement.empty()) return absl::UnavailableError("the cluster has no serving node");
    const radix::PrefixHash h0 = radix::NamespaceHash(ns);
    const std::vector<radix::PrefixHash> hashes = radix::PrefixHashes(h0, tokens, page_tokens);
    const uint32_t s = options_.segment_pages;

    // The pieces: [p, q) within one segment each.
    struct Piece {
      uint32_t first = 0, end = 0;
      std::string owner;
      std::vector<std::byte> copy;  // the piece's bytes when the source holds several
    };
    std::vector<Piece> pieces;
    for (uint32_t p = first_page; p < pages;) {
      const uint32_t segment_start = p / s * s;
      const uint32_t q = std::min(pages, segment_start + s);
      // Placed by h_{kS+1} (the hash through the segment's first page), see the header.
      pieces.push_back(
          {p, q, view.placement.nodes()[view.placement.Owner(hashes[segment_start])].id, {}});
      p = q;
    }
    const uint64_t chunk = layout.BytesPerLayerPage();
    const uint32_t total = pages - first_page;
    if (pieces.size() > 1) {
      const auto* base = static_cast<const std::byte*>(source.ptr);
      for (Piece& piece : pieces) {
        const uint32_t n = piece.end - piece.first;
        piece.copy.resize(PagesBytes(layout, n));
        for (uint32_t l = 0; l < layout.num_layers; ++l) {
          std::memcpy(piece.copy.data() + uint64_t{l} * n * chunk,
                      base + (uint64_t{l} * total + (piece.first - first_page)) * chunk, n * chunk);
        }
      }
    }
    // The first piece continues a blob inside its segment: which one, if not given.
    std::optional<Parent> first_parent;
    if (first_page % s != 0) {
      if (parent.has_value()) {
        first_parent = parent;
      } else {
        const uint32_t segment_start = first_page / s * s;
        STRATA_ASSIGN_OR_RETURN(Client * owner, ClientFor(view, pieces.front().owner));
        const absl::Span<const TokenId> before = tokens.subspan(
            size_t{segment_start} * page_tokens, size_t{first_page - segment_start} * page_tokens);
        const CallOptions node_call =
            Within(call, options_.node_timeout, options_.node_options.default_timeout);
        STRATA_ASSIGN_OR_RETURN(
            const MatchResult found,
            segment_start == 0
                ? owner->Match(ns, before, LookupPhase::kUnspecified, node_call)
                : owner->Match(ns, SegmentStart{hashes[segment_start - 1], segment_start}, before,
                               LookupPhase::kUnspecified, node_call));
        if (found.matched_pages < first_page - segment_start || found.segments.empty()) {
          return absl::FailedPreconditionError(
              absl::StrCat("pages [", segment_start + found.matched_pages, ", ", first_page,
                           ") before the write are not cached on node ", pieces.front().owner,
                           ": write from page ", segment_start + found.matched_pages));
        }
        first_parent = Parent{found.segments.back().blob, first_page};
      }
    }
    // Every owner at once, each writing its pieces one after another on a thread of its own
    // (a node's connection takes a bounded number of puts at a time: max_puts_per_peer).
    std::vector<absl::StatusOr<WriteResult>> results(pieces.size(),
                                                     absl::CancelledError("not written"));
    std::map<std::string, std::vector<size_t>> by_owner;
    for (size_t i = 0; i < pieces.size(); ++i) by_owner[pieces[i].owner].push_back(i);
    std::vector<std::future<void>> owners;
    for (const auto& [id, mine] : by_owner) {
      owners.push_back(std::async(std::launch::async, [&, id = id, mine = &mine] {
        absl::StatusOr<Client*> client = ClientFor(view, id);
        for (const size_t i : *mine) {
          const Piece& piece = pieces[i];
          if (!client.ok()) {
            results[i] = client.status();
            continue;
          }
          const absl::Span<const TokenId> own = tokens.subspan(
              size_t{piece.first} * page_tokens, size_t{piece.end - piece.first} * page_tokens);
          const MemoryDescriptor bytes =
              pieces.size() > 1 ? MemoryDescriptor::Host(piece.copy.data(), piece.copy.size())
                                : source;
          const uint32_t p = piece.first;
          if (p == 0) {
            results[i] = (*client)->Write(ns, std::nullopt, own, bytes, call);
          } else if (p % s == 0) {
            results[i] = (*client)->Write(ns, SegmentStart{hashes[p - 1], p}, own, bytes, call);
          } else {
            results[i] = (*client)->Write(ns, first_parent, own, bytes, call);
          }
        }
      }));
    }
    for (std::future<void>& owner : owners) owner.get();
    ClusterWriteResult out;
    absl::Status failed = absl::OkStatus();
    for (size_t i = 0; i < results.size(); ++i) {
      absl::StatusOr<WriteResult>& result = results[i];
      if (!result.ok()) {
        if (failed.ok()) {
          failed = absl::Status(
              result.status().code(),
              absl::StrCat("pages [", pieces[i].first, ", ", pieces[i].end, ") on node ",
                           pieces[i].owner, ": ", result.status().message()));
        }
        continue;
      }
      out.pieces.push_back(*result);
      out.owners.push_back(pieces[i].owner);
      out.first_pages.push_back(pieces[i].first);
    }
    if (!failed.ok()) return failed;
    return out;
  }

  std::string OwnerOf(const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t page) const {
    const View view = CurrentView();
    if (view.placement.empty()) return "";
    const uint32_t page_tokens = ns.layout().page_tokens;
    const uint32_t segment_start = page / options_.segment_pages * options_.segment_pages;
    if (tokens.size() < size_t{segment_start + 1} * page_tokens) return "";
    const radix::PrefixHash key =
        radix::PrefixHashAt(radix::NamespaceHash(ns),
                            tokens.first(size_t{segment_start + 1} * page_tokens), page_tokens);
    return view.placement.nodes()[view.placement.Owner(key)].id;
  }

  std::vector<ClusterNodeInfo> Nodes() const {
    const View view = CurrentView();
    std::vector<ClusterNodeInfo> out;
    for (const cluster::PlacementNode& node : view.placement.nodes()) {
      out.push_back({node.id, view.address.at(node.id), node.weight});
    }
    return out;
  }

 private:
  const ClusterClientOptions options_;
  View static_view_;
  std::unique_ptr<cluster::EtcdClient> etcd_;
  std::unique_ptr<cluster::MembershipView> membership_;  // after etcd_: destroyed first
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Client>> clients_ ABSL_GUARDED_BY(mu_);  // by address
};

absl::StatusOr<std::unique_ptr<ClusterClient>> ClusterClient::Connect(
    ClusterClientOptions options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  auto impl = std::make_unique<Impl>(std::move(options));
  STRATA_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<ClusterClient>(new ClusterClient(std::move(impl)));
}

ClusterClient::ClusterClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterClient::~ClusterClient() = default;

const ClusterClientOptions& ClusterClient::options() const { return impl_->options(); }

std::vector<ClusterNodeInfo> ClusterClient::Nodes() const { return impl_->Nodes(); }

std::string ClusterClient::OwnerOf(const Namespace& ns, absl::Span<const TokenId> tokens,
                                   uint32_t page) const {
  return impl_->OwnerOf(ns, tokens, page);
}

absl::StatusOr<ClusterMatch> ClusterClient::Match(const Namespace& ns,
                                                  absl::Span<const TokenId> tokens,
                                                  LookupPhase phase, const CallOptions& call) {
  return impl_->Match(ns, tokens, phase, call);
}

absl::Status ClusterClient::Read(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                                 const MemoryDescriptor& destination, const CallOptions& call) {
  return impl_->Read(ns, match, pages, destination, call);
}

absl::StatusOr<ClusterWriteResult> ClusterClient::Write(
    const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t first_page,
    const MemoryDescriptor& source, const std::optional<Parent>& parent, const CallOptions& call) {
  return impl_->Write(ns, tokens, first_page, source, parent, call);
}

}  // namespace strata
