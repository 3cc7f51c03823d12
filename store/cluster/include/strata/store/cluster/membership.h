// Cluster membership on etcd: a node's Registration of itself, and the MembershipView every
// node and client keeps of all of them.
//
// Registration (node side). Start() writes the node's NodeRecord under
// MembershipKey(cluster, id), attached to an etcd lease of `lease_ttl`, and a background
// thread refreshes the lease every lease_ttl / 3. A node that stops (or dies, or is cut off
// from etcd for longer than the TTL) leaves every view when the lease expires. While etcd is
// unreachable the node keeps serving; the thread keeps trying (capped backoff) and, when
// etcd answers again, refreshes the lease or — if it expired meanwhile — takes a new one and
// writes the record again. SetState() rewrites the record at once; a record that starts
// joining turns serving by itself after options.joining_for. Stop() revokes the lease
// (the record goes at once: a clean leave) and joins the thread; the destructor calls it.
// Start does not wait for etcd: registered() says whether the record is in etcd as far as
// the last exchange knows.
//
// MembershipView (node and client side). Start() reads every record under
// MembershipPrefix(cluster) (Range) and then follows a prefix Watch from the revision after
// it, so the view changes in etcd's order. When the watch breaks the view keeps what it had
// (the last view: etcd unreachable does not empty it) and the watch resumes from where it
// stopped; when etcd has compacted that revision away, the view reads everything again.
// Records that do not decode are skipped and counted (a newer or foreign writer).
//
// Errors: Registration::Start INVALID_ARGUMENT for a record without an id or a
// non-positive TTL; MembershipView::Start what the first Range returned (UNAVAILABLE etcd
// unreachable: there is no last view yet). Thread-safe: every method from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#include "strata/store/cluster/etcd_client.h"
#include "strata/store/cluster/node_record.h"

namespace strata::store::cluster {

struct RegistrationOptions {
  // The etcd lease: a node that stops refreshing it leaves the views this long after.
  absl::Duration lease_ttl = absl::Seconds(5);
  // Retry backoff while etcd does not answer: doubles up to the max.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(1);
  // A record that starts kJoining becomes kServing this long after Start (unless SetState
  // changed its state first); zero: it stays as written.
  absl::Duration joining_for = absl::ZeroDuration();
};

struct RegistrationStats {
  uint64_t records_written = 0;  // record writes etcd took (first, SetState, after a lost lease)
  uint64_t keepalives = 0;       // lease refreshes etcd answered
  uint64_t failures = 0;         // exchanges that failed (etcd unreachable, timed out)
  uint64_t leases_lost = 0;      // leases found expired (a new one taken, the record rewritten)
};

class Registration {
 public:
  // REQUIRES: `etcd` outlives the Registration.
  static absl::StatusOr<std::unique_ptr<Registration>> Start(EtcdClient* etcd, std::string cluster,
                                                             NodeRecord record,
                                                             RegistrationOptions options = {});
  ~Registration();
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

  // Rewrites the record with the new state (at once if etcd answers, else when it does).
  void SetState(NodeState state) ABSL_LOCKS_EXCLUDED(mu_);
  // Revokes the lease (the record leaves every view) and stops refreshing. Idempotent.
  // UNAVAILABLE when etcd did not answer the revoke (the record then expires with the TTL).
  absl::Status Stop() ABSL_LOCKS_EXCLUDED(mu_);

  bool registered() const { return registered_.load(std::memory_order_acquire); }
  NodeRecord record() const ABSL_LOCKS_EXCLUDED(mu_);
  RegistrationStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Registration(EtcdClient* etcd, std::string cluster, NodeRecord record,
               RegistrationOptions options);
  void Run();

  EtcdClient* const etcd_;
  const std::string key_;
  const RegistrationOptions options_;
  mutable absl::Mutex mu_;
  NodeRecord record_ ABSL_GUARDED_BY(mu_);
  bool dirty_ ABSL_GUARDED_BY(mu_) = true;  // the record must be written again
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;         // 0: none held
  absl::Duration lease_ttl_ ABSL_GUARDED_BY(mu_);  // etcd's answer to the last grant
  // When a joining record becomes serving (InfiniteFuture: never, or done).
  absl::Time serve_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  RegistrationStats stats_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> registered_{false};
  std::thread thread_;
};

struct MembershipStats {
  uint64_t resyncs = 0;       // full reads after the first (compaction)
  uint64_t watch_resets = 0;  // watch streams that broke
  uint64_t undecodable = 0;   // records skipped
  int64_t revision = 0;       // etcd revision the view reflects
};

// Every record under MembershipPrefix(cluster), read once (one Range): the decoded ones by
// key, the revision the read reflects and how many did not decode (skipped, logged).
// Errors: EtcdClient::GetPrefix's. What MembershipView starts from and `strata cluster
// status` shows.
struct MembersRead {
  std::map<std::string, NodeRecord> nodes;  // by key
  int64_t revision = 0;
  uint64_t undecodable = 0;
};
absl::StatusOr<MembersRead> ReadMembers(EtcdClient& etcd, const std::string& cluster);

class MembershipView {
 public:
  // REQUIRES: `etcd` outlives the view. need_etcd false: an etcd that does not answer the
  // first read is not an error — the view starts empty and fills when etcd answers (a node
  // that starts while etcd is away).
  static absl::StatusOr<std::unique_ptr<MembershipView>> Start(EtcdClient* etcd,
                                                               std::string cluster,
                                                               bool need_etcd = true);
  ~MembershipView();
  MembershipView(const MembershipView&) = delete;
  MembershipView& operator=(const MembershipView&) = delete;

  // Every registered node, by id.
  std::vector<NodeRecord> Nodes() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the view is following etcd now (false while the watch reconnects).
  bool live() const;
  MembershipStats stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `done(Nodes())` holds; DEADLINE_EXCEEDED after `timeout`.
  absl::Status WaitUntil(const std::function<bool(const std::vector<NodeRecord>&)>& done,
                         absl::Duration timeout) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  MembershipView(EtcdClient* etcd, std::string cluster);
  // Replaces the view with a full read; then watches from the revision after it.
  absl::Status Resync() ABSL_LOCKS_EXCLUDED(mu_);
  void Apply(const std::vector<WatchEvent>& events, int64_t revision) ABSL_LOCKS_EXCLUDED(mu_);
  void ResyncLoop();

  EtcdClient* const etcd_;
  const std::string cluster_;
  const std::string prefix_;
  mutable absl::Mutex mu_;
  std::map<std::string, NodeRecord> nodes_ ABSL_GUARDED_BY(mu_);  // by key
  MembershipStats stats_ ABSL_GUARDED_BY(mu_);
  bool resync_needed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  mutable absl::Mutex watch_mu_;  // never held while a Watch is destroyed
  std::unique_ptr<EtcdClient::Watch> watch_ ABSL_GUARDED_BY(watch_mu_);
  std::thread resync_thread_;
};

}  // namespace strata::store::cluster
