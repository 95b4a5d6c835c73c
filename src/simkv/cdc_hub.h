// CdcHub: one store's CDC state (TiKV's cdc Endpoint with its per-region
// Delegates): which regions are subscribed, by which streams, and what each
// subscription has been sent. It observes the MvccStore and fans every change
// out to the subscriptions whose region and range contain the key.
//
// Life of a subscription (a "downstream"):
//  1. Register() checks the region against the RegionMap and, if this store
//     may serve it, registers it for live events at once. From then on live
//     rows are buffered in the hub (with their apply index).
//  2. The incremental scan (CdcScanner) reads a VisitCommitted snapshot and
//     pushes its rows through SendScanRows(); FinishScan() then sends
//     INITIALIZED and the buffered rows whose apply index is after the
//     snapshot, and live rows flow straight to the stream's sink.
//  3. It ends with an error event (region split/merged, leader moved,
//     congestion, explicit deregister) or silently when its stream closes.
//     Nothing is sent for it after its error event.
//
// Back-pressure: when a live row does not fit in the stream's sink (or the
// rows buffered during the scan exceed the budget), the subscription gets
// Error{congested{region_id}} and is dropped, as TiKV does when its CDC
// memory quota is exceeded; the client re-subscribes. The stream stays open.
//
// Threads: MvccStore observer callbacks (under the store's mutex), stream
// readers (Register/Deregister), scan workers, the resolved-ts ticker and
// control calls (Reconcile, CongestAll). Thread-safe behind mu_. Lock order:
// MvccStore -> mu_ -> RegionMap, and mu_ -> StreamSink. The hub never calls
// the MvccStore while holding mu_.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "cdcpb.pb.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/cdc_downstream.h"
#include "simkv/cdc_rows.h"
#include "simkv/mvcc_store.h"
#include "simkv/region_map.h"
#include "simkv/tso_allocator.h"

namespace sluice::simkv {

struct CdcHubOptions {
  StoreId store_id;
  // TiKV compares only the epoch version (splits and merges) when a region is
  // subscribed; true also compares conf_ver.
  bool check_conf_ver = false;
  // Most regions listed in one EpochNotMatch.
  size_t max_current_regions = 16;
  // Budget for the rows one subscription buffers during its scan.
  size_t max_pending_bytes = 64 << 20;
};

// What the incremental scan of a new subscription needs.
struct ScanTask {
  std::shared_ptr<const DownstreamSpec> spec;
  RawRange range;  // Observed raw range (request ∩ region).
};

class CdcHub final : public MvccObserver {
 public:
  // Borrows everything; all must outlive the hub (and the hub must be removed
  // from the store's observers before it is destroyed).
  CdcHub(CdcHubOptions options, MvccStore* store, RegionMap* regions, TsoAllocator* tso);
  CdcHub(const CdcHub&) = delete;
  CdcHub& operator=(const CdcHub&) = delete;

  // Checks, in TiKV's order: the region exists with a peer on this store
  // (RegionNotFound), (request_id, region_id) is new on the stream
  // (DuplicateRequest), this store leads it (NotLeader with the leader), the
  // epoch matches (EpochNotMatch with the current regions). On success the
  // subscription receives live events from now on and must be scanned.
  std::variant<ScanTask, cdcpb::Error> Register(std::shared_ptr<const DownstreamSpec> spec)
      EXCLUDES(mu_);

  // Scan stitching (scan workers). SendScanRows is false once the
  // subscription is gone: stop scanning.
  bool SendScanRows(const DownstreamSpec& spec, RowBatch batch) EXCLUDES(mu_);
  void FinishScan(const DownstreamSpec& spec, uint64_t applied_index) EXCLUDES(mu_);
  // Ends a subscription with an error event.
  void Fail(const DownstreamSpec& spec, cdcpb::Error error) EXCLUDES(mu_);

  // Client Deregister: region_id != 0 ends that region under request_id,
  // region_id == 0 ends every region under request_id. Each ended
  // subscription gets RegionNotFound, as TiKV answers a deregister.
  void Deregister(uint64_t conn_id, uint64_t request_id, uint64_t region_id) EXCLUDES(mu_);
  // The stream closed: ends its subscriptions silently.
  void DeregisterConn(uint64_t conn_id) EXCLUDES(mu_);

  // Re-checks every subscribed region against the RegionMap after region
  // operations: a region that split or merged (version changed or region
  // gone) ends its subscriptions with EpochNotMatch and the current regions
  // over its old range; a region whose leader moved ends them with NotLeader
  // naming the new leader. Conf changes alone leave streams alone, as in TiKV.
  void Reconcile() EXCLUDES(mu_);
  // Ends every subscription with Congested (fault injection).
  void CongestAll() EXCLUDES(mu_);
  // Forgets every subscription without sending anything (store stopping).
  void Clear() EXCLUDES(mu_);

