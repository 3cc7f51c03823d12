/* strata_c.h — the C API of libstrata, for FFI (Python, Rust, Go, ...). Plain C99/C11: no
 * C++ in this header, all types opaque handles or plain structs.
 *
 * It wraps strata::Client (strata/client.h), whose contract holds here too: what each call
 * does, the status code for each failure, deadlines and retries, checksum verification of
 * every fetched chunk, thread safety.
 *
 * Status codes: every function that can fail returns an int, 0 on success, else an
 * absl::StatusCode / gRPC code number (STRATA_* below). The message of the last failure on
 * the calling thread is strata_last_error_message() (valid until that thread's next strata
 * call; "" after a success).
 *
 * Ownership: strata_connect makes a strata_client, strata_close frees it (after every call on
 * it has returned). strata_match allocates its result (segments and TEXT segments' tokens
 * included); strata_free_match_result frees it.
 * Every pointer argument is borrowed for the call only. NULL where a pointer is required is
 * STRATA_INVALID_ARGUMENT. Memory passed as strata_memory is the caller's: the library reads
 * or writes exactly `bytes` bytes there during the call and never frees it.
 *
 * Threads: a strata_client may be used by many threads at once. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: the numbers of absl::StatusCode (= gRPC status codes). */
enum {
  STRATA_OK = 0,
  STRATA_CANCELLED = 1,
  STRATA_UNKNOWN = 2,
  STRATA_INVALID_ARGUMENT = 3,
  STRATA_DEADLINE_EXCEEDED = 4,
  STRATA_NOT_FOUND = 5,
  STRATA_ALREADY_EXISTS = 6,
  STRATA_PERMISSION_DENIED = 7,
  STRATA_RESOURCE_EXHAUSTED = 8,
  STRATA_FAILED_PRECONDITION = 9,
  STRATA_ABORTED = 10,
  STRATA_OUT_OF_RANGE = 11,
  STRATA_UNIMPLEMENTED = 12,
  STRATA_INTERNAL = 13,
  STRATA_UNAVAILABLE = 14,
  STRATA_DATA_LOSS = 15,
  STRATA_UNAUTHENTICATED = 16
};

/* Element types and KV formats: the numbers of strata::radix::DType / KvFormat. */
enum {
  STRATA_DTYPE_FLOAT16 = 1,
  STRATA_DTYPE_BFLOAT16 = 2,
  STRATA_DTYPE_FLOAT32 = 3,
  STRATA_DTYPE_FLOAT8_E4M3 = 4,
  STRATA_DTYPE_FLOAT8_E5M2 = 5,
  STRATA_DTYPE_INT8 = 6,
  STRATA_DTYPE_UINT8 = 7
};
enum { STRATA_KV_FORMAT_KEY_VALUE = 1, STRATA_KV_FORMAT_MLA_LATENT = 2 };

/* Tiers: the numbers of strata::Tier. */
enum { STRATA_TIER_HBM = 1, STRATA_TIER_DRAM = 2, STRATA_TIER_SSD = 3, STRATA_TIER_TEXT = 4 };

/* Memory kinds: host memory only for now (STRATA_MEMORY_DEVICE answers UNIMPLEMENTED). */
enum { STRATA_MEMORY_HOST = 0, STRATA_MEMORY_PINNED_HOST = 1, STRATA_MEMORY_DEVICE = 2 };

typedef struct strata_client strata_client; /* opaque */

typedef struct strata_blob_key {
  uint64_t hi;
  uint64_t lo;
} strata_blob_key;

typedef struct strata_kv_layout {
  uint32_t num_layers;
  uint32_t num_kv_heads;
  uint32_t head_dim;
  int dtype; /* STRATA_DTYPE_* */
  uint32_t page_tokens;
  int format; /* STRATA_KV_FORMAT_* */
  uint32_t tp_rank;
  uint32_t tp_world;
} strata_kv_layout;

typedef struct strata_namespace {
  const char* tenant; /* NUL-terminated */
  const char* model;  /* NUL-terminated */
  strata_kv_layout layout;
} strata_namespace;

typedef struct strata_segment {
  strata_blob_key blob;
  uint32_t blob_page_offset;
  uint32_t page_count;
  uint32_t seq_page_begin;
  uint32_t blob_pages;
  int tier; /* STRATA_TIER_*; STRATA_TIER_TEXT: no bytes, only tokens (not readable) */
  /* STRATA_TIER_TEXT segments only: the matched pages' tokens (page_count * page_tokens),
   * owned by the match result; NULL and 0 for every other tier. */
  const uint32_t* tokens;
  size_t num_tokens;
} strata_segment;

typedef struct strata_match_result {
  uint32_t matched_pages; /* TEXT pages included */
  int truncated;
  size_t num_segments;
  strata_segment* segments; /* num_segments entries, owned by the result */
  /* Pages [0, readable_pages) can be read: matched_pages up to the first TEXT segment. */
  uint32_t readable_pages;
} strata_match_result;

typedef struct strata_read_range {
  strata_blob_key blob;
  uint32_t first_page;
  uint32_t num_pages;
} strata_read_range;

typedef struct strata_memory {
  void* ptr;
  size_t bytes;
  int kind;   /* STRATA_MEMORY_* */
  int device; /* CUDA device ordinal for STRATA_MEMORY_DEVICE */
} strata_memory;

typedef struct strata_parent {
  strata_blob_key key;
  uint32_t pages;
} strata_parent;

typedef struct strata_write_result {
  strata_blob_key key;
  int existed; /* 1: already committed or being written by another writer; nothing sent */
  uint32_t indexed_pages;
} strata_write_result;

