// ClusterClient (strata/cluster_client.h).
#include "strata/cluster_client.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "client/lib/async_executor.h"
#include "strata/base/status_macros.h"
#include "strata/client.h"
#include "strata/cluster.h"
#include "strata/gpu/device.h"
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
  cluster::Placement placement{{}};  // owners: the serving and joining nodes
  cluster::Placement settled{{}};    // before the joins and drains under way: serving, draining
  bool changing = false;             // a node is joining or draining
  absl::flat_hash_map<std::string, std::string> address;  // id -> gRPC address

  // The id of the node ranked `rank` (0: the owner) for placement key `h`, or "".
  static std::string Ranked(const cluster::Placement& p, const radix::PrefixHash& h, size_t rank) {
    const std::vector<int> ranked = p.Ranked(h, rank + 1);
    return ranked.size() > rank ? p.nodes()[ranked[rank]].id : "";
  }
  std::string Owner(const radix::PrefixHash& h) const {
    const int owner = placement.Owner(h);  // one pass; Ranked sorts
    return owner < 0 ? "" : placement.nodes()[owner].id;
  }
  // The owner before the changes under way, when it is another node; else "".
  std::string Previous(const radix::PrefixHash& h) const {
    if (!changing) return "";
    const int before = settled.Owner(h);
    if (before < 0) return "";
    const std::string& id = settled.nodes()[before].id;
    return id == Owner(h) ? "" : id;
  }
};

// A CallOptions deadline: the caller's, cut to `limit` from now.
CallOptions Within(const CallOptions& call, absl::Duration limit, absl::Duration fallback) {
  const absl::Time own =
      call.deadline == absl::InfiniteFuture() ? absl::Now() + fallback : call.deadline;
  return CallOptions{std::min(own, absl::Now() + limit)};
}

// A segment read from its previous owner, to be written to its owner.
struct Move {
  Namespace ns;
  std::string to;                // node id
  std::vector<TokenId> tokens;   // the sequence through the segment piece's end
  uint32_t first_page = 0;       // the piece's first page (a segment boundary or 0)
  std::vector<std::byte> bytes;  // its KV, radix::BlobLayout
};

}  // namespace cluster_client_internal

using cluster_client_internal::Move;
using cluster_client_internal::View;
using cluster_client_internal::Within;
namespace cluster = store::cluster;

absl::Status ClusterClientOptions::Validate() const {
  if (cluster_url.empty() == nodes.empty()) {
    return absl::InvalidArgumentError(
        "cluster_url and nodes: give exactly one (etcd's URL, or the nodes' addresses)");
  }
  if (!cluster_url.empty()) STRATA_RETURN_IF_ERROR(ParseClusterUrl(cluster_url).status());
  if (node_options.on_cluster()) {
    return absl::InvalidArgumentError("node_options: names a cluster (they are each node's)");
  }
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
  if (suspect_for < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("suspect_for: must be >= 0");
  }
  if (text_replicas == 0) {
    return absl::InvalidArgumentError("text_replicas: must be >= 1 (1: no replicas)");
  }
  if (node_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("node_timeout: must be > 0");
  }
  return absl::OkStatus();
}

class ClusterClient::Impl {
 public:
  explicit Impl(ClusterClientOptions options) : options_(std::move(options)) {}
  ~Impl() {
    {
      absl::MutexLock lock(&move_mu_);
      stopping_ = true;
    }
    if (mover_.joinable()) mover_.join();
  }

