// strata.Client (python/README.md): libstrata's Client with the GIL released while it works.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include "client/cli/blob_format.h"
#include "client/cli/json_output.h"
#include "client/cli/tier_format.h"
#include "pybind11/functional.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "strata/cluster_client.h"
#include "strata/gpu/device.h"

namespace strata::python {
namespace {

py::object JsonToPython(const cli::Json& json) {
  return py::module_::import("json").attr("loads")(cli::DumpJson(json));
}

py::dict StatsDict(const ClientStats& s) {
  py::dict d;
  d["rpcs"] = s.rpcs;
  d["rpc_retries"] = s.rpc_retries;
  d["reads"] = s.reads;
  d["bytes_read"] = s.bytes_read;
  d["writes_committed"] = s.writes_committed;
  d["writes_existing"] = s.writes_existing;
  d["bytes_written"] = s.bytes_written;
  d["checksum_failures"] = s.checksum_failures;
  d["device_reads_staged"] = s.device_reads_staged;
  d["device_reads_direct"] = s.device_reads_direct;
  d["device_reads_received"] = s.device_reads_received;
  d["device_bytes_from_hbm"] = s.device_bytes_from_hbm;
  d["device_writes"] = s.device_writes;
  d["device_writes_direct"] = s.device_writes_direct;
  d["same_host_reads"] = s.same_host_reads;
  d["same_host_writes"] = s.same_host_writes;
  return d;
}

// Segments from a MatchResult or a list of Segments.
std::vector<Segment> SegmentsFrom(const py::handle& match) {
  if (py::isinstance<MatchResult>(match)) return match.cast<const MatchResult&>().segments;
  return match.cast<std::vector<Segment>>();
}

uint32_t PagesFor(const py::handle& match, const py::object& pages) {
  if (!pages.is_none()) return pages.cast<uint32_t>();
  if (py::isinstance<MatchResult>(match)) return match.cast<const MatchResult&>().ReadablePages();
  throw StatusError(absl::InvalidArgumentError("pages: required when reading a list of segments"));
}

// A concurrent.futures.Future that cannot be cancelled any more (strata resolves it).
py::object NewFuture() {
  py::object future = py::module_::import("concurrent.futures").attr("Future")();
  future.attr("set_running_or_notify_cancel")();
  return future;
}

// What an async call keeps alive until its callback: the future and the borrowed memory.
// Created and destroyed with the GIL held.
struct AsyncCall {
  py::object future;
  std::vector<BorrowedBuffer> buffers;
};

class PyClient {
 public:
  explicit PyClient(std::shared_ptr<Client> client) : client_(std::move(client)) {}
  ~PyClient() { Close(); }

  // Waits for async calls in flight (their callbacks need the GIL: released meanwhile).
  void Close() {
    std::shared_ptr<Client> client;
    {
      absl::MutexLock lock(&mu_);
      client = std::move(client_);
    }
    py::gil_scoped_release release;
    client.reset();
  }
  bool closed() const {
    absl::MutexLock lock(&mu_);
    return client_ == nullptr;
  }

  // Runs f(client) with the GIL released; the client cannot go away under it, and when Close ran
  // meanwhile the last reference is dropped here, unlocked (its destructor waits for callbacks
  // that take the GIL). f must not throw.
  template <typename F>
  auto Run(F&& f) {
    std::shared_ptr<Client> client = Get();
    py::gil_scoped_release release;
    auto result = f(*client);
    client.reset();  // may be the last reference (Close ran meanwhile): destroyed unlocked
    return result;
  }

  std::shared_ptr<Client> Get() const {
    absl::MutexLock lock(&mu_);
    if (client_ == nullptr)
      throw StatusError(absl::FailedPreconditionError("the client is closed"));
    return client_;
  }

  // Device memory for this client's devices (ClientOptions::open_device).
  std::function<absl::StatusOr<std::shared_ptr<gpu::Device>>(int)> open_device;

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<Client> client_;
};

// Memory of one of the client's devices (Client.allocate_device): for callers without
// torch, and for tests on the host device.
struct PyDeviceBuffer {
  std::shared_ptr<gpu::Device> device;
  gpu::DeviceBuffer buffer;
  int ordinal = 0;

