#include "simkv/grpc_util.h"

#include <chrono>
#include <utility>

namespace sluice::simkv {

Result<LoopbackServer> StartLoopbackServer(const std::vector<grpc::Service*>& services, int port) {
  grpc::ServerBuilder builder;
  LoopbackServer out;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                           &out.port);
  builder.SetMaxReceiveMessageSize(-1);
  for (grpc::Service* service : services) builder.RegisterService(service);
  out.server = builder.BuildAndStart();
  if (out.server == nullptr || out.port == 0) {
    return Unavailable("cannot serve on 127.0.0.1:" + std::to_string(port));
  }
  return out;
}

void ShutdownServer(grpc::Server* server, std::chrono::milliseconds grace) {
  if (server == nullptr) return;
  server->Shutdown(std::chrono::system_clock::now() + grace);
  server->Wait();
}

std::optional<ActiveCalls::Guard> ActiveCalls::Enter(grpc::ServerContext* context) {
  MutexLock lock(&mu_);
  if (closed_) return std::nullopt;
  uint64_t id = next_id_++;
  calls_.emplace(id, context);
  return Guard(this, id);
}

void ActiveCalls::Leave(uint64_t id) {
  MutexLock lock(&mu_);
  calls_.erase(id);
  if (calls_.empty()) idle_.SignalAll();
}

void ActiveCalls::CancelAll() {
  MutexLock lock(&mu_);
  for (auto& [id, context] : calls_) context->TryCancel();
}

void ActiveCalls::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
}

void ActiveCalls::Reopen() {
  MutexLock lock(&mu_);
  closed_ = false;
}

void ActiveCalls::WaitIdle() {
  MutexLock lock(&mu_);
  while (!calls_.empty()) idle_.Wait(&mu_);
}

size_t ActiveCalls::size() const {
  MutexLock lock(&mu_);
  return calls_.size();
}

}  // namespace sluice::simkv
