#include "pd/pd_client.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/logging.h"
#include "common/tso.h"
#include "pd/pd_wire.h"

namespace sluice::pd {

namespace {

constexpr size_t kMaxTsoBatch = size_t{1} << tso::kLogicalBits;

Status ValidateOptions(const PdClientOptions& options) {
  if (options.endpoints.empty()) return InvalidArgument("pd client: no endpoints");
  if (options.clock == nullptr) return InvalidArgument("pd client: no clock");
  if (options.rpc_timeout.count() <= 0) return InvalidArgument("pd client: rpc_timeout <= 0");
  if (options.backoff_base.count() <= 0 || options.backoff_max < options.backoff_base) {
    return InvalidArgument("pd client: backoff must satisfy 0 < base <= max");
  }
  if (options.region_scan_batch == 0 ||
      options.region_scan_batch > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidArgument("pd client: region_scan_batch out of range");
  }
  if (options.tso_max_batch == 0 || options.tso_max_batch > kMaxTsoBatch) {
    return InvalidArgument("pd client: tso_max_batch must be in [1, 2^18]");
  }
  return Status::Ok();
}

// Regions of a ScanRegions answer, from `regions` or (older PD) from the
// parallel legacy `region_metas` / `leaders`.
Result<std::vector<Region>> RegionsOf(const pdpb::ScanRegionsResponse& response) {
  std::vector<Region> out;
  if (response.regions_size() > 0) {
    out.reserve(response.regions_size());
    for (const pdpb::Region& region : response.regions()) {
      ASSIGN_OR_RETURN(Region r, RegionFromProto(region.region(),
                                                 region.has_leader() ? &region.leader() : nullptr));
      out.push_back(std::move(r));
    }
  } else {
    out.reserve(response.region_metas_size());
    for (int i = 0; i < response.region_metas_size(); ++i) {
      const metapb::Peer* leader = i < response.leaders_size() ? &response.leaders(i) : nullptr;
      ASSIGN_OR_RETURN(Region r, RegionFromProto(response.region_metas(i), leader));
      out.push_back(std::move(r));
    }
  }
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i - 1].end_key.empty() || out[i].start_key < out[i - 1].end_key) {
      return ProtocolViolation("pd ScanRegions: regions " + std::to_string(out[i - 1].id.value()) +
                               " and " + std::to_string(out[i].id.value()) +
                               " overlap or are out of order");
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PdClient>> PdClient::Connect(PdClientOptions options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  std::unique_ptr<PdClient> client(new PdClient(std::move(options)));
  RETURN_IF_ERROR(client->conn_.Connect());
  client->tso_.Start();
  return client;
}

PdClient::PdClient(PdClientOptions options) : conn_(std::move(options)), tso_(&conn_) {}

PdClient::~PdClient() { Stop(); }

void PdClient::Stop() {
  conn_.Stop();
  tso_.Stop();
}

template <typename Request, typename Response>
Status PdClient::Call(std::string_view what, Method<Request, Response> method, Request* request,
                      Response* response) {
  ASSIGN_OR_RETURN(std::shared_ptr<PdStub> stub, conn_.Get());
  *request->mutable_header() = conn_.Header();
  grpc::ClientContext context;
  context.set_deadline(conn_.Deadline());
  grpc::Status status = ((*stub->stub).*method)(&context, *request, response);
  if (!status.ok()) return conn_.OnCallFailed(stub, status, what);
  return FromHeader(response->header(), conn_.cluster_id(), what);
}

Result<Ts> PdClient::GetTs() { return tso_.GetTs(); }

Result<std::vector<Region>> PdClient::ScanRegions(const Span& comparable_range, size_t limit) {
  pdpb::ScanRegionsRequest request;
  request.set_start_key(comparable_range.start);
  request.set_end_key(comparable_range.end);
  request.set_limit(static_cast<int32_t>(
      std::min(limit, static_cast<size_t>(std::numeric_limits<int32_t>::max()))));
  pdpb::ScanRegionsResponse response;
  scan_calls_.fetch_add(1, std::memory_order_relaxed);
  RETURN_IF_ERROR(Call("ScanRegions", &pdpb::PD::Stub::ScanRegions, &request, &response));
  return RegionsOf(response);
}

Result<Region> PdClient::GetRegionByKey(std::string_view comparable_key) {
  pdpb::GetRegionRequest request;
  request.set_region_key(std::string(comparable_key));
  pdpb::GetRegionResponse response;
  RETURN_IF_ERROR(Call("GetRegion", &pdpb::PD::Stub::GetRegion, &request, &response));
  if (!response.has_region()) {
    return NotFound("pd GetRegion: no region for key " + Redact(comparable_key));
  }
  return RegionFromProto(response.region(), response.has_leader() ? &response.leader() : nullptr);
}

Result<Region> PdClient::GetRegionById(RegionId id) {
  pdpb::GetRegionByIDRequest request;
  request.set_region_id(id.value());
  pdpb::GetRegionResponse response;
  RETURN_IF_ERROR(Call("GetRegionByID", &pdpb::PD::Stub::GetRegionByID, &request, &response));
  if (!response.has_region()) {
    return NotFound("pd GetRegionByID: no region " + std::to_string(id.value()));
  }
  if (response.region().id() != id.value()) {
    return ProtocolViolation("pd GetRegionByID: asked region " + std::to_string(id.value()) +
                             ", got " + std::to_string(response.region().id()));
  }
  return RegionFromProto(response.region(), response.has_leader() ? &response.leader() : nullptr);
}

Result<Store> PdClient::GetStore(StoreId id) {
  pdpb::GetStoreRequest request;
  request.set_store_id(id.value());
  pdpb::GetStoreResponse response;
  RETURN_IF_ERROR(Call("GetStore", &pdpb::PD::Stub::GetStore, &request, &response));
  if (!response.has_store()) return NotFound("pd GetStore: no store " + std::to_string(id.value()));
  return StoreFromProto(response.store());
}

Result<std::vector<Store>> PdClient::GetAllStores() {
  pdpb::GetAllStoresRequest request;
  pdpb::GetAllStoresResponse response;
  RETURN_IF_ERROR(Call("GetAllStores", &pdpb::PD::Stub::GetAllStores, &request, &response));
  std::vector<Store> out;
  out.reserve(response.stores_size());
  for (const metapb::Store& store : response.stores()) {
    ASSIGN_OR_RETURN(Store s, StoreFromProto(store));
    out.push_back(std::move(s));
  }
  return out;
}

Result<Ts> PdClient::UpdateServiceGcSafePoint(const std::string& service_id, int64_t ttl_seconds,
                                              Ts safe_point) {
  pdpb::UpdateServiceGCSafePointRequest request;
  request.set_service_id(service_id);
  request.set_ttl(ttl_seconds);
  request.set_safe_point(safe_point.value());
  pdpb::UpdateServiceGCSafePointResponse response;
  RETURN_IF_ERROR(Call("UpdateServiceGCSafePoint", &pdpb::PD::Stub::UpdateServiceGCSafePoint,
                       &request, &response));
  return Ts(response.min_safe_point());
}

Result<Ts> PdClient::GetGcSafePoint() {
  pdpb::GetGCSafePointRequest request;
  pdpb::GetGCSafePointResponse response;
  RETURN_IF_ERROR(Call("GetGCSafePoint", &pdpb::PD::Stub::GetGCSafePoint, &request, &response));
  return Ts(response.safe_point());
}

}  // namespace sluice::pd
