#include "client_e2e_support.h"

#include <optional>
#include <random>

#include "glog/logging.h"

namespace strata::integration {

using strata::testing::NodeProcess;
using strata::testing::NodeProcessOptions;

KvLayout ClientTestLayout() {
  return KvLayout{.num_layers = 4,
                  .num_kv_heads = 2,
                  .head_dim = 32,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

Namespace ClientTestNamespace(const std::string& tenant) {
  return Namespace::Create(tenant, "org/reference-4l", ClientTestLayout()).value();
}

absl::StatusOr<std::unique_ptr<NodeProcess>> StartNodeWithDataPlane(
    const std::string& ucx_tls, uint64_t dram_bytes, const std::vector<std::string>& extra_args) {
  NodeProcessOptions options;
  // The listen defaults (127.0.0.1:0) apply unless extra_args names the flag.
  options.default_listen_and_dram = true;
  options.args = {"--dram_bytes=" + std::to_string(dram_bytes)};
  options.args.insert(options.args.end(), extra_args.begin(), extra_args.end());
  if (!ucx_tls.empty()) {
    options.env["UCX_TLS"] = ucx_tls == kSameHost || ucx_tls == kTcpDeviceDirect ? "tcp" : ucx_tls;
  }
  return NodeProcess::Start(std::move(options));
}

absl::StatusOr<std::unique_ptr<NodeProcess>> StartSecuredNode(
    const std::vector<std::string>& args) {
  NodeProcessOptions options;
  options.args = {"--dataplane_listen=127.0.0.1:0"};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.wait_for_health = false;
  return NodeProcess::Start(std::move(options));
}

ClientOptions ClientOptionsFor(const std::string& grpc_address, const std::string& ucx_tls) {
  ClientOptions options;
  options.node = grpc_address;
  // "same-host": the node's same-host channel (UCX over TCP where it cannot be used);
  // anything else names UCX transports and keeps the channel off.
  options.same_host = ucx_tls == kSameHost;
  options.device_direct = ucx_tls == kTcpDeviceDirect;
  options.ucx_transports = options.same_host || options.device_direct ? "tcp" : ucx_tls;
  options.default_timeout = absl::Seconds(30);  // ASan on a shared 2-core machine
  options.retry.initial_backoff = absl::Milliseconds(20);
  options.retry.max_backoff = absl::Milliseconds(200);
  return options;
}

std::string TransportTestName(const std::string& ucx_tls) {
  if (ucx_tls == "tcp") return "Tcp";
  if (ucx_tls == kTcpDeviceDirect) return "TcpDeviceDirect";
  return ucx_tls == kSameHost ? "SameHost" : "SharedMemory";
}

std::vector<TokenId> RandomTokens(uint64_t seed, size_t count) {
  std::mt19937_64 rng(seed);
  std::vector<TokenId> tokens(count);
  for (TokenId& t : tokens) t = static_cast<TokenId>(rng() % 50000);
  return tokens;
}

const worker::ReferenceModel& TestModel() {
  static const worker::ReferenceModel* model =
      worker::ReferenceModel::Create(ClientTestLayout(), 42).value().release();
  return *model;
}

namespace {

void Must(const absl::Status& status) { CHECK(status.ok()) << status; }

}  // namespace

gpu::DeviceBuffer DeviceMemory::With(const std::vector<std::byte>& bytes) {
  absl::StatusOr<gpu::DeviceBuffer> buffer = device_->Allocate(bytes.size());
  CHECK(buffer.ok()) << buffer.status();
  absl::StatusOr<gpu::Stream> stream = device_->CreateStream();
  CHECK(stream.ok()) << stream.status();
  Must(device_->CopyToDeviceAsync(buffer->data(), bytes.data(), bytes.size(), *stream));
  Must(device_->Synchronize(*stream));
  return *std::move(buffer);
}

gpu::DeviceBuffer DeviceMemory::Of(size_t size) {
  absl::StatusOr<gpu::DeviceBuffer> buffer = device_->Allocate(size);
  CHECK(buffer.ok()) << buffer.status();
  absl::StatusOr<gpu::Stream> stream = device_->CreateStream();
  CHECK(stream.ok()) << stream.status();
  Must(device_->MemsetAsync(buffer->data(), 0xEE, size, *stream));
  Must(device_->Synchronize(*stream));
  return *std::move(buffer);
}

std::vector<std::byte> DeviceMemory::HostCopy(const gpu::DeviceBuffer& buffer, size_t offset,
                                              size_t size) {
  std::vector<std::byte> out(size);
  absl::StatusOr<gpu::Stream> stream = device_->CreateStream();
  CHECK(stream.ok()) << stream.status();
  Must(device_->CopyToHostAsync(out.data(), static_cast<std::byte*>(buffer.data()) + offset, size,
                                *stream));
  Must(device_->Synchronize(*stream));
  return out;
}

std::function<absl::StatusOr<std::shared_ptr<gpu::Device>>(int)> DeviceMemory::Opener() const {
  return [device = device_](int ordinal) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
    if (ordinal != 0) return absl::UnavailableError("one device here");
    return device;
  };
}

std::vector<TokenId> WriteTurnsFromDevice(Client& client, DeviceMemory& memory, const Namespace& ns,
                                          uint32_t turns, uint32_t pages, uint64_t seed) {
  const uint32_t page_tokens = ClientTestLayout().page_tokens;
  const std::vector<TokenId> tokens = RandomTokens(seed, size_t{turns} * pages * page_tokens);
  std::optional<Parent> parent;
  for (uint32_t t = 0; t < turns; ++t) {
    const std::vector<TokenId> own(tokens.begin() + size_t{t} * pages * page_tokens,
                                   tokens.begin() + size_t{t + 1} * pages * page_tokens);
    const gpu::DeviceBuffer kv = memory.With(ModelBytes(tokens, t * pages, pages));
    absl::StatusOr<WriteResult> written =
        client.Write(ns, parent, own, DeviceMemory::Descriptor(kv));
    CHECK(written.ok()) << written.status();
    parent = Parent{written->key, (t + 1) * pages};
  }
  return tokens;
}

std::vector<std::byte> ModelBytes(const std::vector<TokenId>& tokens, uint32_t first_page,
                                  uint32_t num_pages) {
  absl::StatusOr<std::vector<std::byte>> bytes = TestModel().ComputeBlobBytes(
      radix::WholePagePrefix(tokens, ClientTestLayout().page_tokens), first_page, num_pages);
  CHECK(bytes.ok()) << bytes.status();
  return *std::move(bytes);
}

}  // namespace strata::integration
