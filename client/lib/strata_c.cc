#include "strata/strata_c.h"

#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "strata/base/status_code_name.h"
#include "strata/client.h"

struct strata_client {
  std::unique_ptr<strata::Client> client;
};

namespace {

thread_local std::string last_error;

int Report(const absl::Status& status) {
  last_error = std::string(status.message());
  return static_cast<int>(status.code());
}

int Invalid(const char* message) { return Report(absl::InvalidArgumentError(message)); }

strata::BlobKey KeyOf(strata_blob_key key) {
  return strata::BlobKey{strata::PrefixHash{key.hi, key.lo}};
}

strata_blob_key CKey(const strata::BlobKey& key) {
  return strata_blob_key{key.hash.hi, key.hash.lo};
}

strata::KvLayout LayoutOf(const strata_kv_layout& l) {
  return strata::KvLayout{l.num_layers,  l.num_kv_heads,
                          l.head_dim,    static_cast<strata::DType>(l.dtype),
                          l.page_tokens, static_cast<strata::KvFormat>(l.format),
                          l.tp_rank,     l.tp_world};
}

absl::StatusOr<strata::Namespace> NamespaceOf(const strata_namespace* ns) {
  if (ns == nullptr) return absl::InvalidArgumentError("ns: NULL");
  if (ns->tenant == nullptr || ns->model == nullptr) {
    return absl::InvalidArgumentError("ns: NULL tenant or model");
  }
  // DType / KvFormat are uint8_t enums: refuse numbers that would wrap when narrowed.
  if (ns->layout.dtype < 0 || ns->layout.dtype > 255 || ns->layout.format < 0 ||
      ns->layout.format > 255) {
    return absl::InvalidArgumentError("ns.layout: dtype or format out of range");
  }
  return strata::Namespace::Create(ns->tenant, ns->model, LayoutOf(ns->layout));
}

absl::StatusOr<strata::MemoryDescriptor> MemoryOf(const strata_memory* m, const char* what) {
  if (m == nullptr) return absl::InvalidArgumentError(std::string(what) + ": NULL");
  strata::MemoryDescriptor d;
  d.ptr = m->ptr;
  d.bytes = m->bytes;
  d.device = m->device;
  switch (m->kind) {
    case STRATA_MEMORY_HOST:
      d.kind = strata::MemoryKind::kHost;
      break;
    case STRATA_MEMORY_PINNED_HOST:
      d.kind = strata::MemoryKind::kPinnedHost;
      break;
    case STRATA_MEMORY_DEVICE:
      d.kind = strata::MemoryKind::kDevice;
      break;
    default:
      return absl::InvalidArgumentError(std::string(what) + ": unknown memory kind " +
                                        std::to_string(m->kind));
  }
  return d;
}

absl::Span<const uint32_t> TokensOf(const uint32_t* tokens, size_t n) {
  return absl::MakeConstSpan(tokens, n);
}

// Shared by strata_read_prefix and strata_read_layers (on_layer may be null).
int ReadPrefix(strata_client* client, const strata_namespace* ns, const strata_match_result* match,
               uint32_t pages, const strata_memory* destination, strata_layer_callback on_layer,
               void* user) {
  if (client == nullptr) return Invalid("client: NULL");
  if (match == nullptr) return Invalid("match: NULL");
  if (match->num_segments > 0 && match->segments == nullptr) return Invalid("match: NULL segments");
  absl::StatusOr<strata::Namespace> n = NamespaceOf(ns);
  if (!n.ok()) return Report(n.status());
  absl::StatusOr<strata::MemoryDescriptor> m = MemoryOf(destination, "destination");
  if (!m.ok()) return Report(m.status());
  std::vector<strata::Segment> segments;
  segments.reserve(match->num_segments);
  for (size_t i = 0; i < match->num_segments; ++i) {
    const strata_segment& s = match->segments[i];
    segments.push_back(strata::Segment{KeyOf(s.blob),
                                       s.blob_page_offset,
                                       s.page_count,
                                       s.seq_page_begin,
                                       s.blob_pages,
                                       static_cast<strata::Tier>(s.tier),
                                       {}});
  }
  if (on_layer == nullptr) return Report(client->client->Read(*n, segments, pages, *m));
  return Report(client->client->ReadLayers(*n, segments, pages, *m, [&](uint32_t layer) {
    const int rc = on_layer(user, layer);
    return rc == 0 ? absl::OkStatus()
                   : absl::AbortedError(std::string("the layer callback returned ") +
                                        std::to_string(rc) + " at layer " + std::to_string(layer));
  }));
}

}  // namespace

