// EtcdClient: the part of etcd's v3 API that strata's cluster membership needs — keys,
// prefixes, a put-if-absent, leases with keepalive, and prefix watches — over etcd's own gRPC
// services (store/cluster/etcd/*.proto, a wire-compatible subset generated at build time).
// No consensus of strata's own: etcd is the coordination engine.
//
// Endpoints: "host:port" (etcd's client URLs without "http://"). Several IP-literal endpoints
// form one channel that fails over between them (gRPC pick_first over the address list); a
// host name uses the first endpoint only (gRPC's DNS resolver). Plain TCP: etcd started by
// strata's scripts and tests listens on loopback without TLS.
//
// Every call has a deadline (options.call_timeout unless the caller passes a sooner one).
// Keys and values are bytes.
//
// Watch: WatchPrefix runs a background thread that keeps one Watch stream open and calls
// `on_events` with each batch of events in revision order. When the stream breaks (etcd
// restarted, unreachable) it calls `on_reset` with the status and opens a new stream from the
// revision after the last one it delivered, with capped backoff, until the Watch is
// destroyed; a start revision etcd has compacted away ends the watch with `on_reset`
// (OUT_OF_RANGE, carrying the compact revision): the caller resynchronizes with a Range and
// watches again.
//
// A call waits for a connection until its deadline (so a channel whose etcd restarted
// reconnects at the next call).
//
// Errors (absl::Status, converted from gRPC in one place): UNAVAILABLE etcd unreachable or
// restarting (no connection within the deadline; retry may help), DEADLINE_EXCEEDED etcd
// was connected but did not answer in time, NOT_FOUND a lease
// that does not exist (expired or revoked), INVALID_ARGUMENT from Create (no endpoints, a
// malformed one) and for an empty key, FAILED_PRECONDITION what etcd refused otherwise.
// Thread-safe: every method from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace strata::store::cluster {

struct EtcdClientOptions {
  std::vector<std::string> endpoints;  // "host:port", at least one
  absl::Duration call_timeout = absl::Seconds(2);
  // Backoff of a broken watch stream before it is opened again: doubles up to the max.
  absl::Duration watch_initial_backoff = absl::Milliseconds(50);
  absl::Duration watch_max_backoff = absl::Seconds(1);
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;  // 0: none
};

struct RangeResult {
  std::vector<KeyValue> kvs;  // ascending by key
  int64_t revision = 0;       // the store's revision the answer reflects
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // for kDelete: the key and mod_revision only
};

struct LeaseGrant {
  int64_t id = 0;
  absl::Duration ttl;  // etcd's choice (>= what was asked, in whole seconds)
};

// OK when every endpoint is "host:port" with a port in 1..65535 (and there is one);
// INVALID_ARGUMENT naming the first that is not. What Create checks, without a channel.
absl::Status CheckEtcdEndpoints(const std::vector<std::string>& endpoints);

// The first key after every key starting with `prefix` (etcd's range_end for a prefix);
// "\0" (every key) for an empty prefix or one of only 0xFF bytes.
std::string PrefixEnd(const std::string& prefix);

class EtcdClient {
 public:
  class Watch;

  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdClientOptions options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // Sets `key` to `value`, attached to `lease` (0: none). The new revision.
  absl::StatusOr<int64_t> Put(const std::string& key, const std::string& value, int64_t lease = 0);
  // Sets `key` only if it does not exist (one transaction). True when it was set; false when
  // the key existed (and is unchanged).
  absl::StatusOr<bool> PutIfAbsent(const std::string& key, const std::string& value,
                                   int64_t lease = 0);
  // The key (kvs empty when absent), or every key under `prefix`.
  absl::StatusOr<RangeResult> Get(const std::string& key);
  absl::StatusOr<RangeResult> GetPrefix(const std::string& prefix);
  // How many keys were deleted.
  absl::StatusOr<int64_t> Delete(const std::string& key);
  absl::StatusOr<int64_t> DeletePrefix(const std::string& prefix);

  // A lease of at least `ttl` (whole seconds, >= 1): keys put with it are deleted when it
  // expires without a keepalive, or is revoked.
  absl::StatusOr<LeaseGrant> GrantLease(absl::Duration ttl);
  // Refreshes the lease: the TTL it has again. NOT_FOUND when it expired or was revoked.
  absl::StatusOr<absl::Duration> KeepAlive(int64_t lease);
  // Revokes the lease (its keys go at once). OK also when it no longer exists.
  absl::Status RevokeLease(int64_t lease);

  // Watches every key under `prefix` from `start_revision` (0: from now). The callbacks run
  // on the watch's own thread, one at a time; destroying the Watch stops it (after a
  // callback that is running returns; REQUIRES: not from a callback).
  std::unique_ptr<Watch> WatchPrefix(
      const std::string& prefix, int64_t start_revision,
      std::function<void(const std::vector<WatchEvent>&, int64_t revision)> on_events,
      std::function<void(const absl::Status&)> on_reset);

  struct Stubs;  // the generated stubs (etcd_client.cc)

 private:
  explicit EtcdClient(EtcdClientOptions options, std::unique_ptr<Stubs> stubs);
  absl::StatusOr<RangeResult> Range(const std::string& key, const std::string& range_end);
  absl::StatusOr<int64_t> DeleteRange(const std::string& key, const std::string& range_end);

  const EtcdClientOptions options_;
  std::unique_ptr<Stubs> stubs_;
};

class EtcdClient::Watch {
 public:
  ~Watch();
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  // Whether the stream is open and etcd confirmed the watch (false while reconnecting).
  bool established() const { return established_.load(std::memory_order_acquire); }

 private:
  friend class EtcdClient;
  struct Stream;  // the open call (etcd_client.cc)
  Watch() = default;
  void Run(EtcdClient::Stubs* stubs, const EtcdClientOptions& options, std::string prefix,
           int64_t start_revision,
           std::function<void(const std::vector<WatchEvent>&, int64_t)> on_events,
           std::function<void(const absl::Status&)> on_reset);

  absl::Notification stop_;
  std::atomic<bool> established_{false};
  absl::Mutex mu_;
  std::shared_ptr<Stream> stream_ ABSL_GUARDED_BY(mu_);  // cancelled by the destructor
  std::thread thread_;
};

}  // namespace strata::store::cluster
