// HttpGet: a plain HTTP/1.1 GET, for tests and tools that read the node's endpoint (the
// client side of cpp-httplib, kept here so httplib.h stays in store/http).
//
// Errors: INVALID_ARGUMENT a bad address (http_server.h: SplitHostPort); UNAVAILABLE no
// connection or no complete answer within `timeout`. Any HTTP status is a successful GET.
// Thread-safe (each call has its own connection).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata::store::http {

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// GET http://<address><path>, e.g. HttpGet("127.0.0.1:7402", "/metrics").
absl::StatusOr<HttpResponse> HttpGet(const std::string& address, const std::string& path,
                                     absl::Duration timeout = absl::Seconds(10));

}  // namespace strata::store::http
