// Network helpers for tests: what a process listens on, raw TCP byte streams, and the hostile
// streams every strata port must survive.
//
// ListeningTcpPorts: the TCP ports `pid` has in LISTEN state (IPv4 and IPv6), read from
// /proc/<pid>/net/tcp{,6} and matched to the process's own socket descriptors; sorted.
// SendRawStream: connects to "host:port", writes `bytes` in one write, waits `linger` (so the
// receiver reads them while the connection is open) and closes. HostileStreams: named byte
// streams that crashed or could crash a network parser: the 17 bytes that aborted UCX 1.13's
// TCP connection manager, 64 KiB of 0x00 and of 0xFF, UCX's TCP-transport magic followed by an
// absurd length (which aborted its iface), a strata data-plane frame announcing a huge
// payload, a frame before any handshake, truncated frames, and seeded random garbage.
//
// Errors: INTERNAL with the failing call and errno (a /proc file that cannot be read, a socket
// that cannot connect). Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata::testing {

absl::StatusOr<std::vector<uint16_t>> ListeningTcpPorts(pid_t pid);

absl::Status SendRawStream(const std::string& host_port, const std::string& bytes,
                           absl::Duration linger = absl::Milliseconds(50));

struct HostileStream {
  std::string name;
  std::string bytes;
};
std::vector<HostileStream> HostileStreams(uint64_t seed = 1);

}  // namespace strata::testing
