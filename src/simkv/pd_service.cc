#include "simkv/pd_service.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "common/logging.h"
#include "common/tso.h"
#include "simkv/proto_convert.h"

namespace sluice::simkv {

namespace {

constexpr int64_t kInfiniteTtl = std::numeric_limits<int64_t>::max();

size_t LimitOf(int32_t limit) { return limit <= 0 ? 0 : static_cast<size_t>(limit); }

}  // namespace

PdService::PdService(PdServiceOptions options, RegionMap* regions, TsoAllocator* tso,
                     StoreRegistry* stores, MvccStore* store)
    : options_(std::move(options)), regions_(regions), tso_(tso), stores_(stores), store_(store) {}

void PdService::SetClientUrl(std::string url) {
  MutexLock lock(&mu_);
  client_url_ = std::move(url);
}

void PdService::CancelStreams() {
  streams_.Close();
  streams_.CancelAll();
}

grpc::Status PdService::CheckHeader(const pdpb::RequestHeader& header) const {
  if (header.cluster_id() == options_.cluster_id) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "mismatch cluster id, need " + std::to_string(options_.cluster_id) +
                          " but got " + std::to_string(header.cluster_id()));
}

void PdService::FillHeader(pdpb::ResponseHeader* header) const {
  header->set_cluster_id(options_.cluster_id);
}

void PdService::FillError(pdpb::ResponseHeader* header, pdpb::ErrorType type,
                          std::string message) const {
  FillHeader(header);
  header->mutable_error()->set_type(type);
  header->mutable_error()->set_message(std::move(message));
}

void PdService::FillRegion(const RegionInfo& region, pdpb::Region* out) const {
  *out->mutable_region() = ToProto(region);
  if (std::optional<Peer> leader = region.LeaderPeer()) *out->mutable_leader() = ToProto(*leader);
}

int64_t PdService::NowUnix() const {
  auto wall = options_.clock->WallNow().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(wall).count();
}

grpc::Status PdService::GetMembers(grpc::ServerContext*, const pdpb::GetMembersRequest*,
                                   pdpb::GetMembersResponse* response) {
  FillHeader(response->mutable_header());
  pdpb::Member member;
  member.set_name(options_.member_name);
  member.set_member_id(options_.member_id);
  {
    MutexLock lock(&mu_);
    member.add_peer_urls(client_url_);
    member.add_client_urls(client_url_);
  }
  *response->add_members() = member;
  *response->mutable_leader() = member;
  *response->mutable_etcd_leader() = member;
  return grpc::Status::OK;
}

grpc::Status PdService::Tso(grpc::ServerContext* context,
                            grpc::ServerReaderWriter<pdpb::TsoResponse, pdpb::TsoRequest>* stream) {
  std::optional<ActiveCalls::Guard> guard = streams_.Enter(context);
  if (!guard) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server not started");
  pdpb::TsoRequest request;
  while (stream->Read(&request)) {
    if (grpc::Status status = CheckHeader(request.header()); !status.ok()) return status;
    Result<Ts> ts = tso_->Allocate(request.count());
    if (!ts.ok()) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "generate timestamp failed: " + ts.status().ToString());
    }
    pdpb::TsoResponse response;
    FillHeader(response.mutable_header());
    response.set_count(request.count());
    response.mutable_timestamp()->set_physical(tso::Physical(*ts));
    response.mutable_timestamp()->set_logical(tso::Logical(*ts));
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

grpc::Status PdService::GetRegion(grpc::ServerContext*, const pdpb::GetRegionRequest* request,
                                  pdpb::GetRegionResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  FillHeader(response->mutable_header());
  Result<RegionInfo> region = regions_->RegionForKey(request->region_key());
  if (!region.ok()) return grpc::Status::OK;
  pdpb::Region out;
  FillRegion(*region, &out);
  *response->mutable_region() = std::move(*out.mutable_region());
  if (out.has_leader()) *response->mutable_leader() = out.leader();
  return grpc::Status::OK;
}

grpc::Status PdService::GetRegionByID(grpc::ServerContext*,
                                      const pdpb::GetRegionByIDRequest* request,
                                      pdpb::GetRegionResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  FillHeader(response->mutable_header());
  Result<RegionInfo> region = regions_->RegionById(RegionId(request->region_id()));
  if (!region.ok()) return grpc::Status::OK;
  pdpb::Region out;
  FillRegion(*region, &out);
  *response->mutable_region() = std::move(*out.mutable_region());
  if (out.has_leader()) *response->mutable_leader() = out.leader();
  return grpc::Status::OK;
}

grpc::Status PdService::ScanRegions(grpc::ServerContext*, const pdpb::ScanRegionsRequest* request,
                                    pdpb::ScanRegionsResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  FillHeader(response->mutable_header());
  for (const RegionInfo& region :
       regions_->Scan(request->start_key(), request->end_key(), LimitOf(request->limit()))) {
    pdpb::Region* out = response->add_regions();
    FillRegion(region, out);
    *response->add_region_metas() = out->region();
    *response->add_leaders() = out->leader();  // An empty peer if none, as PD does.
  }
  return grpc::Status::OK;
}

