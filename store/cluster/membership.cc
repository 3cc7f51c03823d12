#include "strata/store/cluster/membership.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::cluster {

// ---------------------------------------------------------------- Registration

absl::StatusOr<std::unique_ptr<Registration>> Registration::Start(EtcdClient* etcd,
                                                                  std::string cluster,
                                                                  NodeRecord record,
                                                                  RegistrationOptions options) {
  if (record.id.empty()) return absl::InvalidArgumentError("registration: the record has no id");
  if (options.lease_ttl <= absl::ZeroDuration() ||
      options.initial_backoff <= absl::ZeroDuration() ||
      options.max_backoff < options.initial_backoff) {
    return absl::InvalidArgumentError(
        "registration: lease_ttl and initial_backoff must be positive, max_backoff >= "
        "initial_backoff");
  }
  std::unique_ptr<Registration> registration(
      new Registration(etcd, std::move(cluster), std::move(record), options));
  {
    absl::MutexLock lock(&registration->mu_);
    if (registration->record_.state == NodeState::kJoining &&
        options.joining_for > absl::ZeroDuration()) {
      registration->serve_at_ = absl::Now() + options.joining_for;
    }
  }
  registration->thread_ = std::thread([r = registration.get()] { r->Run(); });
  return registration;
}

Registration::Registration(EtcdClient* etcd, std::string cluster, NodeRecord record,
                           RegistrationOptions options)
    : etcd_(etcd),
      key_(MembershipKey(cluster, record.id)),
      options_(options),
      record_(std::move(record)),
      lease_ttl_(options.lease_ttl) {}

Registration::~Registration() { Stop().IgnoreError(); }

void Registration::SetState(NodeState state) {
  absl::MutexLock lock(&mu_);
  serve_at_ = absl::InfiniteFuture();  // an explicit state ends the joining period
  if (record_.state == state) return;
  record_.state = state;
  dirty_ = true;
}

NodeRecord Registration::record() const {
  absl::MutexLock lock(&mu_);
  return record_;
}

RegistrationStats Registration::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Status Registration::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return absl::OkStatus();
    stopped_ = true;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  int64_t lease = 0;
  {
    absl::MutexLock lock(&mu_);
    lease = std::exchange(lease_, 0);
  }
  registered_.store(false, std::memory_order_release);
  if (lease == 0) return absl::OkStatus();
  absl::Status revoked = etcd_->RevokeLease(lease);
  if (!revoked.ok()) {
    LOG(WARNING) << "strata cluster: could not revoke the registration's lease (" << revoked
                 << "); the record expires with it";
  }
  return revoked;
}

void Registration::Run() {
  absl::Duration backoff = options_.initial_backoff;
  for (;;) {
    int64_t lease = 0;
    bool dirty = false;
    NodeRecord record;
    absl::Duration ttl;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (absl::Now() >= serve_at_) {  // the joining period is over
        serve_at_ = absl::InfiniteFuture();
        record_.state = NodeState::kServing;
        dirty_ = true;
      }
      lease = lease_;
      dirty = dirty_;
      record = record_;
      ttl = lease_ttl_;
    }
    absl::Status status;
    if (lease == 0) {
      absl::StatusOr<LeaseGrant> grant = etcd_->GrantLease(options_.lease_ttl);
      if (grant.ok()) {
        lease = grant->id;
        ttl = grant->ttl;
        dirty = true;
        absl::MutexLock lock(&mu_);
        lease_ = lease;
        lease_ttl_ = ttl;
      } else {
        status = grant.status();
      }
    }
    if (status.ok() && dirty) {
      absl::StatusOr<int64_t> put = etcd_->Put(key_, EncodeNodeRecord(record), lease);
      if (put.ok()) {
        absl::MutexLock lock(&mu_);
        ++stats_.records_written;
        if (record_ == record) dirty_ = false;  // else SetState changed it meanwhile
        registered_.store(true, std::memory_order_release);
      } else {
        status = put.status();
      }
    } else if (status.ok()) {
      absl::StatusOr<absl::Duration> left = etcd_->KeepAlive(lease);
      if (left.ok()) {
        absl::MutexLock lock(&mu_);
        ++stats_.keepalives;
        registered_.store(true, std::memory_order_release);
      } else {
        status = left.status();
      }
    }
    if (absl::IsNotFound(status)) {
      // The lease expired (etcd was away longer than its TTL) or was revoked: take a new one
      // and write the record again, at once.
      LOG(WARNING) << "strata cluster: the registration's lease is gone (" << status
                   << "); registering again";
      registered_.store(false, std::memory_order_release);
      absl::MutexLock lock(&mu_);
      ++stats_.leases_lost;
      lease_ = 0;
      dirty_ = true;
      continue;
    }
    absl::Duration wait = ttl / 3;
    if (!status.ok()) {
      LOG_EVERY_N(WARNING, 10) << "strata cluster: etcd did not answer the registration (" << status
                               << "); still serving, retrying";
      wait = backoff;
      backoff = std::min(backoff * 2, options_.max_backoff);
    } else {
      backoff = options_.initial_backoff;
    }
    absl::MutexLock lock(&mu_);
    if (!status.ok()) ++stats_.failures;
    wait = std::min(wait, std::max(serve_at_ - absl::Now(), absl::ZeroDuration()));
    auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return dirty_ || stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&wake), wait);
  }
}

