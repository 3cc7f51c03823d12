#include "strata/testing/net.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace strata::testing {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::InternalError(
      absl::StrCat(what, ": ", std::strerror(errno), " (errno ", errno, ")"));
}

std::string Le16(uint16_t v) {
  return std::string{static_cast<char>(v), static_cast<char>(v >> 8)};
}
std::string Le64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// A strata data-plane frame header (store/transport/stream_frame.h).
std::string Frame(uint16_t id, uint8_t flags, uint16_t header_size, uint64_t payload_size) {
  return absl::StrCat(std::string{'\x53', '\x01'}, Le16(id),
                      std::string{static_cast<char>(flags), '\0'}, Le16(header_size),
                      Le64(payload_size));
}

}  // namespace

absl::StatusOr<std::vector<uint16_t>> ListeningTcpPorts(pid_t pid) {
  std::set<std::string> inodes;
  const std::string fd_dir = absl::StrCat("/proc/", pid, "/fd");
  DIR* dir = opendir(fd_dir.c_str());
  if (dir == nullptr) return Errno("opendir " + fd_dir);
  while (dirent* entry = readdir(dir)) {
    char target[256];
    const std::string path = fd_dir + "/" + entry->d_name;
    const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    const std::string link(target, n);
    if (link.rfind("socket:[", 0) == 0) inodes.insert(link.substr(8, link.size() - 9));
  }
  closedir(dir);
  std::set<uint16_t> ports;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in(absl::StrCat("/proc/", pid, "/net/", table));
    if (!in) continue;
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (fields.size() < 10 || fields[3] != "0A" || inodes.count(fields[9]) == 0) continue;
      const size_t colon = fields[1].rfind(':');
      uint32_t port = 0;
      if (colon == std::string::npos || !absl::SimpleHexAtoi(fields[1].substr(colon + 1), &port)) {
        continue;
      }
      ports.insert(static_cast<uint16_t>(port));
    }
  }
  return std::vector<uint16_t>(ports.begin(), ports.end());
}

absl::Status SendRawStream(const std::string& host_port, const std::string& bytes,
                           absl::Duration linger) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError("no port in " + host_port);
  std::string host = host_port.substr(0, colon);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), host_port.substr(colon + 1).c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return absl::InternalError("cannot resolve " + host_port);
  }
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(found);
    return Errno("socket");
  }
  const int connected = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  if (connected != 0) {
    const absl::Status status = Errno("connect to " + host_port);
    close(fd);
    return status;
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the peer may close on garbage: that is its right
    sent += static_cast<size_t>(n);
  }
  absl::SleepFor(linger);
  close(fd);
  return absl::OkStatus();
}

std::vector<HostileStream> HostileStreams(uint64_t seed) {
  std::vector<HostileStream> streams;
  streams.push_back({"16 zero bytes and one more", std::string(16, '\0') + "\x01"});
  streams.push_back({"64 KiB of 0x00", std::string(64 << 10, '\0')});
  streams.push_back({"64 KiB of 0xFF", std::string(64 << 10, '\xff')});
  // UCX 1.13 TCP transport: its connection magic, then an active-message header (id, length)
  // whose length exceeds the receive segment.
  streams.push_back({"UCX tcp magic + absurd length", Le64(0xCAFEBABE12345678ull) +
                                                          std::string{'\x01'} + Le64(0xE3000005u) +
                                                          std::string(40, '\x07')});
  streams.push_back({"frame announcing a 2^63-byte payload",
                     Frame(1, 0x01, 0, uint64_t{1} << 63) + std::string(1024, 'x')});
  streams.push_back({"eager frame over the eager limit", Frame(1, 0, 0, 1 << 20)});
  streams.push_back({"message before the handshake", Frame(1, 0, 4, 0) + "abcd"});
  streams.push_back(
      {"handshake with garbage", Frame(0xFFFF, 0, 300, 0) + std::string(300, '\x48')});
  streams.push_back(
      {"handshake with a payload",
       Frame(0xFFFF, 0x01, 8, 1 << 20) + std::string(8, '\x48') + std::string(64 << 10, 'p')});
  streams.push_back(
      {"ACK before anything was sent", Frame(0xFFFE, 0, 16, 0) + std::string(16, '\0')});
  streams.push_back({"truncated frame header", Frame(1, 0, 4, 0).substr(0, 9)});
  streams.push_back({"bad frame flags", Frame(1, 0xFE, 0, 0)});
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 24; ++i) {
    std::string bytes(1 + rng() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (i % 3 == 0) bytes.replace(0, 2, "\x53\x01");  // a plausible frame start
    streams.push_back({absl::StrCat("random ", i), std::move(bytes)});
  }
  return streams;
}

}  // namespace strata::testing
