// PdClient: Sluice's client of PD (pdpb.PD over gRPC): cluster id, TSO,
// region lookups, stores and service GC safepoints.
//
// Promises:
//  - every request carries a RequestHeader with the cluster id learned by
//    Connect (GetMembers); a PD header error or refusal becomes a typed
//    Status (kIncompatible for another cluster, kUnavailable for transient
//    ones, kNotFound for missing entries); malformed answers are
//    kProtocolViolation;
//  - a connection error (gRPC UNAVAILABLE / DEADLINE_EXCEEDED) is
//    kUnavailable and the next call re-discovers the PD leader, with backoff
//    between failed attempts; no call waits longer than about rpc_timeout;
//  - GetTs() batches concurrent callers into one request of the long-lived
//    Tso stream and returns strictly increasing, unique timestamps, also
//    across PD restarts (see tso_dispatcher.h).
//
// Ownership: owns its connection and the TSO thread. Thread-safe: every
// method may be called from any thread; Stop() (or the destructor) joins the
// TSO thread, after which calls fail with kCancelled. No lock is held across
// a unary RPC.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "pd/pd_connection.h"
#include "pd/pd_types.h"
#include "pd/tso_dispatcher.h"

namespace sluice::pd {

class PdClient {
 public:
  // Validates the options, discovers the PD leader (endpoints in order) and
  // learns the cluster id; kUnavailable if no endpoint answers.
  static Result<std::unique_ptr<PdClient>> Connect(PdClientOptions options);
  ~PdClient();
  PdClient(const PdClient&) = delete;
  PdClient& operator=(const PdClient&) = delete;

  // Joins the TSO stream thread; later calls fail with kCancelled. Idempotent.
  void Stop();

  uint64_t cluster_id() const { return conn_.cluster_id(); }
  const PdClientOptions& options() const { return conn_.options(); }

  Result<Ts> GetTs();
  // Regions overlapping the memcomparable span, in key order, at most
  // `limit` (0: PD's default, no limit). One PD call. Regions without a
  // leader are returned with leader_store 0.
  Result<std::vector<Region>> ScanRegions(const Span& comparable_range, size_t limit);
  // kNotFound if PD knows no region for the key / id.
  Result<Region> GetRegionByKey(std::string_view comparable_key);
  Result<Region> GetRegionById(RegionId id);
  // kNotFound for an unknown store.
  Result<Store> GetStore(StoreId id);
  Result<std::vector<Store>> GetAllStores();
  // Sets (or with ttl <= 0 removes) this service's safepoint; returns PD's
  // minimum service safepoint, which may be above `safe_point` if PD refused
  // it.
  Result<Ts> UpdateServiceGcSafePoint(const std::string& service_id, int64_t ttl_seconds,
                                      Ts safe_point);
  Result<Ts> GetGcSafePoint();

  // Counters for tests and metrics.
  uint64_t tso_requests_sent() const { return tso_.requests_sent(); }
  uint64_t tso_streams_opened() const { return tso_.streams_opened(); }
  uint64_t scan_regions_calls() const { return scan_calls_.load(std::memory_order_relaxed); }
  uint64_t connects() const { return conn_.connects(); }

  // Sends `cluster_id` in every later header instead of the learned one, so
  // tests can see how PD refuses a wrong cluster id.
  void ForgeClusterIdForTesting(uint64_t cluster_id) { conn_.set_cluster_id(cluster_id); }

 private:
  explicit PdClient(PdClientOptions options);

  template <typename Request, typename Response>
  using Method = grpc::Status (pdpb::PD::Stub::*)(grpc::ClientContext*, const Request&, Response*);

  // One unary call with header, deadline and error mapping.
  template <typename Request, typename Response>
  Status Call(std::string_view what, Method<Request, Response> method, Request* request,
              Response* response);

  PdConnection conn_;
  TsoDispatcher tso_;
  std::atomic<uint64_t> scan_calls_{0};
};

}  // namespace sluice::pd