// ---------------------------------------------------------------- MembershipView

absl::StatusOr<std::unique_ptr<MembershipView>> MembershipView::Start(EtcdClient* etcd,
                                                                      std::string cluster,
                                                                      bool need_etcd) {
  std::unique_ptr<MembershipView> view(new MembershipView(etcd, std::move(cluster)));
  if (absl::Status first = view->Resync(); !first.ok()) {
    if (need_etcd) return first;
    absl::MutexLock lock(&view->mu_);
    view->resync_needed_ = true;  // empty until etcd answers; the thread keeps trying
  }
  view->resync_thread_ = std::thread([v = view.get()] { v->ResyncLoop(); });
  return view;
}

MembershipView::MembershipView(EtcdClient* etcd, std::string cluster)
    : etcd_(etcd), cluster_(cluster), prefix_(MembershipPrefix(cluster)) {}

MembershipView::~MembershipView() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (resync_thread_.joinable()) resync_thread_.join();
  std::unique_ptr<EtcdClient::Watch> watch;
  {
    absl::MutexLock lock(&watch_mu_);
    watch = std::move(watch_);
  }
  watch.reset();  // joins its thread, which may be in Apply (takes mu_)
}

std::vector<NodeRecord> MembershipView::Nodes() const {
  absl::MutexLock lock(&mu_);
  std::vector<NodeRecord> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [key, record] : nodes_) nodes.push_back(record);
  return nodes;
}

bool MembershipView::live() const {
  absl::MutexLock lock(&watch_mu_);
  return watch_ != nullptr && watch_->established();
}

MembershipStats MembershipView::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Status MembershipView::WaitUntil(
    const std::function<bool(const std::vector<NodeRecord>&)>& done, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    if (done(Nodes())) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("membership: the view did not reach the wanted state within ",
                       absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

absl::StatusOr<MembersRead> ReadMembers(EtcdClient& etcd, const std::string& cluster) {
  absl::StatusOr<RangeResult> all = etcd.GetPrefix(MembershipPrefix(cluster));
  if (!all.ok()) return all.status();
  MembersRead read{.revision = all->revision};
  for (const KeyValue& kv : all->kvs) {
    absl::StatusOr<NodeRecord> record = DecodeNodeRecord(kv.value);
    if (record.ok()) {
      read.nodes.emplace(kv.key, *std::move(record));
    } else {
      ++read.undecodable;
      LOG(WARNING) << "strata cluster: skipping " << kv.key << ": " << record.status();
    }
  }
  return read;
}

absl::Status MembershipView::Resync() {
  absl::StatusOr<MembersRead> read = ReadMembers(*etcd_, cluster_);
  if (!read.ok()) return read.status();
  const int64_t revision = read->revision;
  {
    absl::MutexLock lock(&mu_);
    if (stats_.revision != 0) ++stats_.resyncs;  // not the first read
    nodes_ = std::move(read->nodes);
    stats_.undecodable += read->undecodable;
    stats_.revision = revision;
  }
  std::unique_ptr<EtcdClient::Watch> watch = etcd_->WatchPrefix(
      prefix_, revision + 1,
      [this](const std::vector<WatchEvent>& events, int64_t revision) { Apply(events, revision); },
      [this](const absl::Status& status) {
        absl::MutexLock lock(&mu_);
        ++stats_.watch_resets;
        if (absl::IsOutOfRange(status)) resync_needed_ = true;  // compacted: read it all again
      });
  {
    absl::MutexLock lock(&watch_mu_);
    std::swap(watch, watch_);
  }
  return absl::OkStatus();  // `watch` (the old one, its thread ended) is destroyed here
}

void MembershipView::Apply(const std::vector<WatchEvent>& events, int64_t revision) {
  absl::MutexLock lock(&mu_);
  for (const WatchEvent& event : events) {
    if (event.type == WatchEvent::Type::kDelete) {
      nodes_.erase(event.kv.key);
      continue;
    }
    absl::StatusOr<NodeRecord> record = DecodeNodeRecord(event.kv.value);
    if (record.ok()) {
      nodes_[event.kv.key] = *std::move(record);
    } else {
      ++stats_.undecodable;
      nodes_.erase(event.kv.key);  // what it said before is no longer true
      LOG(WARNING) << "strata cluster: skipping " << event.kv.key << ": " << record.status();
    }
  }
  stats_.revision = std::max(stats_.revision, revision);
}

void MembershipView::ResyncLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto wake = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return resync_needed_ || stopping_; };
      mu_.Await(absl::Condition(&wake));
      if (stopping_) return;
      resync_needed_ = false;
    }
    const absl::Status status = Resync();
    if (status.ok()) {
      backoff = absl::Milliseconds(100);
      continue;
    }
    LOG_EVERY_N(WARNING, 10) << "strata cluster: membership resync failed (" << status
                             << "); keeping the last view";
    absl::MutexLock lock(&mu_);
    resync_needed_ = true;
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&stop), backoff);
    backoff = std::min(backoff * 2, absl::Seconds(1));
  }
}

}  // namespace strata::store::cluster
