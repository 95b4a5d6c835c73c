#include "process/etcd_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <regex>

namespace sluice::testing {

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

EtcdProcess::EtcdProcess(std::string dir)
    : dir_(std::move(dir)), client_port_(FreePort()), peer_port_(FreePort()) {
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

Status EtcdProcess::Start() {
  const std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  ASSIGN_OR_RETURN(process_, ChildProcess::Start(
                                 {kEtcdBinary, "--name", "t", "--data-dir", dir_ + "/data",
                                  "--listen-client-urls", client, "--advertise-client-urls", client,
                                  "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                                  "--initial-cluster", "t=" + peer, "--heartbeat-interval", "50",
                                  "--election-timeout", "500"},
                                 dir_ + "/etcd.log"));
  return process_
      ->WaitForLine(std::regex("(ready to serve client requests)"), std::chrono::seconds(20))
      .status();
}

void EtcdProcess::Kill() {
  if (process_ == nullptr) return;
  process_->Signal(SIGKILL);
  (void)process_->Wait(std::chrono::seconds(10));
  process_.reset();
}

}  // namespace sluice::testing
