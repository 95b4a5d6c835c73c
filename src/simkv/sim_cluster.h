// SimCluster: a whole simulated TiKV/PD cluster in one process. It owns the
// MvccStore, the RegionMap, the TSO, the PD service and N stores, each
// serving ChangeData and the Tikv snapshot reads (KvGet, KvScan) on its own
// loopback gRPC server (127.0.0.1, port picked at start and kept across
// restarts), plus a tiny transaction client.
//
// Faults and region operations, each visible to CDC clients as TiKV shows it:
//  - Split / Merge: subscribers of the affected regions get EpochNotMatch
//    (with the current regions) and are dropped;
//  - TransferLeader: subscribers get NotLeader naming the new leader;
//  - BumpEpoch (a conf change, conf_ver + 1): no effect on open streams;
//    new subscriptions are checked against it only with check_conf_ver;
//  - StoreDown: the store's streams are cancelled and its port closed
//    (connections are refused); StoreRestart serves again on the same
//    address. Leaders stay where they are unless moved;
//  - SetStoreBusy / ClearStoreBusy: new subscriptions and KV reads get
//    ServerIsBusy;
//  - DropStreams: every stream of the store is broken (CANCELLED);
//  - Congest: every subscription of the store gets Congested;
//  - PdDown: PD's Tso streams are cancelled and its port closed; PdRestart
//    serves PD again on the same address with the same TSO (timestamps keep
//    increasing) and the same safepoints.
//
// Thread-safety: control calls may come from any thread; they are serialised
// by a control mutex. The owned objects are thread-safe themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/cdc_service.h"
#include "simkv/grpc_util.h"
#include "simkv/kv_service.h"
#include "simkv/mvcc_store.h"
#include "simkv/pd_service.h"
#include "simkv/region_map.h"
#include "simkv/store_registry.h"
#include "simkv/tso_allocator.h"
#include "simkv/txn_client.h"

namespace sluice::simkv {

struct SimClusterOptions {
  size_t num_stores = 3;                    // Store ids are 1..num_stores.
  std::vector<std::string> raw_split_keys;  // Initial region boundaries (raw keys).
  size_t replicas = 3;                      // Peers per region.
  uint64_t cluster_id = 7000000000000000001ULL;
  Clock* clock = Clock::Real();  // TSO wall time, safepoint TTLs, resolved-ts ticks.
  std::chrono::milliseconds resolved_ts_interval{200};  // Zero: AdvanceResolvedTs() only.
  StreamSinkOptions sink;
  size_t scan_threads = 2;
  bool check_conf_ver = false;
};

class SimCluster {
 public:
  static Result<std::unique_ptr<SimCluster>> Start(SimClusterOptions options);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // Stops every store and PD. Idempotent.
  void Stop() EXCLUDES(mu_);

  uint64_t cluster_id() const { return options_.cluster_id; }
  std::string pd_address() const { return "127.0.0.1:" + std::to_string(pd_port_); }
  // The store's client address ("127.0.0.1:<port>"), also while it is down.
  std::string store_address(StoreId id) const EXCLUDES(mu_);
  std::vector<StoreId> store_ids() const;

  MvccStore& mvcc() { return store_; }
  RegionMap& regions() { return *regions_; }
  TsoAllocator& tso() { return tso_; }
  StoreRegistry& store_registry() { return registry_; }
  PdService& pd() { return *pd_; }
  TxnClient& txn() { return txn_; }

  Result<std::pair<RegionInfo, RegionInfo>> Split(RegionId region, std::string_view raw_key)
      EXCLUDES(mu_);
  Result<RegionInfo> Merge(RegionId left, RegionId right) EXCLUDES(mu_);
  Result<RegionInfo> TransferLeader(RegionId region, StoreId store) EXCLUDES(mu_);
  Result<RegionInfo> BumpEpoch(RegionId region) EXCLUDES(mu_);

  Status StoreDown(StoreId store) EXCLUDES(mu_);
  Status StoreRestart(StoreId store) EXCLUDES(mu_);
  bool StoreIsUp(StoreId store) const EXCLUDES(mu_);
  Status SetStoreBusy(StoreId store, std::string reason, uint64_t backoff_ms) EXCLUDES(mu_);
  Status ClearStoreBusy(StoreId store) EXCLUDES(mu_);
  Status DropStreams(StoreId store) EXCLUDES(mu_);
  Status Congest(StoreId store) EXCLUDES(mu_);
  Status PdDown() EXCLUDES(mu_);
  Status PdRestart() EXCLUDES(mu_);

  // One resolved-ts round on every store that is up.
  void AdvanceResolvedTs() EXCLUDES(mu_);
  // PdService::RunGc.
  Result<Ts> RunGc(std::optional<Ts> upper = std::nullopt) { return pd_->RunGc(upper); }

  size_t NumStreams(StoreId store) const EXCLUDES(mu_);
  size_t NumSubscriptions(StoreId store) const EXCLUDES(mu_);
  // KV read requests (KvGet, KvScan) the store answered since it last started.
  uint64_t NumKvRequests(StoreId store) const EXCLUDES(mu_);

 private:
  struct StoreNode {
    int port = 0;  // 0 until first bound.
    std::optional<BusyState> busy;
    std::unique_ptr<CdcService> service;  // Null while down.
    std::unique_ptr<KvService> kv;        // Null while down.
    std::unique_ptr<grpc::Server> server;
  };

  explicit SimCluster(SimClusterOptions options, std::unique_ptr<RegionMap> regions);
  Status StartPd();
  Status StartStore(StoreId id, StoreNode& node) REQUIRES(mu_);
  void StopStore(StoreNode& node) REQUIRES(mu_);
  Result<StoreNode*> UpStore(StoreId id) REQUIRES(mu_);
  void ReconcileAll() REQUIRES(mu_);

  const SimClusterOptions options_;
  MvccStore store_;
  std::unique_ptr<RegionMap> regions_;
  TsoAllocator tso_;
  StoreRegistry registry_;
  TxnClient txn_;
  std::unique_ptr<PdService> pd_;
  std::unique_ptr<grpc::Server> pd_server_;
  int pd_port_ = 0;

  mutable Mutex mu_;  // Serialises control calls.
  std::map<StoreId, StoreNode> nodes_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::simkv
