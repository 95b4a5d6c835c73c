// RegionRpc: what every unary request to a region's leader on TiKV's Tikv
// service needs, the way tikv client-go's region request sender does it:
// locate the region of a raw key through the PD region cache, one gRPC
// channel per store address, the request context (region id, epoch, leader
// peer), and client-go's reaction to a failed call or a region error (move
// the cached leader, drop the cached region or store, back off). RpcCall
// carries one operation's deadline and backoff across its retries.
//
// Ownership: borrows the RegionCache (it must outlive this); owns the
// channels. Thread-safe: any thread may send concurrently; Stop() (any
// thread) cancels calls in progress and later ones.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "errorpb.pb.h"
#include "kvrpcpb.pb.h"
#include "pd/region_cache.h"
#include "tikvpb.grpc.pb.h"

namespace sluice::kvclient {

struct RegionRpcOptions {
  Clock* clock = Clock::Real();  // Deadlines and backoff; must outlive the sender.
  // Deadline of one operation, retries included.
  std::chrono::milliseconds timeout{20000};
  // Deadline of each RPC (cut to the operation's deadline).
  std::chrono::milliseconds rpc_timeout{5000};
  BackoffOptions backoff{std::chrono::milliseconds(20), std::chrono::milliseconds(1000), 2.0, 0.2};
};

// A located region, its leader's address and its bounds as raw keys.
struct RegionTarget {
  pd::Region region;
  std::string address;
  std::string raw_start;
  std::string raw_end;  // Empty = +inf.
};

// How one attempt ended: OK, or an error with how to go on.
struct RpcAttempt {
  Status status;
  bool retry = false;      // Retry within the operation's deadline.
  bool retry_now = false;  // ...without a backoff.
  Clock::Duration min_backoff{0};
  // The RPC ran past its deadline: at the operation's end, the error before
  // it (say, a lock still held) is the better reason to report.
  bool deadline_exceeded = false;
};

// Counters of what a sender did, for tests and metrics.
struct RegionRpcStats {
  uint64_t rpcs = 0;           // Calls sent.
  uint64_t rpc_failures = 0;   // Calls that failed in gRPC (store unreachable, deadline).
  uint64_t region_errors = 0;  // Answers with a region error.
};

// One operation (a scan, a get, a lock resolution): its deadline, its
// backoff and the last retryable error. Owned by the thread running it.
class RpcCall {
 public:
  // `what` names the operation in errors ("snapshot read").
  RpcCall(const RegionRpcOptions& options, CancelToken token, uint64_t seed, std::string what);

  const CancelToken& token() const { return token_; }
  std::chrono::system_clock::time_point RpcDeadline() const;
  // After an attempt that made progress.
  void Progress();
  // After a failed attempt: OK to try again (after waiting), or the error
  // that ends the operation (not retryable, cancelled, or out of time).
  Status Retry(const RpcAttempt& attempt);

 private:
  const RegionRpcOptions& options_;
  const CancelToken token_;
  const std::string what_;
  const Clock::TimePoint deadline_;
  Backoff backoff_;
  int immediate_ = 0;
  Status previous_;  // The last retried error.
};

class RegionRpc {
 public:
  using Stub = tikvpb::Tikv::Stub;
  template <typename Request, typename Response>
  using Method = grpc::Status (Stub::*)(grpc::ClientContext*, const Request&, Response*);

  RegionRpc(pd::RegionCache* cache, RegionRpcOptions options);
  RegionRpc(const RegionRpc&) = delete;
  RegionRpc& operator=(const RegionRpc&) = delete;

  const RegionRpcOptions& options() const { return options_; }
  // A new operation named `what`.
  RpcCall NewCall(std::string what);

  // Locates the region of raw `key` and its leader's address.
  RpcAttempt Locate(std::string_view key, RegionTarget* target);
  // The same for a memcomparable key (as PD's boundaries are).
  RpcAttempt LocateComparable(std::string_view comparable_key, RegionTarget* target);

  // Sends `request` to the target region's leader with its context filled
  // in. OK with the answer in `response`, or the attempt for a failed RPC or
  // a region error (the cache updated as client-go does). The caller checks
  // the answer's key errors.
  template <typename Request, typename Response>
  RpcAttempt Send(const RpcCall& call, const RegionTarget& target, Method<Request, Response> method,
                  Request* request, Response* response);

  // Cancels operations in progress and later ones. Idempotent.
  void Stop() { cancel_.Cancel(); }
  bool stopped() const { return cancel_.cancelled(); }
  RegionRpcStats stats() const;

 private:
  struct Channel {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<Stub> stub;
  };

  Result<std::shared_ptr<Channel>> ChannelFor(const std::string& address) EXCLUDES(mu_);
  static void FillContext(const pd::Region& region, kvrpcpb::Context* context);
  RpcAttempt RpcFailed(const RegionTarget& target, const grpc::Status& status);
  RpcAttempt RegionError(const RegionTarget& target, const errorpb::Error& error);

  pd::RegionCache* const cache_;
  const RegionRpcOptions options_;
  CancelSource cancel_;
  std::atomic<uint64_t> next_seed_{1};
  std::atomic<uint64_t> rpcs_{0};
  std::atomic<uint64_t> rpc_failures_{0};
  std::atomic<uint64_t> region_errors_{0};

  Mutex mu_;
  std::map<std::string, std::shared_ptr<Channel>> channels_ GUARDED_BY(mu_);
};

template <typename Request, typename Response>
RpcAttempt RegionRpc::Send(const RpcCall& call, const RegionTarget& target,
                           Method<Request, Response> method, Request* request, Response* response) {
  Result<std::shared_ptr<Channel>> channel = ChannelFor(target.address);
  if (!channel.ok()) return {channel.status(), true};
  FillContext(target.region, request->mutable_context());
  grpc::ClientContext context;
  context.set_deadline(call.RpcDeadline());
  grpc::Status status;
  {
    CancelCallback on_cancel(call.token(), [&context] { context.TryCancel(); });
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    status = ((*channel)->stub.get()->*method)(&context, *request, response);
  }
  if (!status.ok()) return RpcFailed(target, status);
  if (response->has_region_error()) return RegionError(target, response->region_error());
  return {Status::Ok()};
}

}  // namespace sluice::kvclient
