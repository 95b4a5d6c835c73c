// PdConnection: the PD client's link to the PD leader. It discovers the
// leader with GetMembers (endpoints tried in order), learns and then checks
// the cluster id, and hands out the current stub. A call that fails with a
// connection error drops the stub (MarkBroken); the next Get() discovers
// again. A failed discovery starts a backoff (options.backoff_base doubling
// to backoff_max): until it passes, Get() fails fast with kUnavailable
// instead of dialling, so a PD outage never makes callers wait longer than
// one rpc_timeout.
//
// Ownership: owned by PdClient; stubs are shared so that a call in flight
// keeps its channel alive after a reconnect. Thread-safe: any thread may call
// anything. Only discovery holds connect_mu_ across a blocking call (it
// serialises reconnects); mu_ is never held across an RPC.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "pd/pd_types.h"
#include "pdpb.grpc.pb.h"

namespace sluice::pd {

// One channel to the PD leader and its stub.
struct PdStub {
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pdpb::PD::Stub> stub;
};

class PdConnection {
 public:
  explicit PdConnection(PdClientOptions options);
  PdConnection(const PdConnection&) = delete;
  PdConnection& operator=(const PdConnection&) = delete;

  // The first discovery: learns the cluster id. kUnavailable if no endpoint
  // answers.
  Status Connect() EXCLUDES(connect_mu_, mu_);

  // The current stub, discovering the leader first if there is none.
  // kCancelled after Stop(); kUnavailable during the reconnect backoff;
  // kIncompatible if PD now answers for another cluster.
  Result<std::shared_ptr<PdStub>> Get() EXCLUDES(connect_mu_, mu_);
  // Drops `stub` if it is still the current one (a later stub stays).
  void MarkBroken(const std::shared_ptr<PdStub>& stub, const Status& why) EXCLUDES(mu_);
  // Maps a failed call's gRPC status and drops `stub` if the status says
  // the connection is gone.
  Status OnCallFailed(const std::shared_ptr<PdStub>& stub, const grpc::Status& status,
                      std::string_view what) EXCLUDES(mu_);

  // Later Get() calls fail with kCancelled.
  void Stop() EXCLUDES(mu_);

  uint64_t cluster_id() const { return cluster_id_.load(std::memory_order_acquire); }
  // Forges the cluster id sent in every header (tests of PD's refusal).
  void set_cluster_id(uint64_t id) { cluster_id_.store(id, std::memory_order_release); }
  // A RequestHeader with the cluster id and caller id.
  pdpb::RequestHeader Header() const;
  // The gRPC deadline of a unary call started now (gRPC deadlines are real
  // time).
  std::chrono::system_clock::time_point Deadline() const;
  const PdClientOptions& options() const { return options_; }
  // Successful discoveries so far (the first one included).
  uint64_t connects() const { return connects_.load(std::memory_order_relaxed); }

 private:
  Result<std::shared_ptr<PdStub>> Discover() REQUIRES(connect_mu_) EXCLUDES(mu_);
  Result<std::shared_ptr<PdStub>> TryEndpoint(const std::string& endpoint) REQUIRES(connect_mu_);
  std::shared_ptr<PdStub> Dial(const std::string& address) const;
  // The current stub, or why there is none right now; nullptr result with OK
  // status means "discover".
  Status Current(std::shared_ptr<PdStub>* out) REQUIRES(mu_);

  const PdClientOptions options_;
  std::atomic<uint64_t> cluster_id_{0};
  std::atomic<uint64_t> connects_{0};

  Mutex connect_mu_ ACQUIRED_BEFORE(mu_);  // Serialises discovery.
  mutable Mutex mu_;
  std::shared_ptr<PdStub> current_ GUARDED_BY(mu_);
  Backoff backoff_ GUARDED_BY(mu_);
  Clock::TimePoint retry_at_ GUARDED_BY(mu_);  // No discovery before this.
  Status last_error_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::pd
