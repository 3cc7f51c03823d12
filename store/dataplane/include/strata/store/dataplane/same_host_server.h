// SameHostServer: the node's same-host channel (strata/store/transport/same_host.h has the
// protocol). A client on the node's host gets the DRAM arena's file read-only and reads
// blobs out of its own mapping of it under a lease: one copy (or one DMA to a GPU), no
// network stack. It puts blobs through a staging file of its own that the node copies
// from. Design: docs/design/same-host.md.
//
// What a client can and cannot do
//   - It maps the arena PROT_READ only. The file is write-sealed (F_SEAL_FUTURE_WRITE,
//     tiering/dram_arena.h): no reopening through /proc, mprotect or fallocate gets a
//     writable view, so no client can change a committed blob, a blob being put, or
//     anything else in the arena. Start refuses an arena whose seal does not hold.
//   - It sees every byte of the arena, other tenants' blobs included: the channel is
//     offered only where that is acceptable (one trust domain per host; options.enabled,
//     node option same_host). Leases and checksums still decide what a read returns.
//   - Its staging file is its own (one per connection, size-sealed so the node's mapping
//     never faults). The node copies a put's bytes out of it into the put's extent and
//     verifies every chunk there, where the client cannot write: a client that changes its
//     staging bytes mid-put can only make its own put fail DATA_LOSS.
//   - Every connection presents a data-plane credential in HELLO when options.authenticate
//     is set, and is scoped to its tenant's namespaces like a UCX connection.
//   - Bounded: options.max_clients greeted connections (more are refused in HELLO_REPLY)
//     and options.max_greeting not yet greeted (a silent local process takes no client's slot),
//     options.max_leases_per_client leases each (RESOURCE_EXHAUSTED), a frame must arrive
//     and a reply be taken within options.io_timeout, or the connection is closed. Closing
//     a connection releases its leases and aborts its put.
//
// Statuses in READ_REPLY: those of the UCX READ (data_plane_server.h) — the engine's Read
// errors, INVALID_ARGUMENT for what does not decode — and RESOURCE_EXHAUSTED for too many
// leases. PUT_REPLY: those of the UCX PUT, and OUT_OF_RANGE for bytes outside the staging
// file. A frame that does not parse (bad magic, unknown type, over kMaxRequestBytes) closes
// the connection.
//
// Threading: one thread accepts, one thread serves each connection (requests of a
// connection in order). Engine calls are made on those threads; bulk copies and checksum
// verification run there without the engine lock. Public methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/store/core/access_scope.h"
#include "strata/store/core/data_plane_stats.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/transport/messenger.h"
#include "strata/store/transport/same_host.h"

namespace strata::store::dataplane {

struct SameHostOptions {
  // The socket's name ("@name": abstract namespace; else a file path). Empty: an abstract
  // name of this process, "@strata-node-<pid>-<n>".
  std::string socket;
  // Each connection's staging file: the largest blob a client puts this way (larger ones
  // go over UCX). Memory only as the client touches it.
  uint64_t staging_bytes = uint64_t{64} << 20;
  // Greeted connections at once (more are refused in HELLO_REPLY), and connections that
  // have not said HELLO yet (more are refused when accepted).
  uint32_t max_clients = 64;
  uint32_t max_greeting = 16;
  uint32_t max_leases_per_client = 1024;
  // A connection must say HELLO within this (a client does so at once; a connection that
  // does not holds a slot of max_greeting until then).
  absl::Duration hello_timeout = absl::Seconds(2);
  absl::Duration io_timeout = absl::Seconds(30);
  // As DataPlaneOptions: the credential check (null admits all) and the tenant's scope.
  transport::PeerAuthenticator authenticate;
  std::function<core::AccessScope(std::string_view identity)> scope_of;
  std::string name = "strata-same-host";
  // Share the engine's HBM tier (if it has one) with same-host GPU readers: HELLO_REPLY
  // carries its pool's IPC handle and READ_REPLY each item's HBM offset, so a client copies
  // device to device (docs/design/hbm-tier.md). CUDA IPC maps the whole pool readable AND
  // writable in the client: every same-host client can read every tenant's HBM copies, and
  // write them (readers verify each copy on their device and fall back to DRAM, so a writer
  // only costs them the fast path). Off: HBM copies serve nobody yet.
  bool share_hbm = false;
};

using SameHostStats = core::SameHostStats;

class SameHostServer {
 public:
  // Listens and serves `engine` (borrowed; must outlive this object). FAILED_PRECONDITION
  // when the engine's DRAM arena cannot be shared (anonymous memory, or a kernel whose
  // write seal does not hold); the errors of same_host::Listen.
  static absl::StatusOr<std::unique_ptr<SameHostServer>> Start(core::NodeEngine* engine,
                                                               SameHostOptions options);
  ~SameHostServer();
  SameHostServer(const SameHostServer&) = delete;
  SameHostServer& operator=(const SameHostServer&) = delete;

  // The socket's name as clients connect to it (announced in Health and OpenDataPlane).
  const std::string& socket() const { return options_.socket; }
  SameHostStats stats() const;
  // Stops accepting, closes every connection (their leases released, puts aborted) and
  // joins the threads. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Connection;
  SameHostServer(core::NodeEngine* engine, SameHostOptions options);

  void AcceptLoop();
  void Serve(Connection* connection);
  // HELLO: the credential, the staging file, the reply with both descriptors. False: the
  // connection ends.
  bool Greet(Connection& connection);
  // One request; false ends the connection.
  bool HandleRead(Connection& connection, absl::Span<const uint8_t> payload);
  bool HandleRelease(Connection& connection, absl::Span<const uint8_t> payload);
  bool HandleLeaseCheck(Connection& connection, absl::Span<const uint8_t> payload);
  bool HandlePut(Connection& connection, absl::Span<const uint8_t> payload);
  // Joins the threads of connections that ended.
  void ReapFinished() ABSL_LOCKS_EXCLUDED(mu_);
  bool Reply(Connection& connection, transport::same_host::Type type,
             absl::Span<const absl::Span<const uint8_t>> parts);

  core::NodeEngine* const engine_;
  SameHostOptions options_;
  std::string hbm_handle_;  // the HBM pool's IPC handle; empty: not shared
  transport::same_host::Fd listener_;
  uint64_t socket_inode_ = 0;      // a path socket's, so that Stop removes only its own
  transport::same_host::Fd wake_;  // an eventfd: readable once stopping
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> greeting_{0};  // connections in Greet
  std::atomic<uint32_t> admitted_{0};  // greeted connections

  absl::Mutex stop_mu_;
  mutable absl::Mutex mu_;
  std::list<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);

  struct Counters {
    std::atomic<uint64_t> clients{0}, clients_total{0}, refused{0}, reads{0}, read_failures{0},
        bytes_granted{0}, puts{0}, put_failures{0}, bytes_put{0}, malformed{0},
        leases_released_at_close{0}, bytes_granted_hbm{0}, leases_expired_in_copy{0};
  };
  mutable Counters counters_;
};

}  // namespace strata::store::dataplane