  absl::Status Start() {
    mover_ = std::thread([this] { MoveLoop(); });
    if (!options_.nodes.empty()) {
      std::vector<cluster::PlacementNode> nodes;
      for (const std::string& address : options_.nodes) {
        nodes.push_back({.id = address, .weight = 1});
        static_view_.address[address] = address;
      }
      static_view_.placement = cluster::Placement(nodes);
      static_view_.settled = cluster::Placement(std::move(nodes));
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
    using cluster::NodeState;
    view.placement =
        cluster::Placement::FromView(records, {NodeState::kServing, NodeState::kJoining});
    view.settled =
        cluster::Placement::FromView(records, {NodeState::kServing, NodeState::kDraining});
    for (const cluster::NodeRecord& r : records) {
      view.address[r.id] = r.grpc_address;
      view.changing = view.changing || r.state != NodeState::kServing;
    }
    return view;
  }

  // The node's Client (made on first use), or the reason there is none.
  // UNAVAILABLE while the node is suspected down (it failed a call with UNAVAILABLE or
  // DEADLINE_EXCEEDED less than suspect_for ago).
  absl::StatusOr<Client*> ClientFor(const View& view, const std::string& id) {
    const auto it = view.address.find(id);
    if (it == view.address.end())
      return absl::UnavailableError(absl::StrCat("node ", id, ": gone"));
    absl::MutexLock lock(&mu_);
    if (const auto s = suspect_until_.find(id);
        s != suspect_until_.end() && absl::Now() < s->second) {
      return absl::UnavailableError(
          absl::StrCat("node ", id, ": suspected down (it failed a call ", "less than ",
                       absl::FormatDuration(options_.suspect_for), " ago)"));
    }
    std::unique_ptr<Client>& client = clients_[it->second];
    if (client == nullptr) {
      ClientOptions one = options_.node_options;
      one.node = it->second;
      one.cluster.clear();  // each node's own client
      one.cluster_nodes.clear();
      one.wait_for_node = false;  // a dead node must cost a deadline, not a Connect
      // A data-plane connection to a dead node fails within node_timeout, not the default 5 s.
      one.connect_timeout = std::min(one.connect_timeout, options_.node_timeout);
      STRATA_ASSIGN_OR_RETURN(client, Client::Connect(one));
    }
    return client.get();
  }

  // A call to node `id` failed with `status`: a node that could not be reached (UNAVAILABLE,
  // not its own refusal) is skipped (its segments go to the next node at once) for
  // suspect_for.
  void Suspect(const std::string& id, const absl::Status& status) {
    if (options_.suspect_for <= absl::ZeroDuration()) return;
    // Unreachable, not slow: a node past node_timeout under load is still up (a partitioned
    // one costs its deadline per call instead).
    if (!absl::IsUnavailable(status)) return;
    // Not the node's own refusals (a draining node refuses puts and still serves reads).
    if (absl::StrContains(status.message(), "suspected down") ||
        absl::StrContains(status.message(), "draining")) {
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      suspect_until_[id] = absl::Now() + options_.suspect_for;
    }
    absl::MutexLock lock(&stats_mu_);
    ++stats_.suspicions;
  }

  // One lookup's segments as asked of nodes in one role (owner, previous owner, fallback):
  // per segment k, the answer of the node asked (or why there is none).
  struct Round {
    std::vector<std::string> node;  // node[k]: asked of this node; "" not asked
    std::vector<absl::StatusOr<MatchResult>> answer;
    absl::flat_hash_map<std::string, absl::Status> failed;  // nodes whose call failed
  };

  // Asks every node of `round` (round.node filled) for its segments at once, one
  // MatchSegments call per kMaxSegmentQueries; with `stop_at_first_short` a node's part ends
  // at its first segment that does not hit whole.
  void Ask(const View& view, const Namespace& ns, absl::Span<const TokenId> tokens,
           const std::vector<radix::PrefixHash>& starts, uint32_t pages, LookupPhase phase,
           bool stop_at_first_short, const CallOptions& node_call, Round& round) {
    const uint32_t page_tokens = ns.layout().page_tokens;
    const uint32_t s = options_.segment_pages;
    round.answer.assign(round.node.size(), absl::CancelledError("not asked"));
    std::map<std::string, std::vector<size_t>> by_node;
    for (size_t k = 0; k < round.node.size(); ++k) {
      if (!round.node[k].empty()) by_node[round.node[k]].push_back(k);
    }
    absl::Mutex failed_mu;
    std::vector<std::future<void>> calls;
    for (const auto& [id, segments] : by_node) {
      calls.push_back(std::async(std::launch::async, [&, id = id, segs = &segments] {
        auto fail = [&](absl::Status status) {
          Suspect(id, status);
          absl::MutexLock lock(&failed_mu);
          round.failed[id] = std::move(status);
        };
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
        if (!client.ok()) return fail(client.status());
        for (size_t done = 0; done < queries.size();) {
          const size_t n = std::min(queries.size() - done, proto::kMaxSegmentQueries);
          absl::StatusOr<std::vector<MatchResult>> answers =
              (*client)->MatchSegments(ns, absl::MakeConstSpan(queries).subspan(done, n), phase,
                                       stop_at_first_short, node_call);
          if (!answers.ok()) {
            if (absl::IsNotFound(answers.status())) {  // a namespace it never saw: misses
              for (size_t i = done; i < segs->size(); ++i)
                round.answer[(*segs)[i]] = answers.status();
              return;
            }
            return fail(answers.status());
          }
          for (size_t i = 0; i < answers->size(); ++i) {
            round.answer[(*segs)[done + i]] = std::move((*answers)[i]);
          }
          if (answers->size() < n) return;
          done += n;
        }
      }));
    }
    for (std::future<void>& call : calls) call.get();
    for (size_t k = 0; k < round.node.size(); ++k) {
      if (const auto it = round.failed.find(round.node[k]); it != round.failed.end()) {
        round.answer[k] = it->second;
      }
    }
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
    const size_t n = starts.size();
    // Whether an answer for segment k hits all the segment's pages.
    auto whole = [&](size_t k, const absl::StatusOr<MatchResult>& answer) {
      const uint32_t first = static_cast<uint32_t>(k) * s;
      return answer.ok() && answer->matched_pages >= std::min(pages - first, s) &&
             !answer->truncated;
    };
    auto matched = [](const absl::StatusOr<MatchResult>& answer) {
      return answer.ok() ? answer->matched_pages : 0u;
    };
    auto readable = [](const absl::StatusOr<MatchResult>& answer) {
      return answer.ok() ? answer->ReadablePages() : 0u;
    };
    const CallOptions node_call =
        Within(call, options_.node_timeout, options_.node_options.default_timeout);

    // Round one: every owner, and every previous owner of a segment whose owner changed,
    // at once. Placed by h_{kS+1}, the hash through the segment's first page (see the
    // header). While nodes join or drain an owner may miss a segment that its previous owner
    // has, so no node's part stops at its first miss then.
    Round owners, previous;
    owners.node.resize(n);
    previous.node.resize(n);
    for (size_t k = 0; k < n; ++k) {
      owners.node[k] = view.Owner(hashes[k * s]);
      previous.node[k] = view.Previous(hashes[k * s]);
    }
    std::future<void> asked_previous;
    if (view.changing) {
      asked_previous = std::async(std::launch::async, [&] {
        Ask(view, ns, tokens, starts, pages, phase, /*stop_at_first_short=*/true, node_call,
            previous);
      });
    }
    Ask(view, ns, tokens, starts, pages, phase, /*stop_at_first_short=*/!view.changing, node_call,
        owners);
    if (asked_previous.valid()) asked_previous.get();
    // What no other node would answer differently fails the lookup whole: the request itself
    // (too many tokens, a bad namespace), the caller's credentials, a layout mismatch.
    for (const Round* round : {&owners, &previous}) {
      for (const auto& [id, status] : round->failed) {
        switch (status.code()) {
          case absl::StatusCode::kInvalidArgument:
          case absl::StatusCode::kUnauthenticated:
          case absl::StatusCode::kPermissionDenied:
          case absl::StatusCode::kFailedPrecondition:
            return status;
          default:
            break;
        }
      }
    }
    // Each segment's answer: the owner's when its KV is whole, else the previous owner's
    // when it has more KV, or as much and more pages (TEXT) — a joiner may hold a segment's
    // text (TextRepairer) while its KV is still at the previous owner. The segment then
    // moves to its owner after a read, if the owner answered.
    std::vector<absl::StatusOr<MatchResult>*> answer(n);
    std::vector<std::string> node(n), move_to(n);
    ClusterMatch out;
    out.segments_asked = static_cast<uint32_t>(n);
    for (size_t k = 0; k < n; ++k) {
      answer[k] = &owners.answer[k];
      node[k] = owners.node[k];
      if (owners.failed.contains(node[k])) ++out.segments_unanswered;
      if (previous.answer.empty() || previous.node[k].empty()) continue;  // not asked
      const uint32_t owner_kv = readable(owners.answer[k]);
      const uint32_t previous_kv = readable(previous.answer[k]);
      const bool owner_whole =
          whole(k, owners.answer[k]) && owner_kv >= owners.answer[k]->matched_pages;
      if (!owner_whole &&
          (previous_kv > owner_kv ||
           (previous_kv == owner_kv && matched(previous.answer[k]) > matched(owners.answer[k])))) {
        answer[k] = &previous.answer[k];
        node[k] = previous.node[k];
        if (!owners.failed.contains(owners.node[k])) move_to[k] = owners.node[k];
        ++out.segments_from_previous;
      }
    }
    // Round two, only when the prefix ends at a segment whose owner failed (dead, cut off,
    // past node_timeout): from there on, every such segment at the next node of its ranking
    // (its text replica; the owner once the dead node's lease is gone).
    size_t end = 0;
    while (end < n && whole(end, *answer[end])) ++end;
    Round fallback;
    fallback.node.resize(n);
    bool second = false;
    for (size_t k = end; k < n && end < n && owners.failed.contains(owners.node[end]); ++k) {
      if (node[k] != owners.node[k] || !owners.failed.contains(node[k])) continue;
      std::string next = View::Ranked(view.placement, hashes[k * s], 1);
      if (next.empty() || owners.failed.contains(next)) continue;
      fallback.node[k] = std::move(next);
      second = true;
    }
    if (second) {
      const CallOptions second_call =
          Within(call, options_.node_timeout, options_.node_options.default_timeout);
      Ask(view, ns, tokens, starts, pages, phase, /*stop_at_first_short=*/true, second_call,
          fallback);
      for (size_t k = 0; k < n; ++k) {
        if (fallback.node[k].empty() || !fallback.answer[k].ok()) continue;
        answer[k] = &fallback.answer[k];
        node[k] = fallback.node[k];
        ++out.segments_from_fallback;
      }
    }
    {
      absl::MutexLock lock(&stats_mu_);
      stats_.segments_from_previous += out.segments_from_previous;
      stats_.segments_from_fallback += out.segments_from_fallback;
    }
    bool moves = false;
    for (size_t k = 0; k < n; ++k) {
      const absl::StatusOr<MatchResult>& a = *answer[k];
      if (!a.ok()) break;
      const uint32_t first = static_cast<uint32_t>(k) * s;
      for (Segment seg : a->segments) {
        seg.seq_page_begin += first;
        std::vector<std::string> holders;
        if (seg.replicas >= 2 && node[k] == owners.node[k] && seg.tier != Tier::kText) {
          const std::vector<int> ranked = view.placement.Ranked(hashes[k * s], seg.replicas);
          for (const int r : ranked) holders.push_back(view.placement.nodes()[r].id);
          if (holders.empty() || holders.front() != node[k]) holders.clear();  // view moved
        }
        out.match.segments.push_back(std::move(seg));
        out.owners.push_back(node[k]);
        out.move_to.push_back(move_to[k]);
        out.holders.push_back(std::move(holders));
        moves = moves || !move_to[k].empty();
      }
      out.match.matched_pages = first + a->matched_pages;
      out.match.truncated = out.match.truncated || a->truncated;
      if (!whole(k, a)) break;
    }
    if (moves) {
      out.tokens.assign(tokens.begin(),
                        tokens.begin() + size_t{out.match.matched_pages} * page_tokens);
    }
    return out;
  }

  // The segments of `match` inside [0, pages), each cut at `pages`, with its index; the
  // match checked. INVALID_ARGUMENT a malformed match or pages past it; NOT_FOUND a TEXT
  // segment inside.
  using ToRead = std::vector<std::pair<size_t, Segment>>;
  static absl::StatusOr<ToRead> SegmentsToRead(const ClusterMatch& match, uint32_t pages) {
    const size_t count = match.match.segments.size();
    if (match.owners.size() != count || (!match.move_to.empty() && match.move_to.size() != count) ||
        (!match.holders.empty() && match.holders.size() != count)) {
      return absl::InvalidArgumentError(
          "match: owners, move_to, holders and segments differ in number");
    }
    if (pages > match.match.matched_pages) {
      return absl::InvalidArgumentError(
          absl::StrCat("pages: ", pages, " > the match's ", match.match.matched_pages));
    }
    ToRead out;
    for (size_t i = 0; i < count; ++i) {
      Segment seg = match.match.segments[i];
      if (seg.seq_page_begin >= pages) break;
      seg.page_count = std::min(seg.page_count, pages - seg.seq_page_begin);
      if (seg.tier == Tier::kText) {
        return absl::NotFoundError(absl::StrCat(
            "sequence pages [", seg.seq_page_begin, ", ", seg.seq_page_begin + seg.page_count,
            ") are TEXT on node ", match.owners[i], ": read MatchResult::ReadablePages()"));
      }
      out.emplace_back(i, std::move(seg));
    }
    return out;
  }

  absl::Status Read(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                    const MemoryDescriptor& destination, const CallOptions& call) {
    if (pages == 0) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(ToRead to_read, SegmentsToRead(match, pages));
    // Each node's segments: the owner's, or for a hot segment one of its holders in turn.
    std::map<std::string, std::vector<Segment>> by_node;
    std::map<std::string, std::vector<size_t>> index_of;  // by node: the segments' indices
    uint64_t from_replicas = 0;
    for (auto& [i, seg] : to_read) {
      std::string node = match.owners[i];
      if (!match.holders.empty() && match.holders[i].size() > 1) {
        const std::vector<std::string>& holders = match.holders[i];
        node = holders[next_holder_.fetch_add(1, std::memory_order_relaxed) % holders.size()];
        from_replicas += node != match.owners[i];
      }
      by_node[node].push_back(seg);  // in page order, gaps between them
      index_of[node].push_back(i);
    }
    const View view = CurrentView();
    auto read_all = [&](const std::map<std::string, std::vector<Segment>>& plan) {
      std::vector<std::pair<std::string, std::future<absl::Status>>> reads;
      for (const auto& [id, segments] : plan) {
        reads.emplace_back(id, std::async(std::launch::async, [&, id = id, segs = &segments] {
                             STRATA_ASSIGN_OR_RETURN(Client * client, ClientFor(view, id));
                             return client->ReadInto(ns, *segs, pages, destination, call);
                           }));
      }
      std::map<std::string, absl::Status> status;
      for (auto& [id, read] : reads) {
        status[id] = read.get();
        Suspect(id, status[id]);
      }
      return status;
    };
    const std::map<std::string, absl::Status> status = read_all(by_node);
    // What failed: a node's own segments fail the read; a hot replica's (it evicted its
    // copy, or went away) are read again from their owners.
    absl::Status first = absl::OkStatus();
    std::map<std::string, std::vector<Segment>> again;
    uint64_t replica_failures = 0;
    for (const auto& [id, s] : status) {
      if (s.ok()) continue;
      for (const size_t i : index_of[id]) {
        if (match.owners[i] == id) {
          if (first.ok()) first = s;
          continue;
        }
        Segment seg = match.match.segments[i];
        seg.page_count = std::min(seg.page_count, pages - seg.seq_page_begin);
        again[match.owners[i]].push_back(seg);
        ++replica_failures;
      }
    }
    if (first.ok() && !again.empty()) {
      for (auto& [id, segs] : again) {
        std::sort(segs.begin(), segs.end(), [](const Segment& a, const Segment& b) {
          return a.seq_page_begin < b.seq_page_begin;
        });
      }
      for (const auto& [id, s] : read_all(again)) {
        if (!s.ok() && first.ok()) first = s;
      }
    }
    {
      absl::MutexLock lock(&stats_mu_);
      stats_.replica_reads += from_replicas;
      stats_.replica_read_failures += replica_failures;
    }
    if (first.ok()) QueueMoves(ns, match, pages, destination);
    return first;
  }

  absl::Status ReadLayers(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                          const MemoryDescriptor& destination,
                          absl::FunctionRef<absl::Status(uint32_t)> on_layer,
                          const CallOptions& call) {
    if (pages == 0) return absl::OkStatus();
    STRATA_ASSIGN_OR_RETURN(ToRead to_read, SegmentsToRead(match, pages));
    std::map<std::string, std::vector<Segment>> by_node;
    for (auto& [i, seg] : to_read) by_node[match.owners[i]].push_back(std::move(seg));
    // Each node's layers counted as they land; the caller's thread hands layer l on once
    // every node has it, in order.
    const uint32_t layers = ns.layout().num_layers;
    absl::Mutex mu;
    std::vector<size_t> landed(layers, 0);
    size_t finished = 0;
    absl::Status failed = absl::OkStatus();
    bool stop = false;
    std::vector<std::future<void>> reads;
    for (const auto& [id, segments] : by_node) {
      reads.push_back(std::async(std::launch::async, [&, id = id, segs = &segments] {
        auto count_layer = [&](uint32_t layer) -> absl::Status {
          absl::MutexLock lock(&mu);
          if (stop) return absl::CancelledError("the read was stopped");
          ++landed[layer];
          return absl::OkStatus();
        };
        absl::StatusOr<Client*> client = ClientFor(CurrentView(), id);
        absl::Status s = client.status();
        if (s.ok()) s = (*client)->ReadIntoLayers(ns, *segs, pages, destination, count_layer, call);
        Suspect(id, s);
        absl::MutexLock lock(&mu);
        ++finished;
        if (!s.ok() && failed.ok()) failed = s;
      }));
    }
    const size_t nodes = by_node.size();
    absl::Status result = absl::OkStatus();
    for (uint32_t l = 0; l < layers && result.ok(); ++l) {
      {
        absl::MutexLock lock(&mu);
        auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
          return landed[l] == nodes || !failed.ok() || finished == nodes;
        };
        mu.Await(absl::Condition(&ready));
        if (landed[l] != nodes) {
          result = failed.ok() ? absl::InternalError("a node ended its read short") : failed;
          stop = true;
          break;
        }
      }
      result = on_layer(l);
      if (!result.ok()) {
        absl::MutexLock lock(&mu);
        stop = true;
      }
    }
    for (std::future<void>& read : reads) read.get();
    if (result.ok() && !failed.ok()) result = failed;
    return result;
  }

