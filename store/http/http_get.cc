#include "strata/store/http/http_get.h"

#include "absl/strings/str_cat.h"

#include "httplib.h"
#include "strata/store/http/http_server.h"

namespace strata::store::http {

absl::StatusOr<HttpResponse> HttpGet(const std::string& address, const std::string& path,
                                     absl::Duration timeout) {
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(address, &host, &port); !s.ok()) return s;
  httplib::Client client(host, port);
  const int64_t micros = absl::ToInt64Microseconds(timeout);
  const time_t seconds = static_cast<time_t>(micros / 1000000);
  const time_t rest = static_cast<time_t>(micros % 1000000);
  client.set_connection_timeout(seconds, rest);
  client.set_read_timeout(seconds, rest);
  client.set_write_timeout(seconds, rest);
  client.set_keep_alive(false);
  httplib::Result result = client.Get(path);
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat("GET http://", address, path, ": ", httplib::to_string(result.error())));
  }
  HttpResponse response;
  response.status = result->status;
  response.content_type = result->get_header_value("Content-Type");
  response.body = result->body;
  return response;
}

}  // namespace strata::store::http
