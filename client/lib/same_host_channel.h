// SameHostChannel: the client's end of a node's same-host channel
// (strata/store/transport/same_host.h; docs/design/same-host.md).
//
// Open connects to the node's socket, presents the data-plane credential and maps the
// node's DRAM arena read-only (the descriptor comes over the socket, SCM_RIGHTS). Each
// connection also brings a staging file of its own, mapped read-write.
//
//   Read   one READ: the node leases the blobs and answers with each item's place in the
//          arena and every chunk checksum; the calling thread copies each page out of the
//          mapping into the caller's memory and verifies it while it is still in cache
//          (DATA_LOSS naming blob, layer and page on a mismatch: a lease that expired and
//          was reused shows up here, never as garbage), calls back each layer for
//          ReadLayers, then releases the lease.
//   (into device memory, where the node shares its HBM tier: items whose blob has an HBM
//          copy are copied device to device from the pool, opened once per device through
//          gpu::Device::OpenIpc, and verified where they landed (gpu::Device::ChecksumChunks):
//          a copy that does not verify — the lease expired and the extent was reused, or a
//          process that opened the pool wrote into it — makes the read go again from the
//          arena; ReadLayers that already handed on layers answers DATA_LOSS instead.)
//   Put    the blob's bytes are copied into the staging file and PUT names them; the node
//          copies them into the put, verifies and commits. A blob larger than the staging
//          file cannot go this way (staging_bytes()).
//
// Connections: up to max_connections, each serving one call at a time (a call takes a free
// one, opens another below the limit, or waits). A connection whose call failed in transit
// (deadline, a broken socket, a reply that does not parse) is closed, so the node releases
// what it held; UNAVAILABLE then tells the caller to fall back to UCX.
//
// Thread-safe. The arena mapping lives as long as the channel.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "client/lib/data_plane.h"
#include "client/lib/read_plan.h"
#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/store/transport/same_host.h"
#include "strata/store/transport/wire.h"

namespace strata::client_internal {

class SameHostChannel {
 public:
  struct Options {
    std::string socket;
    std::string credential;  // empty on an open node
    int max_connections = 4;
  };

  // UNAVAILABLE: the socket cannot be reached (another host, another network namespace,
  // the node stopped) or the node refused (its message); UNAUTHENTICATED the credential;
  // the errors of mmap.
  static absl::StatusOr<std::unique_ptr<SameHostChannel>> Open(Options options,
                                                               absl::Time deadline);
  ~SameHostChannel();
  SameHostChannel(const SameHostChannel&) = delete;
  SameHostChannel& operator=(const SameHostChannel&) = delete;

  uint64_t staging_bytes() const { return staging_bytes_; }

  // A Read into device memory: each item is DMA'd by `device` on `stream` straight out of
  // the arena mapping (registered with the device first: RegisterWith), no copy on the
  // way. The device's copies cannot be read back by the CPU, so the source is verified
  // after they completed: a lease that expired and was reused while the DMA ran leaves the
  // source no longer matching its checksums (DATA_LOSS), never unnoticed.
  struct DeviceTarget {
    gpu::Device* device = nullptr;
    gpu::Stream* stream = nullptr;
    // Adds the bytes copied device to device from the node's HBM tier (null: not counted).
    std::atomic<uint64_t>* hbm_bytes = nullptr;
  };
  // Whether the node shares its HBM tier (HELLO_REPLY carried the pool's handle).
  bool shares_hbm() const { return !hbm_handle_.empty(); }
  // Registers the arena mapping with `device`, read-only, once per device; the channel
  // unregisters it before it unmaps. REQUIRES: `device` outlives the channel.
  // A device that refused once is not asked again (FAILED_PRECONDITION).
  absl::Status RegisterWith(gpu::Device& device) ABSL_LOCKS_EXCLUDED(register_mu_);

