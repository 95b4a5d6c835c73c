// KvService: the transactional snapshot reads (KvGet, KvScan) and the lock
// resolution calls (KvScanLock, KvCheckTxnStatus, KvResolveLock) of the Tikv
// gRPC service of one simulated TiKV store, answering as TiKV does.
//
// Every request is checked against its kvrpcpb.Context in TiKV's order:
// ServerIsBusy while the store is made busy; StoreNotMatch if the peer is
// addressed to another store; RegionNotFound if the region is unknown or has
// no peer here; MismatchPeerId if the peer id is not this store's peer;
// NotLeader (with the leader peer) if this store does not lead the region;
// EpochNotMatch (with the current region and its right neighbour) if the
// request's epoch version is older than the region's (conf_ver is not
// compared for reads, as in TiKV). Keys in requests and answers are raw;
// region boundaries are memcomparable, so a key is encoded before it is
// compared with them. A start key (or KvGet key) outside the region is
// KeyNotInRegion; a scan ends at the region's end.
//
// The read itself runs on the MvccStore at `version`: a put/delete lock
// with start_ts <= version blocks it (KeyError.locked; for a scan in both
// ScanResponse.error and the only pair, as TiKV answers a failed scan).
// TiKV does not check the GC safe point on reads (the client does); simkv's
// store has no history below it, so such a read answers KeyError.abort
// "simkv: version V is below the GC safe point S". Reverse and sampled scans
// are not implemented and answer KeyError.abort.
//
// Threads: gRPC handler threads call the RPCs concurrently; SetBusy may be
// called from any thread. The store and the regions are borrowed and must
// outlive the service.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <variant>

#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/cdc_request_validator.h"
#include "simkv/mvcc_store.h"
#include "simkv/region_map.h"
#include "tikvpb.grpc.pb.h"

namespace sluice::simkv {

struct KvServiceOptions {
  StoreId store_id;
};

class KvService final : public tikvpb::Tikv::Service {
 public:
  KvService(KvServiceOptions options, MvccStore* store, RegionMap* regions);
  KvService(const KvService&) = delete;
  KvService& operator=(const KvService&) = delete;

  // Requests are answered ServerIsBusy while set.
  void SetBusy(std::optional<BusyState> busy) EXCLUDES(mu_);

  // Requests answered so far (any outcome).
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

  grpc::Status KvGet(grpc::ServerContext* context, const kvrpcpb::GetRequest* request,
                     kvrpcpb::GetResponse* response) override;
  grpc::Status KvScan(grpc::ServerContext* context, const kvrpcpb::ScanRequest* request,
                      kvrpcpb::ScanResponse* response) override;
  grpc::Status KvScanLock(grpc::ServerContext* context, const kvrpcpb::ScanLockRequest* request,
                          kvrpcpb::ScanLockResponse* response) override;
  grpc::Status KvCheckTxnStatus(grpc::ServerContext* context,
                                const kvrpcpb::CheckTxnStatusRequest* request,
                                kvrpcpb::CheckTxnStatusResponse* response) override;
  grpc::Status KvResolveLock(grpc::ServerContext* context,
                             const kvrpcpb::ResolveLockRequest* request,
                             kvrpcpb::ResolveLockResponse* response) override;

 private:
  // The region the context addresses, or the region error to answer.
  std::variant<RegionInfo, errorpb::Error> CheckContext(const kvrpcpb::Context& context) const
      EXCLUDES(mu_);
  // The region the context addresses if `raw_key` lies in it, or the
  // region error to answer.
  std::variant<RegionInfo, errorpb::Error> CheckKey(const kvrpcpb::Context& context,
                                                    std::string_view raw_key) const EXCLUDES(mu_);
  // The key error of a failed read at `version`.
  kvrpcpb::KeyError ReadError(const TxnError& error, Ts version) const;

  const KvServiceOptions options_;
  MvccStore* const store_;
  RegionMap* const regions_;
  std::atomic<uint64_t> requests_{0};

  mutable Mutex mu_;
  std::optional<BusyState> busy_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
