// gRPC plumbing shared by the simulated PD and stores: starting a server on
// a loopback port, and ActiveCalls, the registry of long-lived streaming
// calls that lets a service cancel its open streams (store down, stream drop,
// shutdown) and wait until every handler has returned.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace sluice::simkv {

struct LoopbackServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

// Builds and starts a server on 127.0.0.1:`port` (0 picks a free port) that
// serves `services` (not owned; they must outlive the server). Unavailable if
// the port cannot be bound.
Result<LoopbackServer> StartLoopbackServer(const std::vector<grpc::Service*>& services,
                                           int port = 0);

// Shuts a server down: in-flight calls are cancelled after `grace` and the
// call returns once every handler has returned.
void ShutdownServer(grpc::Server* server,
                    std::chrono::milliseconds grace = std::chrono::milliseconds(500));

// The streaming calls a service is serving. A handler enters on start and
// leaves (through the Guard) before it returns, so a ServerContext is only
// touched while its handler runs. Thread-safe: handlers run on gRPC threads;
// CancelAll/Close/WaitIdle come from the owner's control thread.
class ActiveCalls {
 public:
  class Guard {
   public:
    Guard(ActiveCalls* calls, uint64_t id) : calls_(calls), id_(id) {}
    Guard(Guard&& other) noexcept : calls_(other.calls_), id_(other.id_) { other.calls_ = nullptr; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (calls_ != nullptr) calls_->Leave(id_);
    }
    uint64_t id() const { return id_; }

   private:
    ActiveCalls* calls_;
    uint64_t id_;
  };

  ActiveCalls() = default;
  ActiveCalls(const ActiveCalls&) = delete;
  ActiveCalls& operator=(const ActiveCalls&) = delete;

  // Registers a call; nullopt once Close() was called (refuse the call).
  std::optional<Guard> Enter(grpc::ServerContext* context) EXCLUDES(mu_);
  // Cancels every call now registered.
  void CancelAll() EXCLUDES(mu_);
  // Refuses new calls from now on (Reopen() undoes it).
  void Close() EXCLUDES(mu_);
  void Reopen() EXCLUDES(mu_);
  // Blocks until no call is registered.
  void WaitIdle() EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  void Leave(uint64_t id) EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar idle_;
  bool closed_ GUARDED_BY(mu_) = false;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, grpc::ServerContext*> calls_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