  // The segments of `match` read from a previous owner within [0, pages), each as one piece
  // from its segment's first page, queued for the mover (while move_queue_bytes allows).
  void QueueMoves(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                  const MemoryDescriptor& destination) {
    if (match.move_to.empty() || destination.kind != MemoryKind::kHost) return;
    const radix::KvLayout& layout = ns.layout();
    const uint32_t s = options_.segment_pages;
    const uint64_t chunk = layout.BytesPerLayerPage();
    const auto* base = static_cast<const std::byte*>(destination.ptr);
    for (size_t i = 0; i < match.move_to.size();) {
      const uint32_t k = match.match.segments[i].seq_page_begin / s;
      size_t j = i;
      uint32_t end = 0;
      for (; j < match.move_to.size() && match.match.segments[j].seq_page_begin / s == k; ++j) {
        const Segment& seg = match.match.segments[j];
        end = std::max(end, std::min(pages, seg.seq_page_begin + seg.page_count));
      }
      const std::string to = match.move_to[i];
      const uint32_t first = k * s;
      i = j;
      if (to.empty() || end <= first || match.tokens.size() < size_t{end} * layout.page_tokens) {
        continue;
      }
      const uint32_t n = end - first;
      const uint64_t bytes = PagesBytes(layout, n);
      {
        absl::MutexLock lock(&move_mu_);
        if (queued_bytes_ + bytes > options_.move_queue_bytes) {
          absl::MutexLock stats(&stats_mu_);
          ++stats_.moves_dropped;
          continue;
        }
        queued_bytes_ += bytes;
      }
      Move move{ns, to,
                std::vector<TokenId>(match.tokens.begin(),
                                     match.tokens.begin() + size_t{end} * layout.page_tokens),
                first, std::vector<std::byte>(bytes)};
      for (uint32_t l = 0; l < layout.num_layers; ++l) {
        std::memcpy(move.bytes.data() + uint64_t{l} * n * chunk,
                    base + (uint64_t{l} * pages + first) * chunk, n * chunk);
      }
      absl::MutexLock lock(&move_mu_);
      moves_.push_back(std::move(move));
      absl::MutexLock stats(&stats_mu_);
      ++stats_.moves_queued;
    }
  }