  DeviceMemory memory() const {
    return DeviceMemory{reinterpret_cast<uintptr_t>(buffer.data()), buffer.size(),
                        MemoryKind::kDevice, ordinal};
  }
  void Copy(py::handle host, bool to_device) {
    BorrowedBuffer b = BorrowBuffer(host, to_device ? Access::kRead : Access::kWrite, "host");
    if (b.memory().kind == MemoryKind::kDevice || b.memory().bytes != buffer.size()) {
      throw StatusError(absl::InvalidArgumentError(absl::StrCat(
          "host: needs ", buffer.size(), " bytes of host memory, got ", b.memory().bytes)));
    }
    py::gil_scoped_release release;
    auto stream = device->CreateStream();
    ThrowIfError(stream.status());
    ThrowIfError(
        to_device ? device->CopyToDeviceAsync(buffer.data(), b.memory().ptr, buffer.size(), *stream)
                  : device->CopyToHostAsync(b.memory().ptr, buffer.data(), buffer.size(), *stream));
    ThrowIfError(device->Synchronize(*stream));
  }
};

std::optional<Parent> ParentFrom(const py::object& parent) {
  if (parent.is_none()) return std::nullopt;
  return parent.cast<Parent>();
}

std::unique_ptr<PyClient> MakeClient(const py::object& node, const py::object& cluster,
                                     const py::object& cluster_nodes, const py::object& token,
                                     const py::object& timeout, const py::object& ucx_transports,
                                     const py::object& same_host, const py::object& device_direct,
                                     const py::object& async_threads,
                                     const py::object& reads_in_flight, bool wait_for_node,
                                     const py::object& segment_pages,
                                     const py::object& text_replicas, bool host_device) {
  ClientOptions options = ClientOptions::FromEnvironment();
  if (!node.is_none()) options.node = node.cast<std::string>();
  if (!cluster.is_none()) {
    options.cluster = cluster.cast<std::string>();
  } else if (!cluster_nodes.is_none()) {
    options.cluster_nodes = cluster_nodes.cast<std::vector<std::string>>();
  } else if (node.is_none()) {
    const char* env = std::getenv("STRATA_CLUSTER");
    if (env != nullptr && *env != '\0') options.cluster = env;
  }
  if (!token.is_none()) options.token = token.cast<std::string>();
  if (!timeout.is_none()) options.default_timeout = absl::Seconds(timeout.cast<double>());
  if (!ucx_transports.is_none()) options.ucx_transports = ucx_transports.cast<std::string>();
  if (!same_host.is_none()) options.same_host = same_host.cast<bool>();
  if (!device_direct.is_none()) options.device_direct = device_direct.cast<bool>();
  if (!async_threads.is_none()) options.async_threads = async_threads.cast<int>();
  if (!reads_in_flight.is_none()) options.reads_in_flight = reads_in_flight.cast<int>();
  if (!segment_pages.is_none()) options.segment_pages = segment_pages.cast<uint32_t>();
  if (!text_replicas.is_none()) options.text_replicas = text_replicas.cast<uint32_t>();
  options.wait_for_node = wait_for_node;
  if (host_device) {
    // One host "device" for every ordinal, shared with allocate_device.
    auto device = std::shared_ptr<gpu::Device>(ValueOrThrow(gpu::CreateHostDevice()));
    options.open_device = [device](int) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
      return device;
    };
  }
  auto open_device = options.open_device;
  absl::StatusOr<std::unique_ptr<Client>> client;
  {
    py::gil_scoped_release release;
    client = Client::Connect(std::move(options));
  }
  auto out = std::make_unique<PyClient>(std::shared_ptr<Client>(ValueOrThrow(std::move(client))));
  out->open_device =
      open_device ? open_device : [](int n) -> absl::StatusOr<std::shared_ptr<gpu::Device>> {
    auto device = gpu::OpenCudaDevice(n);
    if (!device.ok()) return device.status();
    return std::shared_ptr<gpu::Device>(*std::move(device));
  };
  return out;
}

// The layer callback of read_layers: calls the Python function with the GIL, keeping the
// first exception it raised to re-raise after the read.
struct LayerCalls {
  py::function on_layer;
  std::optional<py::error_already_set> raised;