  // One resolved-ts round: resolved ts of each initialized subscription =
  // min(smallest lock start ts in its range, a fresh TSO), never going back;
  // sent as ChangeDataEvent.resolved_ts batches grouped by stream, request id
  // (0 without stream-multiplexing) and ts. Dropped for a full sink.
  void AdvanceResolvedTs() EXCLUDES(mu_);

  size_t NumSubscriptions() const EXCLUDES(mu_);

  void OnPrewrite(const PrewriteEvent& event) override EXCLUDES(mu_);
  void OnCommit(const CommitEvent& event) override EXCLUDES(mu_);
  void OnRollback(const RollbackEvent& event) override EXCLUDES(mu_);
  // Queues the batch's rows of initialized subscriptions on their streams.
  void OnApplied(uint64_t apply_index) override EXCLUDES(mu_);

 private:
  struct PendingRow {
    uint64_t index = 0;
    Row row;
  };
  struct Subscriber {
    std::shared_ptr<const DownstreamSpec> spec;
    RawRange range;
    bool initialized = false;
    std::vector<PendingRow> pending;  // Live rows seen during the scan.
    size_t pending_bytes = 0;
    Ts advanced_to;  // Last resolved ts sent.
  };
  struct Delegate {
    RegionInfo region;  // As it was when subscribed.
    RawRange raw;       // Its raw boundaries.
    std::vector<Subscriber> subs;
  };
  // Live rows of one subscription in the MVCC batch being applied; the views
  // point into the store until OnApplied().
  struct StagedRows {
    std::shared_ptr<const DownstreamSpec> spec;
    uint64_t index = 0;
    std::vector<RowView> rows;
  };
  using ConnKey = std::pair<uint64_t, uint64_t>;  // (request_id, region_id).
  struct ResolvedProbe {
    RegionId region_id;
    uint64_t sub_id = 0;
    RawRange range;
    std::optional<Ts> min_lock;
  };

  std::optional<cdcpb::Error> CheckRegion(const DownstreamSpec& spec,
                                          const RegionInfo& region) const REQUIRES(mu_);
  std::vector<RegionInfo> CurrentRegions(std::string_view start, std::string_view end) const;
  std::optional<cdcpb::Error> StaleError(const Delegate& delegate) const REQUIRES(mu_);
  void StopStaleOverlapping(const RegionInfo& region) REQUIRES(mu_);
  // The region's delegate, created if needed.
  Delegate& DelegateFor(const RegionInfo& region) REQUIRES(mu_);
  Subscriber* Find(const DownstreamSpec& spec) REQUIRES(mu_);
  Delegate* DelegateForKey(std::string_view raw_key) REQUIRES(mu_);
  void Unindex(const Subscriber& sub) REQUIRES(mu_);
  void EraseDelegateIfEmpty(RegionId region_id) REQUIRES(mu_);
  // Removes the subscriptions of a delegate matching `pred`, sending `error`
  // (when given) to each.
  void StopSubscribers(RegionId region_id, const std::function<bool(const Subscriber&)>& pred,
                       const std::optional<cdcpb::Error>& error) REQUIRES(mu_);
  void StopDelegate(RegionId region_id, const cdcpb::Error& error) REQUIRES(mu_);
  template <typename MakeRow>
  void Fanout(std::string_view key, uint64_t index, MakeRow make_row) EXCLUDES(mu_);
  bool Deliver(Subscriber& sub, uint64_t index, const RowView& row) REQUIRES(mu_);
  void Congest(RegionId region_id, const std::vector<uint64_t>& sub_ids) REQUIRES(mu_);
  std::vector<ResolvedProbe> ResolvedProbes() EXCLUDES(mu_);
  void SendResolved(const std::vector<ResolvedProbe>& probes, Ts now) EXCLUDES(mu_);

  const CdcHubOptions options_;
  MvccStore* const store_;
  RegionMap* const regions_;
  TsoAllocator* const tso_;

  mutable Mutex mu_;
  std::unordered_map<RegionId, Delegate> delegates_ GUARDED_BY(mu_);
  std::map<std::string, RegionId> by_start_ GUARDED_BY(mu_);  // Encoded start -> region.
  std::optional<RegionId> last_delegate_ GUARDED_BY(mu_);     // Last DelegateForKey answer.
  std::vector<StagedRows> staged_ GUARDED_BY(mu_);            // Emptied by OnApplied().
  size_t staged_used_ GUARDED_BY(mu_) = 0;                    // Entries of staged_ in use.
  // Per stream: (request_id, region_id) -> subscription id.
  std::map<uint64_t, std::map<ConnKey, uint64_t>> conns_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
