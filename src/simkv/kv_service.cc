#include "simkv/kv_service.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "common/memcomparable.h"
#include "simkv/cdc_downstream.h"
#include "simkv/cdc_errors.h"
#include "simkv/kv_errors.h"
#include "simkv/lock_resolution.h"
#include "simkv/proto_convert.h"

namespace sluice::simkv {

namespace {

std::optional<Peer> PeerOn(const RegionInfo& region, StoreId store) {
  for (const Peer& peer : region.peers) {
    if (peer.store_id == store) return peer;
  }
  return std::nullopt;
}

// What TiKV attaches to EpochNotMatch: the region as it is now and, after a
// split, its sibling (here the region right after it).
std::vector<RegionInfo> CurrentRegions(const RegionMap& regions, const RegionInfo& region) {
  std::vector<RegionInfo> out{region};
  if (region.end_key.empty()) return out;
  Result<RegionInfo> next = regions.RegionForKey(region.end_key);
  if (next.ok()) out.push_back(std::move(next).value());
  return out;
}

// The smaller of two raw end keys where empty means +inf.
std::string MinEnd(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return std::min(a, b);
}

}  // namespace

KvService::KvService(KvServiceOptions options, MvccStore* store, RegionMap* regions)
    : options_(options), store_(store), regions_(regions) {}

void KvService::SetBusy(std::optional<BusyState> busy) {
  MutexLock lock(&mu_);
  busy_ = std::move(busy);
}

std::variant<RegionInfo, errorpb::Error> KvService::CheckContext(
    const kvrpcpb::Context& context) const {
  {
    MutexLock lock(&mu_);
    if (busy_.has_value()) {
      return ToRegionError(ServerIsBusyError(busy_->reason, busy_->backoff_ms));
    }
  }
  const uint64_t my_store = options_.store_id.value();
  if (context.peer().store_id() != my_store) {
    return StoreNotMatchError(context.peer().store_id(), my_store);
  }
  Result<RegionInfo> region = regions_->RegionById(RegionId(context.region_id()));
  std::optional<Peer> mine = region.ok() ? PeerOn(*region, options_.store_id) : std::nullopt;
  if (!mine.has_value()) return ToRegionError(RegionNotFoundError(context.region_id()));
  if (context.peer().id() != mine->id) return MismatchPeerIdError(context.peer().id(), mine->id);
  if (region->leader != options_.store_id) {
    return ToRegionError(NotLeaderError(context.region_id(), region->LeaderPeer()));
  }
  if (context.region_epoch().version() < region->epoch.version) {
    return ToRegionError(EpochNotMatchError(CurrentRegions(*regions_, *region)));
  }
  return std::move(region).value();
}

std::variant<RegionInfo, errorpb::Error> KvService::CheckKey(const kvrpcpb::Context& context,
                                                             std::string_view raw_key) const {
  std::variant<RegionInfo, errorpb::Error> checked = CheckContext(context);
  if (auto* region = std::get_if<RegionInfo>(&checked)) {
    const std::string encoded = memcomparable::EncodeBytes(raw_key);
    if (!region->ContainsEncoded(encoded)) return KeyNotInRegionError(encoded, *region);
  }
  return checked;
}

kvrpcpb::KeyError KvService::ReadError(const TxnError& error, Ts version) const {
  if (error.kind == TxnErrorKind::kBelowGcSafePoint) {
    return AbortError("simkv: version " + std::to_string(version.value()) +
                      " is below the GC safe point " +
                      std::to_string(store_->gc_safe_point().value()));
  }
  return KeyErrorOf(error);
}

grpc::Status KvService::KvGet(grpc::ServerContext* context, const kvrpcpb::GetRequest* request,
                              kvrpcpb::GetResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::variant<RegionInfo, errorpb::Error> checked = CheckKey(request->context(), request->key());
  if (auto* error = std::get_if<errorpb::Error>(&checked)) {
    *response->mutable_region_error() = std::move(*error);
    return grpc::Status::OK;
  }
  const Ts version(request->version());
  TxnResult<std::optional<std::string>> got = store_->Get(request->key(), version);
  if (!got.ok()) {
    *response->mutable_error() = ReadError(got.error(), version);
  } else if (got.value().has_value()) {
    response->set_value(*got.value());
  } else {
    response->set_not_found(true);
  }
  return grpc::Status::OK;
}

grpc::Status KvService::KvScan(grpc::ServerContext* context, const kvrpcpb::ScanRequest* request,
                               kvrpcpb::ScanResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::variant<RegionInfo, errorpb::Error> checked = CheckContext(request->context());
  if (auto* error = std::get_if<errorpb::Error>(&checked)) {
    *response->mutable_region_error() = std::move(*error);
    return grpc::Status::OK;
  }
  const RegionInfo& region = std::get<RegionInfo>(checked);
  if (request->reverse() || request->sample_step() > 0) {
    *response->mutable_error() = AbortError("simkv: reverse and sampled scans are not supported");
    return grpc::Status::OK;
  }
  const std::string encoded_start = memcomparable::EncodeBytes(request->start_key());
  if (!region.ContainsEncoded(encoded_start)) {
    *response->mutable_region_error() = KeyNotInRegionError(encoded_start, region);
    return grpc::Status::OK;
  }
  // TiKV scans nothing for limit 0; the MVCC store reads 0 as no limit.
  if (request->limit() == 0) return grpc::Status::OK;
  const std::string end = MinEnd(RegionRawRange(region).end, request->end_key());
  if (!end.empty() && end <= request->start_key()) return grpc::Status::OK;
  const Ts version(request->version());
  TxnResult<std::vector<KvPair>> scanned =
      store_->Scan(request->start_key(), end, version, request->limit());
  if (!scanned.ok()) {
    kvrpcpb::KeyError error = ReadError(scanned.error(), version);
    *response->add_pairs()->mutable_error() = error;
    *response->mutable_error() = std::move(error);
    return grpc::Status::OK;
  }
  for (const KvPair& kv : scanned.value()) {
    kvrpcpb::KvPair* pair = response->add_pairs();
    pair->set_key(kv.key);
    if (!request->key_only()) pair->set_value(kv.value);
  }
  return grpc::Status::OK;
}

grpc::Status KvService::KvScanLock(grpc::ServerContext* context,
                                   const kvrpcpb::ScanLockRequest* request,
                                   kvrpcpb::ScanLockResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::variant<RegionInfo, errorpb::Error> checked = CheckContext(request->context());
  if (auto* error = std::get_if<errorpb::Error>(&checked)) {
    *response->mutable_region_error() = std::move(*error);
    return grpc::Status::OK;
  }
  const RawRange range = RegionRawRange(std::get<RegionInfo>(checked));
  const std::string start = std::max(range.start, request->start_key());
  const std::string end = MinEnd(range.end, request->end_key());
  if (!end.empty() && end <= start) return grpc::Status::OK;
  for (const LockInfo& lock :
       ScanLocks(*store_, start, end, Ts(request->max_version()), request->limit())) {
    *response->add_locks() = ToProtoLock(lock);
  }
  return grpc::Status::OK;
}

grpc::Status KvService::KvCheckTxnStatus(grpc::ServerContext* context,
                                         const kvrpcpb::CheckTxnStatusRequest* request,
                                         kvrpcpb::CheckTxnStatusResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::variant<RegionInfo, errorpb::Error> checked =
      CheckKey(request->context(), request->primary_key());
  if (auto* error = std::get_if<errorpb::Error>(&checked)) {
    *response->mutable_region_error() = std::move(*error);
    return grpc::Status::OK;
  }
  if (request->resolving_pessimistic_lock() || request->is_txn_file()) {
    *response->mutable_error() =
        AbortError("simkv: pessimistic locks and transaction files are not simulated");
    return grpc::Status::OK;
  }
  TxnResult<TxnStatusAnswer> answer =
      CheckTxnStatus(*store_, request->primary_key(), Ts(request->lock_ts()),
                     Ts(request->current_ts()), request->rollback_if_not_exist());
  if (!answer.ok()) {
    *response->mutable_error() = KeyErrorOf(answer.error());
    return grpc::Status::OK;
  }
  const TxnStatusAnswer& a = answer.value();
  if (a.not_found) {
    kvrpcpb::TxnNotFound* nf = response->mutable_error()->mutable_txn_not_found();
    nf->set_start_ts(request->lock_ts());
    nf->set_primary_key(request->primary_key());
    return grpc::Status::OK;
  }
  response->set_lock_ttl(a.lock_ttl_ms);
  response->set_commit_version(a.commit_ts.value());
  response->set_action(static_cast<kvrpcpb::Action>(a.action));
  if (a.lock.has_value()) *response->mutable_lock_info() = ToProtoLock(*a.lock);
  return grpc::Status::OK;
}

grpc::Status KvService::KvResolveLock(grpc::ServerContext* context,
                                      const kvrpcpb::ResolveLockRequest* request,
                                      kvrpcpb::ResolveLockResponse* response) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::variant<RegionInfo, errorpb::Error> checked = CheckContext(request->context());
  if (auto* error = std::get_if<errorpb::Error>(&checked)) {
    *response->mutable_region_error() = std::move(*error);
    return grpc::Status::OK;
  }
  const RegionInfo& region = std::get<RegionInfo>(checked);
  if (request->start_version() == 0 || request->txn_infos_size() > 0 || request->is_txn_file()) {
    *response->mutable_error() =
        AbortError("simkv: only single-transaction lock resolution is simulated");
    return grpc::Status::OK;
  }
  std::vector<std::string> keys(request->keys().begin(), request->keys().end());
  for (const std::string& key : keys) {
    const std::string encoded = memcomparable::EncodeBytes(key);
    if (!region.ContainsEncoded(encoded)) {
      *response->mutable_region_error() = KeyNotInRegionError(encoded, region);
      return grpc::Status::OK;
    }
  }
  const RawRange range = RegionRawRange(region);
  TxnStatus resolved =
      ResolveTxnLocks(*store_, range.start, range.end, Ts(request->start_version()),
                      Ts(request->commit_version()), keys);
  if (!resolved.ok()) *response->mutable_error() = KeyErrorOf(resolved.error());
  return grpc::Status::OK;
}

}  // namespace sluice::simkv