  void MoveLoop() {
    for (;;) {
      std::optional<Move> next;
      {
        absl::MutexLock lock(&move_mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) {
          return stopping_ || !moves_.empty();
        };
        move_mu_.Await(absl::Condition(&ready));
        if (stopping_) return;
        next.emplace(std::move(moves_.front()));
        moves_.pop_front();
        moving_ = true;
      }
      Move& move = *next;
      const View view = CurrentView();
      const radix::KvLayout& layout = move.ns.layout();
      const uint32_t page_tokens = layout.page_tokens;
      absl::StatusOr<WriteResult> written = absl::UnavailableError("the owner is gone");
      if (absl::StatusOr<Client*> client = ClientFor(view, move.to); client.ok()) {
        const absl::Span<const TokenId> all = move.tokens;
        const absl::Span<const TokenId> own = all.subspan(size_t{move.first_page} * page_tokens);
        const MemoryDescriptor bytes = MemoryDescriptor::Host(move.bytes.data(), move.bytes.size());
        if (move.first_page == 0) {
          written = (*client)->Write(move.ns, std::nullopt, own, bytes);
        } else {
          const radix::PrefixHash start =
              radix::PrefixHashAt(radix::NamespaceHash(move.ns),
                                  all.first(size_t{move.first_page} * page_tokens), page_tokens);
          written = (*client)->Write(move.ns, SegmentStart{start, move.first_page}, own, bytes);
        }
      }
      {
        absl::MutexLock stats(&stats_mu_);
        if (written.ok()) {
          ++stats_.moves_done;
          if (!written->existed) stats_.bytes_moved += move.bytes.size();
        } else {
          ++stats_.moves_failed;
        }
      }
      absl::MutexLock lock(&move_mu_);
      queued_bytes_ -= move.bytes.size();
      moving_ = false;
    }
  }