  absl::Status operator()(uint32_t layer) {
    py::gil_scoped_acquire gil;
    try {
      on_layer(layer);
      return absl::OkStatus();
    } catch (py::error_already_set& e) {
      raised = std::move(e);
      return absl::CancelledError(absl::StrCat("on_layer raised at layer ", layer));
    }
  }
};

}  // namespace

CallOptions CallFromTimeout(const py::object& timeout) {
  if (timeout.is_none()) return CallOptions{};
  return CallOptions::WithTimeout(absl::Seconds(timeout.cast<double>()));
}

void BindClient(py::module_& m) {
  py::class_<PyDeviceBuffer>(m, "DeviceBuffer", R"doc(
Memory of one of the client's devices (``Client.allocate_device``): a CUDA allocation, or
host memory standing in for one on a client made with ``host_device=True``. Pass
``buffer.memory()`` (or the buffer itself) where a buffer is wanted.)doc")
      .def_property_readonly("nbytes", [](const PyDeviceBuffer& b) { return b.buffer.size(); })
      .def_property_readonly("device", [](const PyDeviceBuffer& b) { return b.ordinal; })
      .def("memory", &PyDeviceBuffer::memory, "This buffer as a DeviceMemory.")
      .def("__strata_memory__", &PyDeviceBuffer::memory)
      .def(
          "copy_from_host", [](PyDeviceBuffer& b, py::handle host) { b.Copy(host, true); },
          py::arg("host"), "Copies exactly nbytes bytes of host memory into the buffer.")
      .def(
          "copy_to_host", [](PyDeviceBuffer& b, py::handle host) { b.Copy(host, false); },
          py::arg("host"), "Copies the buffer into exactly nbytes bytes of writable host memory.");

  py::class_<PyClient>(m, "_Client")
      .def(py::init(&MakeClient), py::arg("node") = py::none(), py::kw_only(),
           py::arg("cluster") = py::none(), py::arg("cluster_nodes") = py::none(),
           py::arg("token") = py::none(), py::arg("timeout") = py::none(),
           py::arg("ucx_transports") = py::none(), py::arg("same_host") = py::none(),
           py::arg("device_direct") = py::none(), py::arg("async_threads") = py::none(),
           py::arg("reads_in_flight") = py::none(), py::arg("wait_for_node") = false,
           py::arg("segment_pages") = py::none(), py::arg("text_replicas") = py::none(),
           py::arg("host_device") = false)
      .def("close", &PyClient::Close)
      .def_property_readonly("closed", &PyClient::closed)
      .def_property_readonly(
          "node",
          [](PyClient& c) { return c.Run([](Client& client) { return client.options().node; }); })
      .def_property_readonly(
          "on_cluster",
          [](PyClient& c) {
            return c.Run([](Client& client) { return client.options().on_cluster(); });
          })

      // ------------------------------------------------------------ prefix cache
      .def(
          "match",
          [](PyClient& c, const Namespace& ns, py::handle tokens, LookupPhase phase,
             const py::object& timeout) {
            std::vector<TokenId> ids = TokensFrom(tokens);
            CallOptions call = CallFromTimeout(timeout);
            return ValueOrThrow(
                c.Run([&](Client& client) { return client.Match(ns, ids, phase, call); }));
          },
          py::arg("ns"), py::arg("tokens"), py::kw_only(),
          py::arg("phase") = LookupPhase::kUnspecified, py::arg("timeout") = py::none(),
          R"doc(The longest cached prefix of `tokens` (from page 0; a trailing partial page is ignored). NotFound: the node has never seen the namespace (a cold node: treat it as a miss).)doc")
      .def(
          "match_many",
          [](PyClient& c, const Namespace& ns, const py::list& token_lists,
             bool stop_at_first_short, LookupPhase phase, const py::object& timeout) {
            std::vector<std::vector<TokenId>> tokens;
            tokens.reserve(token_lists.size());
            for (py::handle t : token_lists) tokens.push_back(TokensFrom(t));
            std::vector<SegmentQuery> queries;
            for (const auto& t : tokens) queries.push_back(SegmentQuery{std::nullopt, t});
            CallOptions call = CallFromTimeout(timeout);
            return ValueOrThrow(c.Run([&](Client& client) {
              return client.MatchSegments(ns, queries, phase, stop_at_first_short, call);
            }));
          },
          py::arg("ns"), py::arg("token_lists"), py::kw_only(),
          py::arg("stop_at_first_short") = false, py::arg("phase") = LookupPhase::kUnspecified,
          py::arg("timeout") = py::none(),
          R"doc(Several independent lookups (each a sequence from page 0) in one call to the node,
answered in order. stop_at_first_short: the node stops after the first answer that does not
cover all its query's whole pages (fewer answers come back) — "how many leading keys exist"
in one round trip. A node's own call (Unimplemented on a cluster client).)doc")
      .def(
          "read",
          [](PyClient& c, const Namespace& ns, py::handle match, py::handle destination,
             const py::object& pages, const py::object& timeout) {
            std::vector<Segment> segments = SegmentsFrom(match);
            const uint32_t n = PagesFor(match, pages);
            BorrowedBuffer dest = BorrowBuffer(destination, Access::kWrite, "destination");
            CallOptions call = CallFromTimeout(timeout);
            ThrowIfError(c.Run(
                [&](Client& client) { return client.Read(ns, segments, n, dest.memory(), call); }));
          },
          py::arg("ns"), py::arg("match"), py::arg("destination"), py::kw_only(),
          py::arg("pages") = py::none(), py::arg("timeout") = py::none(),
          R"doc(Reads `pages` pages (default: match.readable_pages) of a match into `destination` (exactly ns.layout.pages_bytes(pages) bytes, layer-major). Every chunk is verified against its checksum as it lands (DataLoss otherwise). NotFound: a blob was evicted since the match (a miss: match again), or a TEXT segment lies inside the pages.)doc")
      .def(
          "read_layers",
          [](PyClient& c, const Namespace& ns, py::handle match, py::handle destination,
             py::function on_layer, const py::object& pages, const py::object& timeout) {
            std::vector<Segment> segments = SegmentsFrom(match);
            const uint32_t n = PagesFor(match, pages);
            BorrowedBuffer dest = BorrowBuffer(destination, Access::kWrite, "destination");
            CallOptions call = CallFromTimeout(timeout);
            LayerCalls calls{std::move(on_layer), std::nullopt};
            absl::Status status = c.Run([&](Client& client) {
              return client.ReadLayers(ns, segments, n, dest.memory(), std::ref(calls), call);
            });
            if (calls.raised) throw *calls.raised;
            ThrowIfError(status);
          },
          py::arg("ns"), py::arg("match"), py::arg("destination"), py::arg("on_layer"),
          py::kw_only(), py::arg("pages") = py::none(), py::arg("timeout") = py::none(),
          R"doc(read, layer by layer: on_layer(l) runs on this thread as soon as layer l of every segment has landed and verified, while later layers are in flight. An exception on_layer raises stops the read and is re-raised.)doc")
      .def(
          "read_ranges",
          [](PyClient& c, const Namespace& ns, const std::vector<ReadRange>& ranges,
             const py::list& destinations, const py::object& timeout) {
            std::vector<BorrowedBuffer> buffers;
            std::vector<MemoryDescriptor> memory;
            for (py::handle d : destinations) {
              buffers.push_back(BorrowBuffer(d, Access::kWrite, "destinations[i]"));
              memory.push_back(buffers.back().memory());
            }
            CallOptions call = CallFromTimeout(timeout);
            ThrowIfError(
                c.Run([&](Client& client) { return client.Read(ns, ranges, memory, call); }));
          },
          py::arg("ns"), py::arg("ranges"), py::arg("destinations"), py::kw_only(),
          py::arg("timeout") = py::none(),
          R"doc(Reads ranges[i] (pages of every layer of one blob) into destinations[i] (exactly pages_bytes(range.num_pages) bytes each), under one lease.)doc")
      .def(
          "read_batch",
          [](PyClient& c, const Namespace& ns, const py::list& items, const py::object& timeout) {
            std::vector<BorrowedBuffer> buffers;
            std::vector<ReadItem> read_items;
            for (py::handle item : items) {
              auto pair = item.cast<py::tuple>();
              if (pair.size() != 2)
                throw StatusError(absl::InvalidArgumentError("items: (ReadRange, buffer) pairs"));
              buffers.push_back(BorrowBuffer(pair[1], Access::kWrite, "items[i] destination"));
              read_items.push_back(ReadItem{pair[0].cast<ReadRange>(), buffers.back().memory()});
            }
            CallOptions call = CallFromTimeout(timeout);
            std::vector<absl::Status> results =
                c.Run([&](Client& client) { return client.ReadBatch(ns, read_items, call); });
            py::list out;
            for (const absl::Status& s : results)
              out.append(s.ok() ? py::none() : StatusToException(s));
            return out;
          },
          py::arg("ns"), py::arg("items"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Reads (ReadRange, destination) pairs; one result per item: None, or the strata.Error of that item (one miss does not fail the others).)doc")
      .def(
          "write",
          [](PyClient& c, const Namespace& ns, py::handle tokens, py::handle source,
             const py::object& parent, const py::object& timeout) {
            std::vector<TokenId> ids = TokensFrom(tokens);
            std::optional<Parent> from = ParentFrom(parent);
            BorrowedBuffer src = BorrowBuffer(source, Access::kRead, "source");
            CallOptions call = CallFromTimeout(timeout);
            return ValueOrThrow(c.Run(
                [&](Client& client) { return client.Write(ns, from, ids, src.memory(), call); }));
          },
          py::arg("ns"), py::arg("tokens"), py::arg("source"), py::kw_only(),
          py::arg("parent") = py::none(), py::arg("timeout") = py::none(),
          R"doc(Writes one blob: `tokens` (whole pages) continuing `parent` (None: from page 0), its KV in `source` (pages_bytes(pages) bytes, layer-major). Chunk checksums are computed here; nothing is sent when the key exists (result.existed).)doc")
      .def(
          "write_batch",
          [](PyClient& c, const Namespace& ns, const py::list& items, const py::object& timeout) {
            std::vector<std::vector<TokenId>> tokens;
            std::vector<BorrowedBuffer> buffers;
            std::vector<WriteItem> write_items;
            tokens.reserve(items.size());
            for (py::handle item : items) {
              auto t = item.cast<py::tuple>();
              if (t.size() != 2 && t.size() != 3) {
                throw StatusError(
                    absl::InvalidArgumentError("items: (tokens, source[, parent]) tuples"));
              }
              WriteItem w;
              tokens.push_back(TokensFrom(t[0]));
              buffers.push_back(BorrowBuffer(t[1], Access::kRead, "items[i] source"));
              w.tokens = tokens.back();
              w.source = buffers.back().memory();
              if (t.size() == 3 && !t[2].is_none()) {
                if (py::isinstance<py::int_>(t[2])) {
                  w.parent_item = t[2].cast<size_t>();
                } else {
                  w.parent = t[2].cast<Parent>();
                }
              }
              write_items.push_back(std::move(w));
            }
            CallOptions call = CallFromTimeout(timeout);
            auto results =
                c.Run([&](Client& client) { return client.WriteBatch(ns, write_items, call); });
            py::list out;
            for (auto& r : results)
              out.append(r.ok() ? py::cast(*r) : StatusToException(r.status()));
            return out;
          },
          py::arg("ns"), py::arg("items"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Writes (tokens, source[, parent]) tuples; parent is a Parent or the index of an earlier item (continue from its end). One result per item: a WriteResult or the strata.Error of that item.)doc")

      // ------------------------------------------------------------ async forms
      .def(
          "read_ranges_async",
          [](PyClient& c, const Namespace& ns, const std::vector<ReadRange>& ranges,
             const py::list& destinations, const py::object& timeout) {
            auto state = std::make_shared<AsyncCall>();
            state->future = NewFuture();
            std::vector<MemoryDescriptor> memory;
            for (py::handle d : destinations) {
              state->buffers.push_back(BorrowBuffer(d, Access::kWrite, "destinations[i]"));
              memory.push_back(state->buffers.back().memory());
            }
            py::object future = state->future;
            CallOptions call = CallFromTimeout(timeout);
            c.Run([&](Client& client) {
              client.ReadAsync(ns, ranges, memory, call, [state](absl::Status status) mutable {
                py::gil_scoped_acquire gil;
                std::shared_ptr<AsyncCall> s = std::move(state);
                s->buffers.clear();
                if (status.ok()) {
                  s->future.attr("set_result")(py::none());
                } else {
                  s->future.attr("set_exception")(StatusToException(status));
                }
                s.reset();
              });
              return 0;
            });
            return future;
          },
          py::arg("ns"), py::arg("ranges"), py::arg("destinations"), py::kw_only(),
          py::arg("timeout") = py::none(),
          R"doc(read_ranges on the client's async threads: a concurrent.futures.Future of None (or the error). The destinations stay borrowed until it resolves.)doc")
      .def(
          "write_async",
          [](PyClient& c, const Namespace& ns, py::handle tokens, py::handle source,
             const py::object& parent, const py::object& timeout) {
            auto state = std::make_shared<AsyncCall>();
            state->future = NewFuture();
            std::vector<TokenId> ids = TokensFrom(tokens);
            std::optional<Parent> from = ParentFrom(parent);
            state->buffers.push_back(BorrowBuffer(source, Access::kRead, "source"));
            const MemoryDescriptor memory = state->buffers.back().memory();
            py::object future = state->future;
            CallOptions call = CallFromTimeout(timeout);
            c.Run([&](Client& client) {
              client.WriteAsync(
                  ns, from, ids, memory, call, [state](absl::StatusOr<WriteResult> result) mutable {
                    py::gil_scoped_acquire gil;
                    std::shared_ptr<AsyncCall> s = std::move(state);
                    s->buffers.clear();
                    if (result.ok()) {
                      s->future.attr("set_result")(py::cast(*result));
                    } else {
                      s->future.attr("set_exception")(StatusToException(result.status()));
                    }
                    s.reset();
                  });
              return 0;
            });
            return future;
          },
          py::arg("ns"), py::arg("tokens"), py::arg("source"), py::kw_only(),
          py::arg("parent") = py::none(), py::arg("timeout") = py::none(),
          R"doc(write on the client's async threads: a concurrent.futures.Future of the WriteResult. The source stays borrowed until it resolves.)doc")

      // ------------------------------------------------------------ rebuild from text
      .def(
          "prefetch",
          [](PyClient& c, const Namespace& ns, py::handle tokens, const py::object& timeout) {
            std::vector<TokenId> ids = TokensFrom(tokens);
            CallOptions call = CallFromTimeout(timeout);
            PrefetchResult r =
                ValueOrThrow(c.Run([&](Client& client) { return client.Prefetch(ns, ids, call); }));
            py::dict d;
            d["matched_pages"] = r.matched_pages;
            d["resident_pages"] = r.resident_pages;
            d["promotions"] = r.promotions;
            d["rebuilds_queued"] = r.rebuilds_queued;
            return d;
          },
          py::arg("ns"), py::arg("tokens"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Matches `tokens` and has the node get the prefix ready ahead of need (SSD blobs promoted to DRAM, TEXT blobs queued for rebuild); answers at once.)doc")
      .def(
          "request_rebuild",
          [](PyClient& c, const BlobKey& key, bool with_prefix, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            RebuildRequestResult r = ValueOrThrow(c.Run(
                [&](Client& client) { return client.RequestRebuild(key, with_prefix, call); }));
            py::dict d;
            d["queued"] = r.queued;
            d["already_queued"] = r.already_queued;
            d["resident"] = r.resident;
            return d;
          },
          py::arg("key"), py::kw_only(), py::arg("with_prefix") = true,
          py::arg("timeout") = py::none(),
          R"doc(Queues a rebuild of blob `key` if it is TEXT (with_prefix: of every TEXT blob on its path too). Idempotent.)doc")
      .def(
          "pull_rebuild_tasks",
          [](PyClient& c, uint32_t max_tasks, double wait, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            return ValueOrThrow(c.Run([&](Client& client) {
              return client.PullRebuildTasks(max_tasks, absl::Seconds(wait), call);
            }));
          },
          py::arg("max_tasks") = 16, py::kw_only(), py::arg("wait") = 1.0,
          py::arg("timeout") = py::none(),
          R"doc(For rebuild workers: up to max_tasks queued tasks, waiting up to `wait` seconds for the first. Fill each with write(task.ns, task.own_tokens(), bytes, parent=task.parent) before it expires.)doc")

      // ------------------------------------------------------------ blob and node admin
      .def(
          "stat",
          [](PyClient& c, const BlobKey& key, bool include_tokens, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            BlobInfo info = ValueOrThrow(
                c.Run([&](Client& client) { return client.Stat(key, include_tokens, call); }));
            return JsonToPython(cli::BlobInfoJson(info, include_tokens));
          },
          py::arg("key"), py::kw_only(), py::arg("include_tokens") = false,
          py::arg("timeout") = py::none(),
          R"doc(The node's record of a blob, as `strata stat --json` prints it.)doc")
      .def(
          "list_blobs",
          [](PyClient& c, const std::optional<Namespace>& ns, const std::string& page_token,
             uint32_t limit, const py::object& timeout) {
            ListOptions list;
            list.ns = ns;
            list.page_token = page_token;
            list.limit = limit;
            CallOptions call = CallFromTimeout(timeout);
            ListResult r =
                ValueOrThrow(c.Run([&](Client& client) { return client.List(list, call); }));
            py::list blobs;
            for (const BlobInfo& b : r.blobs)
              blobs.append(JsonToPython(cli::BlobInfoJson(b, false)));
            return py::make_tuple(blobs, r.next_page_token);
          },
          py::arg("ns") = py::none(), py::kw_only(), py::arg("page_token") = "",
          py::arg("limit") = 0, py::arg("timeout") = py::none(),
          R"doc(One page of blob records (of `ns`, or all): (records, next_page_token; '' on the last page).)doc")
      .def(
          "delete",
          [](PyClient& c, const BlobKey& key, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            DeleteResult r =
                ValueOrThrow(c.Run([&](Client& client) { return client.Delete(key, call); }));
            py::dict d;
            d["pages_removed"] = r.pages_removed;
            d["blobs_unlinked"] = r.blobs_unlinked;
            return d;
          },
          py::arg("key"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Removes the blob and everything cached below it from the index.)doc")
      .def(
          "pin",
          [](PyClient& c, const BlobKey& key, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            ThrowIfError(c.Run([&](Client& client) { return client.Pin(key, call); }));
          },
          py::arg("key"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Pins the blob's prefix path against eviction and delete.)doc")
      .def(
          "unpin",
          [](PyClient& c, const BlobKey& key, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            ThrowIfError(c.Run([&](Client& client) { return client.Unpin(key, call); }));
          },
          py::arg("key"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Unpins the blob's prefix path.)doc")
      .def(
          "tiers",
          [](PyClient& c, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            NodeTiers t = ValueOrThrow(c.Run([&](Client& client) { return client.Tiers(call); }));
            return JsonToPython(cli::NodeTiersJson(t));
          },
          py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Every tier's capacity, occupancy and counts, lookups by phase and the live miss-ratio curves, as `strata tiers --json` prints them.)doc")
      .def(
          "evict",
          [](PyClient& c, Tier tier, uint64_t bytes, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            EvictResult r = ValueOrThrow(
                c.Run([&](Client& client) { return client.Evict(tier, bytes, call); }));
            py::dict d;
            d["bytes_freed"] = r.bytes_freed;
            d["pages_evicted"] = r.pages_evicted;
            d["blobs_unlinked"] = r.blobs_unlinked;
            d["blobs_demoted"] = r.blobs_demoted;
            d["blobs_dropped"] = r.blobs_dropped;
            return d;
          },
          py::arg("tier"), py::arg("bytes"), py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(Evicts at least `bytes` from `tier` (DRAM: demoted to SSD or dropped to TEXT).)doc")
      .def(
          "health",
          [](PyClient& c, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            HealthInfo h = ValueOrThrow(c.Run([&](Client& client) { return client.Health(call); }));
            py::dict d;
            d["draining"] = h.draining;
            d["version"] = h.version;
            d["data_plane"] = h.data_plane;
            d["uptime_seconds"] = absl::ToDoubleSeconds(h.uptime);
            return d;
          },
          py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(The node's health: draining, version, data_plane, uptime_seconds.)doc")
      .def(
          "describe_data_plane",
          [](PyClient& c, const py::object& timeout) {
            CallOptions call = CallFromTimeout(timeout);
            return ValueOrThrow(
                c.Run([&](Client& client) { return client.DescribeDataPlane(call); }));
          },
          py::kw_only(), py::arg("timeout") = py::none(),
          R"doc(UCX's description of the data-plane connection (which transport each lane uses).)doc")
      .def(
          "cluster_nodes",
          [](PyClient& c) {
            py::list out;
            std::vector<ClusterNodeInfo> nodes = c.Run([](Client& client) {
              return client.cluster() == nullptr ? std::vector<ClusterNodeInfo>{}
                                                 : client.cluster()->Nodes();
            });
            for (const ClusterNodeInfo& n : nodes) {
              py::dict d;
              d["id"] = n.id;
              d["grpc_address"] = n.grpc_address;
              d["weight"] = n.weight;
              out.append(d);
            }
            return out;
          },
          R"doc(The cluster's nodes as this client routes to them (empty for a client of one node).)doc")

      // ------------------------------------------------------------ for python/bench
      // The C++ client's own loop, in this process, on the same client and buffers: what
      // python/bench/py_vs_cpp.py sets the Python calls against. Seconds of each call.
      .def(
          "_time_reads",
          [](PyClient& c, const Namespace& ns, const std::vector<ReadRange>& ranges,
             py::handle destination, int iterations) {
            BorrowedBuffer dest = BorrowBuffer(destination, Access::kWrite, "destination");
            std::vector<double> seconds;
            absl::Status status = c.Run([&](Client& client) {
              for (int i = 0; i < iterations; ++i) {
                const ReadRange& range = ranges[static_cast<size_t>(i) % ranges.size()];
                const MemoryDescriptor memory = dest.memory();
                const absl::Time start = absl::Now();
                absl::Status s = client.Read(ns, {&range, 1}, {&memory, 1});
                if (!s.ok()) return s;
                seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
              }
              return absl::OkStatus();
            });
            ThrowIfError(status);
            return seconds;
          },
          py::arg("ns"), py::arg("ranges"), py::arg("destination"), py::arg("iterations"))
      .def(
          "_time_writes",
          [](PyClient& c, const Namespace& ns, const py::list& token_lists, py::handle source) {
            std::vector<std::vector<TokenId>> tokens;
            for (py::handle t : token_lists) tokens.push_back(TokensFrom(t));
            BorrowedBuffer src = BorrowBuffer(source, Access::kRead, "source");
            std::vector<double> seconds;
            absl::Status status = c.Run([&](Client& client) {
              for (const auto& t : tokens) {
                const absl::Time start = absl::Now();
                absl::StatusOr<WriteResult> w = client.Write(ns, std::nullopt, t, src.memory());
                if (!w.ok()) return w.status();
                seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
              }
              return absl::OkStatus();
            });
            ThrowIfError(status);
            return seconds;
          },
          py::arg("ns"), py::arg("token_lists"), py::arg("source"))

      // ------------------------------------------------------------ memory
      .def(
          "register_memory",
          [](PyClient& c, py::handle memory) {
            BorrowedBuffer b = BorrowBuffer(memory, Access::kWrite, "memory");
            ThrowIfError(c.Run([&](Client& client) { return client.RegisterMemory(b.memory()); }));
          },
          py::arg("memory"),
          R"doc(Registers host memory that will be read into or written from many times with the transport.)doc")
      .def(
          "unregister_memory",
          [](PyClient& c, py::handle memory) {
            BorrowedBuffer b = BorrowBuffer(memory, Access::kRead, "memory");
            const void* ptr = b.memory().ptr;
            ThrowIfError(c.Run([&](Client& client) { return client.UnregisterMemory(ptr); }));
          },
          py::arg("memory"), R"doc(Drops the registration that starts at this memory.)doc")
      .def(
          "allocate_device",
          [](PyClient& c, size_t nbytes, int device) {
            auto dev = ValueOrThrow(c.open_device(device));
            PyDeviceBuffer out;
            out.buffer = ValueOrThrow(dev->Allocate(nbytes));
            out.device = std::move(dev);
            out.ordinal = device;
            return out;
          },
          py::arg("nbytes"), py::kw_only(), py::arg("device") = 0,
          R"doc(Memory of device `device` (CUDA; the host device with host_device=True), as a DeviceBuffer.)doc")
      .def(
          "stats",
          [](PyClient& c) {
            return StatsDict(c.Run([](Client& client) { return client.stats(); }));
          },
          R"doc(The client's counters since it connected.)doc");
}

}  // namespace strata::python
