// EtcdProcess: a single-member etcd (Debian's etcd-server) run by a test,
// with its data in a directory of its own and loopback ports picked free,
// started, killed and restarted (same data, same ports) on demand. Short
// raft ticks keep etcd's minimum lease TTL at one second.
//
// Threads: the owning test thread.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "process/child_process.h"

namespace sluice::testing {

inline constexpr const char* kEtcdBinary = "/usr/bin/etcd";

// A loopback port nothing listens on right now (0 if none was found).
int FreePort();

class EtcdProcess {
 public:
  explicit EtcdProcess(std::string dir);

  // Starts etcd and waits until it serves clients.
  Status Start();
  // SIGKILL, and waits for the exit.
  void Kill();
  bool running() const { return process_ != nullptr; }

  // "127.0.0.1:<client port>".
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }

 private:
  const std::string dir_;
  const int client_port_;
  const int peer_port_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace sluice::testing