  bool WaitMovesIdle(absl::Duration timeout) const {
    absl::MutexLock lock(&move_mu_);
    auto idle = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) { return moves_.empty() && !moving_; };
    return move_mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
  }

  client_internal::AsyncExecutor& executor() { return executor_; }

  ClusterClientStats stats() const {
    absl::MutexLock lock(&stats_mu_);
    return stats_;
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
    // The cluster cuts the source into pieces with the CPU: device memory is staged into
    // host memory first (the node clients then write host memory).
    std::vector<std::byte> staged;
    if (source.kind == MemoryKind::kDevice) {
      STRATA_ASSIGN_OR_RETURN(staged, StageFromDevice(source));
      return Write(ns, tokens, first_page, MemoryDescriptor::Host(staged.data(), staged.size()),
                   parent, call);
    }
    const View view = CurrentView();
    if (view.placement.empty()) return absl::UnavailableError("the cluster has no serving node");
    const radix::PrefixHash h0 = radix::NamespaceHash(ns);
    const std::vector<radix::PrefixHash> hashes = radix::PrefixHashes(h0, tokens, page_tokens);
    const uint32_t s = options_.segment_pages;

    // The pieces: [p, q) within one segment each, with the nodes that keep its text.
    struct Piece {
      uint32_t first = 0, end = 0;
      std::string owner;
      std::vector<std::string> replicas;  // TEXT copies
      std::vector<std::byte> copy;        // the piece's bytes when the source holds several
      std::string next;                   // the segment's next node (owner when it is lost)
    };
    std::vector<Piece> pieces;
    for (uint32_t p = first_page; p < pages;) {
      const uint32_t segment_start = p / s * s;
      const uint32_t q = std::min(pages, segment_start + s);
      // Placed by h_{kS+1} (the hash through the segment's first page), see the header.
      const std::vector<int> ranked = view.placement.Ranked(
          hashes[segment_start], std::max<uint32_t>(options_.text_replicas, 2));
      Piece piece{p, q, view.placement.nodes()[ranked[0]].id, {}, {}, ""};
      for (size_t r = 1; r < ranked.size(); ++r) {
        if (r < options_.text_replicas) {
          piece.replicas.push_back(view.placement.nodes()[ranked[r]].id);
        }
      }
      if (ranked.size() > 1) piece.next = view.placement.nodes()[ranked[1]].id;
      pieces.push_back(std::move(piece));
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
    // Every node at once, each writing its pieces (and then its TEXT copies) one after
    // another on a thread of its own (a node's connection takes a bounded number of puts at
    // a time: max_puts_per_peer).
    struct Job {
      size_t piece = 0;
      bool text = false;
    };
    std::vector<absl::StatusOr<WriteResult>> results(pieces.size(),
                                                     absl::CancelledError("not written"));
    std::atomic<uint32_t> text_written{0}, text_failed{0};
    std::map<std::string, std::vector<Job>> by_node;
    for (size_t i = 0; i < pieces.size(); ++i) by_node[pieces[i].owner].push_back({i, false});
    for (size_t i = 0; i < pieces.size(); ++i) {
      for (const std::string& replica : pieces[i].replicas) by_node[replica].push_back({i, true});
    }
    // One piece (its KV, or its TEXT copy) written to `client`.
    auto write_piece = [&](Client& client, const Piece& piece,
                           bool text) -> absl::StatusOr<WriteResult> {
      const absl::Span<const TokenId> own = tokens.subspan(
          size_t{piece.first} * page_tokens, size_t{piece.end - piece.first} * page_tokens);
      const MemoryDescriptor bytes =
          pieces.size() > 1 ? MemoryDescriptor::Host(piece.copy.data(), piece.copy.size()) : source;
      const uint32_t p = piece.first;
      std::optional<Parent> from;
      std::optional<SegmentStart> start;
      if (p % s == 0 && p > 0) {
        start = SegmentStart{hashes[p - 1], p};
      } else if (p % s != 0) {
        from = first_parent;
      }
      if (text) return client.WriteText(ns, from, start, own, bytes, call);
      if (start.has_value()) return client.Write(ns, *start, own, bytes, call);
      return client.Write(ns, from, own, bytes, call);
    };
    std::vector<std::future<void>> nodes;
    for (const auto& [id, jobs] : by_node) {
      nodes.push_back(std::async(std::launch::async, [&, id = id, jobs = &jobs] {
        absl::StatusOr<Client*> client = ClientFor(view, id);
        for (const Job& job : *jobs) {
          absl::StatusOr<WriteResult> result =
              client.ok() ? write_piece(**client, pieces[job.piece], job.text) : client.status();
          if (!result.ok()) Suspect(id, result.status());
          if (!job.text) {
            results[job.piece] = std::move(result);
          } else {
            (result.ok() ? text_written : text_failed).fetch_add(1, std::memory_order_relaxed);
          }
        }
      }));
    }
    for (std::future<void>& node : nodes) node.get();
    // A piece whose owner did not answer (dead, cut off, suspected) goes to the segment's next
    // node: the one a lookup asks in its second round, and its owner once the lost node's
    // lease expires. In page order, one after another (a rare path).
    uint64_t to_next = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      Piece& piece = pieces[i];
      const absl::Status failed = results[i].status();
      if (failed.ok() || piece.next.empty() || !absl::IsUnavailable(failed) ||
          absl::StrContains(failed.message(), "draining")) {
        continue;
      }
      absl::StatusOr<Client*> next = ClientFor(view, piece.next);
      if (!next.ok()) continue;
      absl::StatusOr<WriteResult> written = write_piece(**next, piece, /*text=*/false);
      if (!written.ok()) {
        Suspect(piece.next, written.status());
        continue;
      }
      results[i] = std::move(written);
      piece.owner = piece.next;
      ++to_next;
    }
    {
      absl::MutexLock lock(&stats_mu_);
      stats_.text_replicas += text_written.load();
      stats_.text_replica_failures += text_failed.load();
      stats_.writes_to_next += to_next;
    }
    ClusterWriteResult out;
    out.text_replicas = text_written.load();
    out.text_replica_failures = text_failed.load();
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
    return view.Owner(radix::PrefixHashAt(radix::NamespaceHash(ns),
                                          tokens.first(size_t{segment_start + 1} * page_tokens),
                                          page_tokens));
  }

  absl::StatusOr<Client*> Node(const std::string& id) { return ClientFor(CurrentView(), id); }

  // Stat of `key` with its tokens: at node `hint` first (when set), else at every other
  // node of the view at once; the node that answered (with `bytes`: one holding its KV, when
  // some node does), and its answer.
  absl::StatusOr<std::pair<std::string, BlobInfo>> StatAnywhere(const View& view,
                                                                const BlobKey& key,
                                                                const std::string& hint,
                                                                const CallOptions& call,
                                                                bool bytes = false) {
    if (!hint.empty()) {
      if (absl::StatusOr<Client*> client = ClientFor(view, hint); client.ok()) {
        absl::StatusOr<BlobInfo> info = (*client)->Stat(key, /*include_tokens=*/true, call);
        if (info.ok()) return std::make_pair(hint, *std::move(info));
        Suspect(hint, info.status());
      }
    }
    std::vector<std::pair<std::string, std::future<absl::StatusOr<BlobInfo>>>> asked;
    for (const auto& [id, address] : view.address) {
      if (id == hint) continue;
      asked.emplace_back(id,
                         std::async(std::launch::async, [&, id = id]() -> absl::StatusOr<BlobInfo> {
                           STRATA_ASSIGN_OR_RETURN(Client * client, ClientFor(view, id));
                           return client->Stat(key, /*include_tokens=*/true, call);
                         }));
    }
    // The first answer, or with `bytes`, the first with KV if any has it.
    std::optional<std::pair<std::string, BlobInfo>> found;
    auto text_only = [](const BlobInfo& info) {
      return info.tiers == std::vector<Tier>{Tier::kText};
    };
    for (auto& [id, answer] : asked) {
      absl::StatusOr<BlobInfo> info = answer.get();
      Suspect(id, info.status());
      if (info.ok() &&
          (!found.has_value() || (bytes && text_only(found->second) && !text_only(*info)))) {
        found.emplace(id, *std::move(info));
      }
    }
    if (!found.has_value()) {
      return absl::NotFoundError(
          absl::StrCat("blob ", key.ToHex(), " is on none of the ", view.address.size(), " nodes"));
    }
    return *std::move(found);
  }

  absl::StatusOr<std::vector<TokenId>> PrefixTokens(const Namespace& ns, const SegmentStart& start,
                                                    const CallOptions& call) {
    // The blob ending at the start has the start's hash as its key.
    return TokensBefore(ns, Parent{BlobKey{start.hash}, start.pages}, call);
  }

  absl::StatusOr<std::vector<TokenId>> TokensBefore(const Namespace& ns, const Parent& through,
                                                    const CallOptions& call) {
    const uint32_t page_tokens = ns.layout().page_tokens;
    const radix::PrefixHash h0 = radix::NamespaceHash(ns);
    const View view = CurrentView();
    // Back to page 0: each step one blob (the one ending at `end`, whose key is the hash
    // there, or a parent that continues past it), tokens kept back to front; the first
    // blob's tokens past `through.pages` kept for the check.
    std::vector<std::vector<TokenId>> parts;
    std::vector<TokenId> past;
    BlobKey key = through.key;
    uint32_t end = through.pages;
    std::string hint;
    while (end > 0) {
      absl::StatusOr<std::pair<std::string, BlobInfo>> found =
          StatAnywhere(view, key, hint,
                       Within(call, options_.node_timeout, options_.node_options.default_timeout));
      if (!found.ok()) {
        return absl::Status(found.status().code(),
                            absl::StrCat("the tokens of sequence pages [0, ", end, ") before page ",
                                         through.pages, ": ", found.status().message()));
      }
      auto& [id, info] = *found;
      if (info.namespace_hash != h0 || info.first_page >= end ||
          info.first_page + info.pages < end ||
          info.tokens.size() != size_t{info.pages} * page_tokens) {
        return absl::DataLossError(absl::StrCat(
            "node ", id, " answered blob ", key.ToHex(), " with pages [", info.first_page, ", ",
            info.first_page + info.pages, ") and ", info.tokens.size(),
            " tokens: not a blob through page ", end, " of this namespace"));
      }
      const auto cut = info.tokens.begin() + size_t{end - info.first_page} * page_tokens;
      if (parts.empty()) past.assign(cut, info.tokens.end());
      parts.emplace_back(info.tokens.begin(), cut);
      end = info.first_page;
      key = info.parent.has_value() ? info.parent->key : BlobKey{info.start_hash};
      hint = id;
    }
    std::vector<TokenId> tokens;
    tokens.reserve(size_t{through.pages} * page_tokens);
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
      tokens.insert(tokens.end(), part->begin(), part->end());
    }
    // The tokens, and the rest of the blob named, hash to its key.
    if (radix::PrefixHashAt(radix::PrefixHashAt(h0, tokens, page_tokens), past, page_tokens) !=
        through.key.hash) {
      return absl::DataLossError(absl::StrCat("the tokens found for pages [0, ", through.pages,
                                              ") do not hash to blob ", through.key.ToHex()));
    }
    return tokens;
  }

  // A node holding blob `key`, by a Stat at every node: one with its KV when some has it.
  absl::StatusOr<std::string> Locate(const BlobKey& key, const CallOptions& call) {
    STRATA_ASSIGN_OR_RETURN(auto found, StatAnywhere(CurrentView(), key, "",
                                                     Within(call, options_.node_timeout,
                                                            options_.node_options.default_timeout),
                                                     /*bytes=*/true));
    return found.first;
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
  // Copies device memory into host memory through the device node_options.open_device
  // gives (else gpu::OpenCudaDevice), opened once per ordinal.
  absl::StatusOr<std::vector<std::byte>> StageFromDevice(const MemoryDescriptor& source)
      ABSL_LOCKS_EXCLUDED(devices_mu_) {
    std::shared_ptr<gpu::Device> device;
    {
      absl::MutexLock lock(&devices_mu_);
      std::shared_ptr<gpu::Device>& slot = devices_[source.device];
      if (slot == nullptr) {
        absl::StatusOr<std::shared_ptr<gpu::Device>> opened =
            options_.node_options.open_device
                ? options_.node_options.open_device(source.device)
                : absl::StatusOr<std::shared_ptr<gpu::Device>>(gpu::OpenCudaDevice(source.device));
        if (!opened.ok()) return opened.status();
        slot = *std::move(opened);
      }
      device = slot;
    }
    std::vector<std::byte> host(source.bytes);
    STRATA_ASSIGN_OR_RETURN(gpu::Stream stream, device->CreateStream());
    STRATA_RETURN_IF_ERROR(device->CopyToHostAsync(host.data(), source.ptr, source.bytes, stream));
    STRATA_RETURN_IF_ERROR(device->Synchronize(stream));
    return host;
  }

  const ClusterClientOptions options_;
  absl::Mutex devices_mu_;
  absl::flat_hash_map<int, std::shared_ptr<gpu::Device>> devices_ ABSL_GUARDED_BY(devices_mu_);
  View static_view_;
  std::unique_ptr<cluster::EtcdClient> etcd_;
  std::unique_ptr<cluster::MembershipView> membership_;  // after etcd_: destroyed first
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Client>> clients_ ABSL_GUARDED_BY(mu_);      // by address
  absl::flat_hash_map<std::string, absl::Time> suspect_until_ ABSL_GUARDED_BY(mu_);  // by id
  std::atomic<uint64_t> next_holder_{0};  // round robin over a hot segment's holders
  mutable absl::Mutex stats_mu_;
  ClusterClientStats stats_ ABSL_GUARDED_BY(stats_mu_);
  // The mover: moves_ is written to its owners one at a time by mover_.
  mutable absl::Mutex move_mu_;
  std::deque<Move> moves_ ABSL_GUARDED_BY(move_mu_);
  uint64_t queued_bytes_ ABSL_GUARDED_BY(move_mu_) = 0;  // queued and in progress
  bool moving_ ABSL_GUARDED_BY(move_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(move_mu_) = false;
  std::thread mover_;  // started after everything it uses, joined first
  // ReadAsync / WriteAsync. Last: destroyed first, running what is queued while everything
  // else is still there.
  client_internal::AsyncExecutor executor_{std::max(1, options_.node_options.async_threads)};
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

ClusterClientStats ClusterClient::stats() const { return impl_->stats(); }

absl::StatusOr<Client*> ClusterClient::Node(const std::string& id) { return impl_->Node(id); }

absl::StatusOr<std::vector<TokenId>> ClusterClient::TokensBefore(const Namespace& ns,
                                                                 const Parent& through,
                                                                 const CallOptions& call) {
  return impl_->TokensBefore(ns, through, call);
}

absl::StatusOr<std::string> ClusterClient::Locate(const BlobKey& key, const CallOptions& call) {
  return impl_->Locate(key, call);
}

absl::StatusOr<std::vector<TokenId>> ClusterClient::PrefixTokens(const Namespace& ns,
                                                                 const SegmentStart& start,
                                                                 const CallOptions& call) {
  return impl_->PrefixTokens(ns, start, call);
}

bool ClusterClient::WaitMovesIdle(absl::Duration timeout) const {
  return impl_->WaitMovesIdle(timeout);
}

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

std::vector<absl::Status> ClusterClient::ReadBatch(const Namespace& ns,
                                                   absl::Span<const ClusterReadItem> items,
                                                   const CallOptions& call) {
  std::vector<std::future<absl::Status>> reads;
  for (const ClusterReadItem& item : items) {
    reads.push_back(std::async(std::launch::async, [&, item = &item]() -> absl::Status {
      if (item->match == nullptr) return absl::InvalidArgumentError("items[].match: missing");
      return impl_->Read(ns, *item->match, item->pages, item->destination, call);
    }));
  }
  std::vector<absl::Status> out;
  for (auto& read : reads) out.push_back(read.get());
  return out;
}

std::vector<absl::StatusOr<ClusterWriteResult>> ClusterClient::WriteBatch(
    const Namespace& ns, absl::Span<const ClusterWriteItem> items, const CallOptions& call) {
  std::vector<std::future<absl::StatusOr<ClusterWriteResult>>> writes;
  for (const ClusterWriteItem& item : items) {
    writes.push_back(std::async(std::launch::async, [&, item = &item] {
      return impl_->Write(ns, item->tokens, item->first_page, item->source, item->parent, call);
    }));
  }
  std::vector<absl::StatusOr<ClusterWriteResult>> out;
  for (auto& write : writes) out.push_back(write.get());
  return out;
}

void ClusterClient::ReadAsync(const Namespace& ns, const ClusterMatch& match, uint32_t pages,
                              const MemoryDescriptor& destination, const CallOptions& call,
                              absl::AnyInvocable<void(absl::Status) &&> done) {
  impl_->executor().Schedule(
      [impl = impl_.get(), ns, match, pages, destination, call, done = std::move(done)]() mutable {
        std::move(done)(impl->Read(ns, match, pages, destination, call));
      });
}

void ClusterClient::WriteAsync(
    const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t first_page,
    const MemoryDescriptor& source, const std::optional<Parent>& parent, const CallOptions& call,
    absl::AnyInvocable<void(absl::StatusOr<ClusterWriteResult>) &&> done) {
  impl_->executor().Schedule([impl = impl_.get(), ns, tokens, first_page, source, parent, call,
                              done = std::move(done)]() mutable {
    std::move(done)(impl->Write(ns, tokens, first_page, source, parent, call));
  });
}

absl::Status ClusterClient::ReadLayers(const Namespace& ns, const ClusterMatch& match,
                                       uint32_t pages, const MemoryDescriptor& destination,
                                       absl::FunctionRef<absl::Status(uint32_t layer)> on_layer,
                                       const CallOptions& call) {
  return impl_->ReadLayers(ns, match, pages, destination, on_layer, call);
}

absl::StatusOr<ClusterWriteResult> ClusterClient::Write(
    const Namespace& ns, absl::Span<const TokenId> tokens, uint32_t first_page,
    const MemoryDescriptor& source, const std::optional<Parent>& parent, const CallOptions& call) {
  return impl_->Write(ns, tokens, first_page, source, parent, call);
}

}  // namespace strata
