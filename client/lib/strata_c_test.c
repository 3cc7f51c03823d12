/* The C API compiled as C (C11, -Wpedantic): every declaration of strata/strata_c.h used
 * once, against no node. Exits 0 when every check holds. */
#include "strata/strata_c.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              strata_last_error_message());                                                    \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

/* A loopback port nothing listens on. */
static int closed_port(void) {
  struct sockaddr_in addr;
  socklen_t len = sizeof(addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, (struct sockaddr*)&addr, sizeof(addr));
  getsockname(fd, (struct sockaddr*)&addr, &len);
  close(fd);
  return ntohs(addr.sin_port);
}

static int count_layer(void* user, uint32_t layer) {
  (void)layer;
  ++*(int*)user;
  return 0;
}

int main(void) {
  char node[64];
  char hex[33];
  strata_options options;
  strata_client* client = NULL;
  strata_match_result* match = NULL;
  strata_write_result written;
  strata_blob_key key = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  strata_blob_key zero = {0, 0};
  strata_namespace ns;
  strata_read_range range;
  strata_memory memory;
  strata_parent parent;
  uint32_t tokens[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  unsigned char buffer[256];
  uint64_t page_bytes;
  int layers_seen = 0;

  CHECK(strcmp(strata_status_name(STRATA_OK), "OK") == 0);
  CHECK(strcmp(strata_status_name(STRATA_DATA_LOSS), "DATA_LOSS") == 0);
  CHECK(strcmp(strata_status_name(99), "UNKNOWN_CODE") == 0);
  strata_blob_key_hex(key, hex);
  CHECK(strcmp(hex, "0123456789abcdeffedcba9876543210") == 0);

  ns.tenant = "acme";
  ns.model = "org/tiny";
  ns.layout.num_layers = 2;
  ns.layout.num_kv_heads = 1;
  ns.layout.head_dim = 4;
  ns.layout.dtype = STRATA_DTYPE_FLOAT16;
  ns.layout.page_tokens = 4;
  ns.layout.format = STRATA_KV_FORMAT_KEY_VALUE;
  ns.layout.tp_rank = 0;
  ns.layout.tp_world = 1;
  /* 2 layers x (K + V) x 4 tokens x 1 head x 4 dims x 2 bytes. */
  page_bytes = strata_bytes_per_page(&ns.layout);
  CHECK(page_bytes == 128);
  CHECK(strata_bytes_per_page(NULL) == 0);

  /* Bad options and arguments. */
  strata_options_init(&options);
  CHECK(strata_connect(&options, NULL) == STRATA_INVALID_ARGUMENT);
  options.node = "no-port";
  CHECK(strata_connect(&options, &client) == STRATA_INVALID_ARGUMENT);
  CHECK(client == NULL);
  CHECK(strlen(strata_last_error_message()) > 0);

  snprintf(node, sizeof(node), "127.0.0.1:%d", closed_port());
  strata_options_init(&options);
  options.node = node;
  options.timeout_ms = 3000;
  options.max_retries = 1;
  CHECK(strata_connect(&options, &client) == STRATA_OK);
  CHECK(client != NULL);
  CHECK(strcmp(strata_last_error_message(), "") == 0);

  CHECK(strata_match(NULL, &ns, tokens, 8, &match) == STRATA_INVALID_ARGUMENT);
  CHECK(strata_match(client, NULL, tokens, 8, &match) == STRATA_INVALID_ARGUMENT);
  CHECK(strata_match(client, &ns, NULL, 8, &match) == STRATA_INVALID_ARGUMENT);
  ns.tenant = "bad tenant!";
  CHECK(strata_match(client, &ns, tokens, 8, &match) == STRATA_INVALID_ARGUMENT);
  ns.tenant = "acme";
  ns.layout.dtype = 300;
  CHECK(strata_match(client, &ns, tokens, 8, &match) == STRATA_INVALID_ARGUMENT);
  ns.layout.dtype = STRATA_DTYPE_FLOAT16;

  /* No node: UNAVAILABLE after the retries. */
  CHECK(strata_match(client, &ns, tokens, 8, &match) == STRATA_UNAVAILABLE);
  CHECK(match == NULL);
  strata_free_match_result(match); /* NULL is fine */

  memory.ptr = buffer;
  memory.bytes = (size_t)(2 * page_bytes);
  memory.kind = STRATA_MEMORY_HOST;
  memory.device = 0;
  CHECK(strata_write(client, &ns, NULL, tokens, 8, &memory, &written) == STRATA_UNAVAILABLE);
  CHECK(strata_write(client, &ns, NULL, tokens, 7, &memory, &written) == STRATA_INVALID_ARGUMENT);
  parent.key = key;
  parent.pages = 1;
  CHECK(strata_write(client, &ns, &parent, tokens, 8, &memory, NULL) == STRATA_UNAVAILABLE);
  memory.kind = STRATA_MEMORY_DEVICE;
  /* Device memory goes through the device: none here (UNAVAILABLE), and on a GPU this host
   * pointer is not device memory. */
  CHECK(strata_write(client, &ns, NULL, tokens, 8, &memory, NULL) != STRATA_OK);
  memory.kind = 7;
  CHECK(strata_write(client, &ns, NULL, tokens, 8, &memory, NULL) == STRATA_INVALID_ARGUMENT);
  memory.kind = STRATA_MEMORY_HOST;

  range.blob = key;
  range.first_page = 0;
  range.num_pages = 2;
  CHECK(strata_read(client, &ns, &range, &memory, 1) == STRATA_UNAVAILABLE);
  CHECK(strata_read(client, &ns, NULL, &memory, 1) == STRATA_INVALID_ARGUMENT);
  range.num_pages = 1; /* destination too large for one page */
  CHECK(strata_read(client, &ns, &range, &memory, 1) == STRATA_INVALID_ARGUMENT);
  CHECK(strata_read_prefix(client, &ns, NULL, 1, &memory) == STRATA_INVALID_ARGUMENT);
  CHECK(strata_read_layers(client, &ns, NULL, 1, &memory, count_layer, &layers_seen) ==
        STRATA_INVALID_ARGUMENT);
  CHECK(layers_seen == 0);

  /* Prefetch and rebuild requests: argument checks, then no node. */
  {
    strata_prefetch_result prefetched;
    strata_rebuild_request_result rebuild;
    CHECK(strata_prefetch(NULL, &ns, tokens, 8, &prefetched) == STRATA_INVALID_ARGUMENT);
    CHECK(strata_prefetch(client, &ns, NULL, 8, &prefetched) == STRATA_INVALID_ARGUMENT);
    CHECK(strata_prefetch(client, NULL, tokens, 8, &prefetched) == STRATA_INVALID_ARGUMENT);
    CHECK(strata_prefetch(client, &ns, tokens, 8, &prefetched) == STRATA_UNAVAILABLE);
    CHECK(strata_prefetch(client, &ns, tokens, 8, NULL) == STRATA_UNAVAILABLE);
    CHECK(strata_request_rebuild(NULL, key, 1, &rebuild) == STRATA_INVALID_ARGUMENT);
    CHECK(strata_request_rebuild(client, zero, 1, &rebuild) == STRATA_INVALID_ARGUMENT);
    CHECK(strata_request_rebuild(client, key, 0, NULL) == STRATA_UNAVAILABLE);
  }

  /* A match result with a TEXT segment: strata_read_prefix refuses to read into it. */
  {
    strata_segment text_segment;
    strata_match_result text_match;
    uint32_t text_tokens[4] = {1, 2, 3, 4};
    memset(&text_segment, 0, sizeof(text_segment));
    text_segment.blob = key;
    text_segment.page_count = 1;
    text_segment.blob_pages = 1;
    text_segment.tier = STRATA_TIER_TEXT;
    text_segment.tokens = text_tokens;
    text_segment.num_tokens = 4;
    memset(&text_match, 0, sizeof(text_match));
    text_match.matched_pages = 1;
    text_match.num_segments = 1;
    text_match.segments = &text_segment;
    text_match.readable_pages = 0;
    memory.bytes = (size_t)page_bytes;
    CHECK(strata_read_prefix(client, &ns, &text_match, 1, &memory) == STRATA_NOT_FOUND);
    memory.bytes = (size_t)(2 * page_bytes);
  }

  CHECK(strata_delete(client, zero) == STRATA_INVALID_ARGUMENT);
  CHECK(strata_delete(client, key) == STRATA_UNAVAILABLE);
  CHECK(strata_pin(client, key) == STRATA_UNAVAILABLE);
  CHECK(strata_unpin(client, zero) == STRATA_INVALID_ARGUMENT);

  strata_close(client);
  strata_close(NULL);
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("strata_c_test: all checks passed\n");
  return 0;
}
