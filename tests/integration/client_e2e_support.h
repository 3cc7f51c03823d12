// Shared pieces of the libstrata end-to-end tests (client_*_test.cc): a node process with its
// UCX data plane on an ephemeral port, a client of it, a KV layout big enough for real
// transfers and small enough for a slow machine, deterministic tokens, and the reference
// model's bytes to compare against.
//
// Functions; thread-safe except where noted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/testing/node_process.h"
#include "strata/worker/reference_model.h"

namespace strata::integration {

// 4 layers x 2 KV heads x 32 dims, bfloat16, 16-token pages: a layer-page (chunk) is
// 4 KiB, a page of all layers 16 KiB.
KvLayout ClientTestLayout();
Namespace ClientTestNamespace(const std::string& tenant);

// A strata-node with its data plane on 127.0.0.1:0 and UCX_TLS = `ucx_tls` (empty: UCX's
// default), `dram_bytes` of DRAM tier, and `extra_args` (node flags; a --grpc_listen or
// --dataplane_listen there replaces the 127.0.0.1:0 default).
absl::StatusOr<std::unique_ptr<strata::testing::NodeProcess>> StartNodeWithDataPlane(
    const std::string& ucx_tls, uint64_t dram_bytes = uint64_t{64} << 20,
    const std::vector<std::string>& extra_args = {});

// A strata-node with its data plane on 127.0.0.1:0 and `args`, not waited on for Health
// (a node with tenants or TLS answers the fixture's plain, tokenless Health with an error).
absl::StatusOr<std::unique_ptr<strata::testing::NodeProcess>> StartSecuredNode(
    const std::vector<std::string>& args);

// Options of a client of `node` over `ucx_tls`, with short retries for tests.
// ucx_tls: UCX transports (UCX_TLS syntax; the same-host channel off), or kSameHost, or
// kTcpDeviceDirect. Reads into device memory: through the pinned staging pool
// (ClientOptions::device_direct off) except with kTcpDeviceDirect (UCX over TCP, received
// straight into the device memory and verified there) and kSameHost (DMA from the arena).
inline constexpr char kSameHost[] = "same-host";
inline constexpr char kTcpDeviceDirect[] = "tcp-device-direct";
ClientOptions ClientOptionsFor(const std::string& grpc_address, const std::string& ucx_tls);
// A test name for a ClientOptionsFor transport: "Tcp", "SharedMemory" (UCX shm + CMA),
// "SameHost", "TcpDeviceDirect".
std::string TransportTestName(const std::string& ucx_tls);

// `count` tokens drawn from a fixed-seed generator (ids < 50,000).
std::vector<TokenId> RandomTokens(uint64_t seed, size_t count);

// The reference model (seed 42) of ClientTestLayout().
const worker::ReferenceModel& TestModel();

// The model's KV of pages [first_page, first_page + num_pages) of `tokens`, as a blob of
// num_pages pages (the layout Read delivers). Fails the test on error.
std::vector<std::byte> ModelBytes(const std::vector<TokenId>& tokens, uint32_t first_page,
                                  uint32_t num_pages);

// Host descriptors of a byte vector.
inline MemoryDescriptor Host(std::vector<std::byte>& bytes) {
  return MemoryDescriptor::Host(bytes.data(), bytes.size());
}
inline MemoryDescriptor Source(const std::vector<std::byte>& bytes) {
  return MemoryDescriptor::Host(static_cast<const void*>(bytes.data()), bytes.size());
}

// "Device" memory of a gpu::Device (the host device in CI) for the device-path tests. Each
// call fails the test on a device error.
class DeviceMemory {
 public:
  explicit DeviceMemory(std::shared_ptr<gpu::Device> device) : device_(std::move(device)) {}
  // A buffer holding `bytes` (copied in by the device), or of `size` bytes set to 0xEE.
  gpu::DeviceBuffer With(const std::vector<std::byte>& bytes);
  gpu::DeviceBuffer Of(size_t size);
  // [offset, offset + size) of `buffer`, copied out by the device.
  std::vector<std::byte> HostCopy(const gpu::DeviceBuffer& buffer, size_t offset, size_t size);
  // The buffer as a kDevice descriptor of device 0.
  static MemoryDescriptor Descriptor(const gpu::DeviceBuffer& buffer) {
    return MemoryDescriptor::CudaDevice(buffer.data(), buffer.size(), 0);
  }
  // ClientOptions::open_device answering this device for ordinal 0.
  std::function<absl::StatusOr<std::shared_ptr<gpu::Device>>(int)> Opener() const;

 private:
  std::shared_ptr<gpu::Device> device_;
};

// A conversation of `turns` turns of `pages` pages (ClientTestLayout), each written from
// device memory holding the model's KV; its whole token sequence.
std::vector<TokenId> WriteTurnsFromDevice(Client& client, DeviceMemory& memory, const Namespace& ns,
                                          uint32_t turns, uint32_t pages, uint64_t seed);

}  // namespace strata::integration
