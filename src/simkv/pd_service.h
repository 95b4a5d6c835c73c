// PdService: the simulated PD's gRPC service (pdpb.PD) over the cluster's
// RegionMap, TsoAllocator, StoreRegistry and MvccStore: members, TSO, region
// lookups, stores, and the service GC safepoints that bound the MVCC GC.
//
// Behaviour follows PD (server/grpc_service.go, pkg/utils/grpcutil):
//  - Every RPC but GetMembers checks header.cluster_id and fails a mismatch
//    with gRPC FAILED_PRECONDITION "mismatch cluster id, need X but got Y"
//    (Tso fails the whole stream). GetMembers answers any cluster id, with the
//    real one in its ResponseHeader.
//  - A region that is not found is an OK header without a region; an unknown
//    store is an UNKNOWN header error "invalid store ID N, not found".
//  - Tso answers one response per request with the last timestamp of the
//    batch; count 0 fails the stream with UNKNOWN.
//  - Service safepoints: see service_safepoints.h. "gc_worker" may only be
//    updated with an infinite TTL, which runs GC up to that safe point.
//
// Ownership: the service borrows everything it is given; all of it must
// outlive it. Thread-safety: gRPC calls it on its own threads; RunGc and the
// accessors may be called from any thread. Lock order: mu_ -> MvccStore.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "pdpb.grpc.pb.h"
#include "simkv/grpc_util.h"
#include "simkv/mvcc_store.h"
#include "simkv/region_map.h"
#include "simkv/service_safepoints.h"
#include "simkv/store_registry.h"
#include "simkv/tso_allocator.h"

namespace sluice::simkv {

struct PdServiceOptions {
  uint64_t cluster_id = 7000000000000000001ULL;
  uint64_t member_id = 1;
  std::string member_name = "pd-simkv";
  const Clock* clock = Clock::Real();  // Service safepoint TTLs; must outlive the service.
};

class PdService final : public pdpb::PD::Service {
 public:
  PdService(PdServiceOptions options, RegionMap* regions, TsoAllocator* tso, StoreRegistry* stores,
            MvccStore* store);

  // The URL clients dial ("http://127.0.0.1:<port>"), known once bound.
  void SetClientUrl(std::string url) EXCLUDES(mu_);
  uint64_t cluster_id() const { return options_.cluster_id; }

  // Runs MVCC GC at min(upper, the minimum live service safepoint); `upper`
  // defaults to a fresh TSO. The GC safe point never moves back. Returns the
  // GC safe point after the run.
  Result<Ts> RunGc(std::optional<Ts> upper = std::nullopt) EXCLUDES(mu_);
  Ts GcSafePoint() const;
  std::vector<ServiceSafePoint> LiveServiceSafePoints() EXCLUDES(mu_);

  // Cancels open Tso streams; new ones are refused until Reopen().
  void CancelStreams();
  void Reopen() { streams_.Reopen(); }

  grpc::Status GetMembers(grpc::ServerContext* context, const pdpb::GetMembersRequest* request,
                          pdpb::GetMembersResponse* response) override;
  grpc::Status Tso(grpc::ServerContext* context,
                   grpc::ServerReaderWriter<pdpb::TsoResponse, pdpb::TsoRequest>* stream) override;
  grpc::Status GetRegion(grpc::ServerContext* context, const pdpb::GetRegionRequest* request,
                         pdpb::GetRegionResponse* response) override;
  grpc::Status GetRegionByID(grpc::ServerContext* context,
                             const pdpb::GetRegionByIDRequest* request,
                             pdpb::GetRegionResponse* response) override;
  grpc::Status ScanRegions(grpc::ServerContext* context, const pdpb::ScanRegionsRequest* request,
                           pdpb::ScanRegionsResponse* response) override;
  grpc::Status BatchScanRegions(grpc::ServerContext* context,
                                const pdpb::BatchScanRegionsRequest* request,
                                pdpb::BatchScanRegionsResponse* response) override;
  grpc::Status GetStore(grpc::ServerContext* context, const pdpb::GetStoreRequest* request,
                        pdpb::GetStoreResponse* response) override;
  grpc::Status GetAllStores(grpc::ServerContext* context, const pdpb::GetAllStoresRequest* request,
                            pdpb::GetAllStoresResponse* response) override;
  grpc::Status UpdateServiceGCSafePoint(grpc::ServerContext* context,
                                        const pdpb::UpdateServiceGCSafePointRequest* request,
                                        pdpb::UpdateServiceGCSafePointResponse* response) override;
  grpc::Status GetGCSafePoint(grpc::ServerContext* context,
                              const pdpb::GetGCSafePointRequest* request,
                              pdpb::GetGCSafePointResponse* response) override;

 private:
  grpc::Status CheckHeader(const pdpb::RequestHeader& header) const;
  void FillHeader(pdpb::ResponseHeader* header) const;
  void FillError(pdpb::ResponseHeader* header, pdpb::ErrorType type, std::string message) const;
  void FillRegion(const RegionInfo& region, pdpb::Region* out) const;
  int64_t NowUnix() const;
  Result<Ts> RunGcLocked(std::optional<Ts> upper) REQUIRES(mu_);
  grpc::Status UpdateGcWorker(const pdpb::UpdateServiceGCSafePointRequest& request,
                              pdpb::UpdateServiceGCSafePointResponse* response) EXCLUDES(mu_);

  const PdServiceOptions options_;
  RegionMap* const regions_;
  TsoAllocator* const tso_;
  StoreRegistry* const stores_;
  MvccStore* const store_;
  ActiveCalls streams_;

  mutable Mutex mu_;
  std::string client_url_ GUARDED_BY(mu_);
  ServiceSafePoints safepoints_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