grpc::Status PdService::BatchScanRegions(grpc::ServerContext*,
                                         const pdpb::BatchScanRegionsRequest* request,
                                         pdpb::BatchScanRegionsResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  const auto& ranges = request->ranges();
  for (int i = 0; i < ranges.size(); ++i) {
    if (i > 0 && ranges[i].start_key() < ranges[i - 1].end_key()) {
      FillError(response->mutable_header(), pdpb::UNKNOWN, "invalid key range, ranges overlapped");
      return grpc::Status::OK;
    }
    if (!ranges[i].end_key().empty() && ranges[i].start_key() > ranges[i].end_key()) {
      FillError(response->mutable_header(), pdpb::UNKNOWN,
                "invalid key range, start key > end key");
      return grpc::Status::OK;
    }
  }
  FillHeader(response->mutable_header());
  const size_t limit = LimitOf(request->limit());
  uint64_t last_id = 0;
  for (const pdpb::KeyRange& range : ranges) {
    for (const RegionInfo& region : regions_->Scan(range.start_key(), range.end_key(), limit)) {
      if (region.id.value() == last_id) continue;  // Shared by two ranges.
      if (limit != 0 && static_cast<size_t>(response->regions_size()) >= limit) break;
      FillRegion(region, response->add_regions());
      last_id = region.id.value();
    }
  }
  return grpc::Status::OK;
}

grpc::Status PdService::GetStore(grpc::ServerContext*, const pdpb::GetStoreRequest* request,
                                 pdpb::GetStoreResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  std::optional<StoreInfo> store = stores_->Get(StoreId(request->store_id()));
  if (!store) {
    FillError(response->mutable_header(), pdpb::UNKNOWN,
              "invalid store ID " + std::to_string(request->store_id()) + ", not found");
    return grpc::Status::OK;
  }
  FillHeader(response->mutable_header());
  *response->mutable_store() = ToProto(*store);
  return grpc::Status::OK;
}

grpc::Status PdService::GetAllStores(grpc::ServerContext*, const pdpb::GetAllStoresRequest* request,
                                     pdpb::GetAllStoresResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  FillHeader(response->mutable_header());
  for (const StoreInfo& store : stores_->All()) {
    if (request->exclude_tombstone_stores() && store.state == StoreState::kTombstone) continue;
    *response->add_stores() = ToProto(store);
  }
  return grpc::Status::OK;
}

grpc::Status PdService::UpdateServiceGCSafePoint(
    grpc::ServerContext*, const pdpb::UpdateServiceGCSafePointRequest* request,
    pdpb::UpdateServiceGCSafePointResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  if (request->service_id() == ServiceSafePoints::kGcWorker) {
    return UpdateGcWorker(*request, response);
  }
  const int64_t now = NowUnix();
  ServiceSafePoints::UpdateResult result;
  {
    MutexLock lock(&mu_);
    result = safepoints_.Update(request->service_id(), Ts(request->safe_point()), request->ttl(),
                                now, store_->gc_safe_point());
  }
  if (result.updated) {
    LOG_INFO("pd: service {} gc safepoint {} ttl {}s", RedactText(request->service_id()),
             request->safe_point(), request->ttl());
  }
  FillHeader(response->mutable_header());
  response->set_service_id(result.min.service_id);
  response->set_ttl(TtlLeft(result.min, now));
  response->set_min_safe_point(result.min.safe_point.value());
  return grpc::Status::OK;
}

grpc::Status PdService::UpdateGcWorker(const pdpb::UpdateServiceGCSafePointRequest& request,
                                       pdpb::UpdateServiceGCSafePointResponse* response) {
  if (request.ttl() != kInfiniteTtl) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        "TTL of gc_worker's service safe point must be infinity");
  }
  const int64_t now = NowUnix();
  ServiceSafePoint min;
  {
    MutexLock lock(&mu_);
    Result<Ts> gc = RunGcLocked(Ts(request.safe_point()));
    if (!gc.ok()) return grpc::Status(grpc::StatusCode::UNKNOWN, gc.status().ToString());
    min = safepoints_.Min(now, *gc);
  }
  FillHeader(response->mutable_header());
  response->set_service_id(min.service_id);
  response->set_ttl(TtlLeft(min, now));
  response->set_min_safe_point(min.safe_point.value());
  return grpc::Status::OK;
}

grpc::Status PdService::GetGCSafePoint(grpc::ServerContext*,
                                       const pdpb::GetGCSafePointRequest* request,
                                       pdpb::GetGCSafePointResponse* response) {
  if (grpc::Status status = CheckHeader(request->header()); !status.ok()) return status;
  FillHeader(response->mutable_header());
  response->set_safe_point(store_->gc_safe_point().value());
  return grpc::Status::OK;
}

Result<Ts> PdService::RunGc(std::optional<Ts> upper) {
  MutexLock lock(&mu_);
  return RunGcLocked(upper);
}

Result<Ts> PdService::RunGcLocked(std::optional<Ts> upper) {
  if (!upper) {
    ASSIGN_OR_RETURN(upper, tso_->Allocate(1));
  }
  Ts target = *upper;
  if (std::optional<Ts> min = safepoints_.MinService(NowUnix())) target = std::min(target, *min);
  GcStats stats = store_->Gc(target);
  Ts now = store_->gc_safe_point();
  LOG_INFO("pd: gc to {} (asked {}), removed {} versions of {} keys", now.value(), upper->value(),
           stats.removed_versions, stats.removed_keys);
  return now;
}

Ts PdService::GcSafePoint() const { return store_->gc_safe_point(); }

std::vector<ServiceSafePoint> PdService::LiveServiceSafePoints() {
  MutexLock lock(&mu_);
  return safepoints_.Live(NowUnix());
}

}  // namespace sluice::simkv
