// EtcdProcess: a real single-member etcd (Debian's etcd-server, /usr/bin/etcd or $STRATA_ETCD)
// that a test starts on loopback, kills, restarts and stops — the coordination engine of the
// cluster tests. Test-only (strata::testing).
//
// Start() runs etcd in a ChildProcess with its client and peer URLs on 127.0.0.1 port 0 and
// waits until it says where it serves clients; endpoint() is that "127.0.0.1:PORT". Its data
// directory is the EtcdProcess's own (kept across Kill/Restart, removed with it). Restart()
// starts it again on the same data and the same client port (so clients find it where they
// left it). The destructor kills a running etcd.
//
// Errors: Start FAILED_PRECONDITION when no etcd binary is found (deploy/setup.sh installs
// etcd-server), or what ChildProcess::Start / WaitForStdout returned (the message carries
// the tail of etcd's log). Thread safety: none; one test thread drives one EtcdProcess.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/testing/child_process.h"

namespace strata::testing {

class EtcdProcess {
 public:
  static absl::StatusOr<std::unique_ptr<EtcdProcess>> Start();
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;
  EtcdProcess& operator=(const EtcdProcess&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  bool running() const { return process_ != nullptr; }
  ChildProcess* process() { return process_.get(); }

  // SIGKILLs etcd (its data stays).
  void Kill();
  // Starts it again on the same data dir and client port. REQUIRES: !running().
  absl::Status Restart();

 private:
  EtcdProcess(std::string binary, std::string data_root)
      : binary_(std::move(binary)), data_root_(std::move(data_root)) {}
  // Runs etcd listening for clients on `client_port` (0: any) and waits for it.
  absl::Status Launch(int client_port);

  const std::string binary_;
  const std::string data_root_;  // holds data/ (removed by the destructor)
  std::string endpoint_;
  int client_port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace strata::testing