  // One READ of `ranges` (header and payload as for the UCX READ; the header's request_id
  // is set here) into host memory. chunk_bytes: bytes of one layer of one page;
  // num_layers: the layout's. *delivered: a layer went to *on_layer.
  absl::Status Read(store::transport::wire::ReadHeader header, absl::Span<const uint8_t> payload,
                    absl::Span<const PlannedRange> ranges,
                    absl::Span<const store::transport::wire::ReadRangeBits> wire_ranges,
                    uint64_t chunk_bytes, uint32_t num_layers,
                    const Client::LayerCallback* on_layer, absl::Time deadline, bool* delivered,
                    uint64_t* checksum_failures, const DeviceTarget* device = nullptr);

  // One PUT of `bytes` (header.bytes of them; <= staging_bytes()). `metadata` as for the
  // UCX PUT (wire::EncodePutPayload). With `device`, `bytes` is device memory copied by the
  // device straight into the connection's staging file (one D2H, no pinned copy).
  absl::StatusOr<DataPlane::PutOutcome> Put(store::transport::wire::PutHeader header,
                                            absl::Span<const uint8_t> metadata,
                                            absl::Span<const uint8_t> bytes, absl::Time deadline,
                                            const DeviceTarget* device = nullptr);

 private:
  struct Connection {
    store::transport::same_host::Fd fd;
    std::byte* staging = nullptr;
    uint64_t staging_bytes = 0;
    ~Connection();
  };
  // A connection's descriptors and the arena's, as HELLO_REPLY gave them.
  struct Greeting;

  explicit SameHostChannel(Options options) : options_(std::move(options)) {}
  static absl::StatusOr<Greeting> Hello(const Options& options, absl::Time deadline);
  absl::StatusOr<std::unique_ptr<Connection>> Take(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  void Give(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mu_);
  // A connection whose call failed in transit: closed, its slot freed.
  void Drop(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mu_);
  // Adopts a new connection's greeting: the same arena file as the first, else UNAVAILABLE
  // (the node restarted).
  absl::StatusOr<std::unique_ptr<Connection>> Adopt(Greeting greeting);
  // Read's work; use_hbm: device-to-device copies from HBM items where offered;
  // *hbm_failed: one of those did not verify.
  absl::Status ReadOnce(store::transport::wire::ReadHeader header,
                        absl::Span<const uint8_t> payload, absl::Span<const PlannedRange> ranges,
                        absl::Span<const store::transport::wire::ReadRangeBits> wire_ranges,
                        uint64_t chunk_bytes, uint32_t num_layers,
                        const Client::LayerCallback* on_layer, absl::Time deadline, bool* delivered,
                        uint64_t* checksum_failures, const DeviceTarget* device, bool use_hbm,
                        bool* hbm_failed);
  // The node's HBM pool opened on `device` (once; a device that cannot open it is not asked
  // again): its base, or null.
  const std::byte* HbmOn(gpu::Device& device) ABSL_LOCKS_EXCLUDED(register_mu_);

  const Options options_;
  const std::byte* arena_ = nullptr;
  uint64_t arena_bytes_ = 0;
  uint64_t arena_dev_ = 0;
  uint64_t arena_ino_ = 0;
  uint64_t staging_bytes_ = 0;
  std::string hbm_handle_;  // empty: the node does not share its HBM tier
  uint64_t hbm_bytes_ = 0;
  std::atomic<uint64_t> next_request_{1};

  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // connections idle or in use
  absl::Mutex register_mu_;
  // Devices the arena is registered with, and those that refused it.
  std::vector<gpu::Device*> registered_ ABSL_GUARDED_BY(register_mu_);
  std::vector<gpu::Device*> unregistrable_ ABSL_GUARDED_BY(register_mu_);
  // Devices the HBM pool is open on (with its base there), and those that could not.
  std::vector<std::pair<gpu::Device*, void*>> hbm_open_ ABSL_GUARDED_BY(register_mu_);
  std::vector<gpu::Device*> hbm_unopenable_ ABSL_GUARDED_BY(register_mu_);
};

}  // namespace strata::client_internal