typedef struct strata_options {
  const char* node;           /* "host:port"; NULL: $STRATA_NODE or "127.0.0.1:7400" */
  int64_t timeout_ms;         /* per-call deadline; 0: 10000 */
  int max_retries;            /* retries of UNAVAILABLE; < 0: the default (3) */
  const char* ucx_transports; /* UCX_TLS syntax; NULL: $STRATA_UCX_TLS / UCX's default */
  int64_t lease_ttl_ms;       /* 0: the node's default */
  int wait_for_node;          /* 1: strata_connect fails unless the node answers Health */
  const char* token;          /* the tenant's bearer token; NULL: $STRATA_TOKEN or none */
  int tls;                    /* 1: TLS to the node (also when tls_ca_file or $STRATA_TLS_CA) */
  const char* tls_ca_file;    /* PEM CAs to trust; NULL: $STRATA_TLS_CA or the system's */
  const char* tls_cert_file;  /* this client's certificate (mutual TLS); NULL: none */
  const char* tls_key_file;   /* its private key */
  int same_host;              /* 1 (strata_options_init): the node's same-host channel where
                                 reachable; 0: always UCX (also $STRATA_SAME_HOST=0) */
} strata_options;

/* Fills *options with the defaults above (all "use the default"). */
void strata_options_init(strata_options* options);

/* A client; *out is set on success. `options` may be NULL (defaults). INVALID_ARGUMENT bad
 * options; UNAVAILABLE / DEADLINE_EXCEEDED with wait_for_node and no node. */
int strata_connect(const strata_options* options, strata_client** out);
/* Frees the client (NULL is a no-op). */
void strata_close(strata_client* client);

/* The message of the calling thread's last failure; "" if none. Never NULL. */
const char* strata_last_error_message(void);
/* "OK", "NOT_FOUND", ...; "UNKNOWN_CODE" for a number outside 0..16. */
const char* strata_status_name(int code);

/* Bytes one page of all layers takes (0 for an invalid layout). */
uint64_t strata_bytes_per_page(const strata_kv_layout* layout);
/* 32 lowercase hex digits and a NUL into out[0..32]. */
void strata_blob_key_hex(strata_blob_key key, char out[33]);

/* Longest cached prefix of tokens[0..num_tokens). *out is set on success; free it with
 * strata_free_match_result. */
int strata_match(strata_client* client, const strata_namespace* ns, const uint32_t* tokens,
                 size_t num_tokens, strata_match_result** out);
void strata_free_match_result(strata_match_result* result);

/* Reads ranges[i] into destinations[i] (num_pages * strata_bytes_per_page bytes each,
 * layer-major), verifying every chunk. */
int strata_read(strata_client* client, const strata_namespace* ns, const strata_read_range* ranges,
                const strata_memory* destinations, size_t num_ranges);
/* Reads sequence pages [0, pages) of a match into one destination (pages *
 * strata_bytes_per_page bytes, layer-major). NOT_FOUND, before anything is sent, when a TEXT
 * segment lies inside [0, pages): read match->readable_pages pages. */
int strata_read_prefix(strata_client* client, const strata_namespace* ns,
                       const strata_match_result* match, uint32_t pages,
                       const strata_memory* destination);

/* Called once per layer, in layer order, as soon as layer `layer` of every segment has landed
 * and verified (on the calling thread). Return 0 to go on; any other value stops the read,
 * which then returns STRATA_ABORTED. */
typedef int (*strata_layer_callback)(void* user, uint32_t layer);

/* strata_read_prefix, layer by layer: `on_layer(user, l)` runs as each layer lands while
 * later layers are still in flight. */
int strata_read_layers(strata_client* client, const strata_namespace* ns,
                       const strata_match_result* match, uint32_t pages,
                       const strata_memory* destination, strata_layer_callback on_layer,
                       void* user);

/* Writes one blob of tokens[0..num_tokens) continuing `parent` (NULL: from page 0) from
 * `source`. *out (may be NULL) receives the key and whether it existed. */
int strata_write(strata_client* client, const strata_namespace* ns, const strata_parent* parent,
                 const uint32_t* tokens, size_t num_tokens, const strata_memory* source,
                 strata_write_result* out);

/* Prefetch (strata::Client::Prefetch): the node promotes SSD-only blobs of the matched
 * prefix of tokens[0..num_tokens) into DRAM and queues TEXT blobs for rebuild, answering at
 * once. */
typedef struct strata_prefetch_result {
  uint32_t matched_pages;
  uint32_t resident_pages;  /* matched pages whose bytes are in DRAM or on SSD */
  uint64_t promotions;      /* SSD-only blobs whose promotion was started */
  uint64_t rebuilds_queued; /* TEXT blobs queued for rebuild */
} strata_prefetch_result;
/* *out (may be NULL) receives what the node found and started. */
int strata_prefetch(strata_client* client, const strata_namespace* ns, const uint32_t* tokens,
                    size_t num_tokens, strata_prefetch_result* out);

/* RequestRebuild (strata::Client::RequestRebuild): queues a TEXT blob (with_prefix != 0: and
 * every TEXT blob on its prefix path) for rebuild workers. NOT_FOUND not in the index. */
typedef struct strata_rebuild_request_result {
  uint64_t queued;
  uint64_t already_queued;
  uint64_t resident;
} strata_rebuild_request_result;
int strata_request_rebuild(strata_client* client, strata_blob_key key, int with_prefix,
                           strata_rebuild_request_result* out);

int strata_delete(strata_client* client, strata_blob_key key);
int strata_pin(strata_client* client, strata_blob_key key);
int strata_unpin(strata_client* client, strata_blob_key key);

#ifdef __cplusplus
} /* extern "C" */
#endif
