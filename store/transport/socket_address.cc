#include "store/transport/socket_address.h"

#include <cstring>
#include <memory>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::transport {

absl::StatusOr<SocketAddress> SocketAddress::Parse(std::string_view host_port) {
  const std::string input(host_port);
  std::string host;
  std::string port_text;
  if (!input.empty() && input.front() == '[') {
    const size_t close = input.find(']');
    if (close == std::string::npos || close + 1 >= input.size() || input[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address \"", input, "\": expected [ipv6]:port"));
    }
    host = input.substr(1, close - 1);
    port_text = input.substr(close + 2);
  } else {
    const size_t colon = input.rfind(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address \"", input, "\": expected host:port"));
    }
    host = input.substr(0, colon);
    port_text = input.substr(colon + 1);
  }
  uint32_t port = 0;
  if (host.empty() || !absl::SimpleAtoi(port_text, &port) || port > 65535 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address \"", input, "\": expected host:port, port 0-65535"));
  }

  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* results = nullptr;
  const int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &results);
  if (rc != 0 || results == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve \"", host, "\": ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(results, &freeaddrinfo);
  return FromSockaddr(results->ai_addr, results->ai_addrlen);
}

SocketAddress SocketAddress::FromSockaddr(const sockaddr* addr, socklen_t length) {
  CHECK(addr->sa_family == AF_INET || addr->sa_family == AF_INET6) << addr->sa_family;
  CHECK_LE(length, sizeof(sockaddr_storage));
  SocketAddress out;
  std::memcpy(&out.storage_, addr, length);
  out.length_ = addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  return out;
}

uint16_t SocketAddress::port() const {
  if (storage_.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
}

std::string SocketAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (storage_.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, text,
              sizeof(text));
    return absl::StrCat(text, ":", port());
  }
  inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, text,
            sizeof(text));
  return absl::StrCat("[", text, "]:", port());
}

}  // namespace strata::store::transport