extern "C" {

void strata_options_init(strata_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->max_retries = -1;
  options->same_host = 1;
}

int strata_connect(const strata_options* options, strata_client** out) {
  if (out == nullptr) return Invalid("out: NULL");
  *out = nullptr;
  strata::ClientOptions o = strata::ClientOptions::FromEnvironment();
  if (options != nullptr) {
    if (options->node != nullptr) o.node = options->node;
    if (options->timeout_ms < 0) return Invalid("timeout_ms: negative");
    if (options->timeout_ms > 0) o.default_timeout = absl::Milliseconds(options->timeout_ms);
    if (options->max_retries >= 0) o.retry.max_retries = options->max_retries;
    if (options->ucx_transports != nullptr) o.ucx_transports = options->ucx_transports;
    if (options->lease_ttl_ms < 0) return Invalid("lease_ttl_ms: negative");
    o.lease_ttl = absl::Milliseconds(options->lease_ttl_ms);
    o.wait_for_node = options->wait_for_node != 0;
    if (options->same_host == 0) o.same_host = false;
    if (options->token != nullptr) o.token = options->token;
    if (options->tls != 0) o.tls = true;
    if (options->tls_ca_file != nullptr) {
      o.tls = true;
      o.tls_ca_file = options->tls_ca_file;
    }
    if (options->tls_cert_file != nullptr) o.tls_cert_file = options->tls_cert_file;
    if (options->tls_key_file != nullptr) o.tls_key_file = options->tls_key_file;
  }
  absl::StatusOr<std::unique_ptr<strata::Client>> client = strata::Client::Connect(std::move(o));
  if (!client.ok()) return Report(client.status());
  *out = new (std::nothrow) strata_client{std::move(client).value()};
  if (*out == nullptr) return Report(absl::ResourceExhaustedError("out of memory"));
  return Report(absl::OkStatus());
}

void strata_close(strata_client* client) { delete client; }

const char* strata_last_error_message(void) { return last_error.c_str(); }

const char* strata_status_name(int code) {
  const std::string_view name = strata::base::StatusCodeName(code);
  return name.empty() ? "UNKNOWN_CODE" : name.data();  // NUL-terminated, static
}

uint64_t strata_bytes_per_page(const strata_kv_layout* layout) {
  if (layout == nullptr) return 0;
  const strata::KvLayout l = LayoutOf(*layout);
  if (layout->dtype < 0 || layout->dtype > 255 || layout->format < 0 || layout->format > 255 ||
      !l.Validate().ok()) {
    return 0;
  }
  return l.BytesPerPage();
}

void strata_blob_key_hex(strata_blob_key key, char out[33]) {
  if (out == nullptr) return;
  const std::string hex = KeyOf(key).ToHex();
  std::memcpy(out, hex.data(), 32);
  out[32] = '\0';
}

int strata_match(strata_client* client, const strata_namespace* ns, const uint32_t* tokens,
                 size_t num_tokens, strata_match_result** out) {
  if (client == nullptr) return Invalid("client: NULL");
  if (out == nullptr) return Invalid("out: NULL");
  *out = nullptr;
  if (tokens == nullptr && num_tokens > 0) return Invalid("tokens: NULL");
  absl::StatusOr<strata::Namespace> n = NamespaceOf(ns);
  if (!n.ok()) return Report(n.status());
  absl::StatusOr<strata::MatchResult> match =
      client->client->Match(*n, TokensOf(tokens, num_tokens));
  if (!match.ok()) return Report(match.status());
  auto* result = new (std::nothrow) strata_match_result{};
  if (result == nullptr) return Report(absl::ResourceExhaustedError("out of memory"));
  result->matched_pages = match->matched_pages;
  result->truncated = match->truncated ? 1 : 0;
  result->readable_pages = match->ReadablePages();
  result->num_segments = match->segments.size();
  if (!match->segments.empty()) {
    // Value-initialized: every tokens pointer starts NULL, so a partial failure frees cleanly.
    result->segments = new (std::nothrow) strata_segment[match->segments.size()]();
    if (result->segments == nullptr) {
      delete result;
      return Report(absl::ResourceExhaustedError("out of memory"));
    }
  }
  for (size_t i = 0; i < match->segments.size(); ++i) {
    const strata::Segment& s = match->segments[i];
    uint32_t* tokens = nullptr;
    if (!s.tokens.empty()) {
      tokens = new (std::nothrow) uint32_t[s.tokens.size()];
      if (tokens == nullptr) {
        strata_free_match_result(result);
        return Report(absl::ResourceExhaustedError("out of memory"));
      }
      std::memcpy(tokens, s.tokens.data(), s.tokens.size() * sizeof(uint32_t));
    }
    result->segments[i] =
        strata_segment{CKey(s.blob), s.blob_page_offset,       s.page_count, s.seq_page_begin,
                       s.blob_pages, static_cast<int>(s.tier), tokens,       s.tokens.size()};
  }
  *out = result;
  return Report(absl::OkStatus());
}

void strata_free_match_result(strata_match_result* result) {
  if (result == nullptr) return;
  for (size_t i = 0; result->segments != nullptr && i < result->num_segments; ++i) {
    delete[] result->segments[i].tokens;
  }
  delete[] result->segments;
  delete result;
}

int strata_prefetch(strata_client* client, const strata_namespace* ns, const uint32_t* tokens,
                    size_t num_tokens, strata_prefetch_result* out) {
  if (client == nullptr) return Invalid("client: NULL");
  if (tokens == nullptr && num_tokens > 0) return Invalid("tokens: NULL");
  absl::StatusOr<strata::Namespace> n = NamespaceOf(ns);
  if (!n.ok()) return Report(n.status());
  absl::StatusOr<strata::PrefetchResult> result =
      client->client->Prefetch(*n, TokensOf(tokens, num_tokens));
  if (!result.ok()) return Report(result.status());
  if (out != nullptr) {
    *out = strata_prefetch_result{result->matched_pages, result->resident_pages, result->promotions,
                                  result->rebuilds_queued};
  }
  return Report(absl::OkStatus());
}

int strata_request_rebuild(strata_client* client, strata_blob_key key, int with_prefix,
                           strata_rebuild_request_result* out) {
  if (client == nullptr) return Invalid("client: NULL");
  absl::StatusOr<strata::RebuildRequestResult> result =
      client->client->RequestRebuild(KeyOf(key), with_prefix != 0);
  if (!result.ok()) return Report(result.status());
  if (out != nullptr) {
    *out = strata_rebuild_request_result{result->queued, result->already_queued, result->resident};
  }
  return Report(absl::OkStatus());
}

int strata_read(strata_client* client, const strata_namespace* ns, const strata_read_range* ranges,
                const strata_memory* destinations, size_t num_ranges) {
  if (client == nullptr) return Invalid("client: NULL");
  if (num_ranges > 0 && (ranges == nullptr || destinations == nullptr)) {
    return Invalid("ranges or destinations: NULL");
  }
  absl::StatusOr<strata::Namespace> n = NamespaceOf(ns);
  if (!n.ok()) return Report(n.status());
  std::vector<strata::ReadRange> r;
  std::vector<strata::MemoryDescriptor> d;
  r.reserve(num_ranges);
  d.reserve(num_ranges);
  for (size_t i = 0; i < num_ranges; ++i) {
    r.push_back(
        strata::ReadRange{KeyOf(ranges[i].blob), ranges[i].first_page, ranges[i].num_pages});
    absl::StatusOr<strata::MemoryDescriptor> m = MemoryOf(&destinations[i], "destinations");
    if (!m.ok()) return Report(m.status());
    d.push_back(*m);
  }
  return Report(client->client->Read(*n, r, d));
}

int strata_read_prefix(strata_client* client, const strata_namespace* ns,
                       const strata_match_result* match, uint32_t pages,
                       const strata_memory* destination) {
  return ReadPrefix(client, ns, match, pages, destination, nullptr, nullptr);
}

int strata_read_layers(strata_client* client, const strata_namespace* ns,
                       const strata_match_result* match, uint32_t pages,
                       const strata_memory* destination, strata_layer_callback on_layer,
                       void* user) {
  if (on_layer == nullptr) return Invalid("on_layer: NULL");
  return ReadPrefix(client, ns, match, pages, destination, on_layer, user);
}

int strata_write(strata_client* client, const strata_namespace* ns, const strata_parent* parent,
                 const uint32_t* tokens, size_t num_tokens, const strata_memory* source,
                 strata_write_result* out) {
  if (client == nullptr) return Invalid("client: NULL");
  if (tokens == nullptr && num_tokens > 0) return Invalid("tokens: NULL");
  absl::StatusOr<strata::Namespace> n = NamespaceOf(ns);
  if (!n.ok()) return Report(n.status());
  absl::StatusOr<strata::MemoryDescriptor> m = MemoryOf(source, "source");
  if (!m.ok()) return Report(m.status());
  std::optional<strata::Parent> p;
  if (parent != nullptr) p = strata::Parent{KeyOf(parent->key), parent->pages};
  absl::StatusOr<strata::WriteResult> result =
      client->client->Write(*n, p, TokensOf(tokens, num_tokens), *m);
  if (!result.ok()) return Report(result.status());
  if (out != nullptr) {
    *out = strata_write_result{CKey(result->key), result->existed ? 1 : 0, result->indexed_pages};
  }
  return Report(absl::OkStatus());
}

int strata_delete(strata_client* client, strata_blob_key key) {
  if (client == nullptr) return Invalid("client: NULL");
  return Report(client->client->Delete(KeyOf(key)).status());
}

int strata_pin(strata_client* client, strata_blob_key key) {
  if (client == nullptr) return Invalid("client: NULL");
  return Report(client->client->Pin(KeyOf(key)));
}

int strata_unpin(strata_client* client, strata_blob_key key) {
  if (client == nullptr) return Invalid("client: NULL");
  return Report(client->client->Unpin(KeyOf(key)));
}

}  // extern "C"
