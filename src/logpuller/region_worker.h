// RegionWorkerPool: processes region events on a fixed set of threads,
// sharded by region id so that the events of one region are handled in
// order on one thread. Each shard owns the RegionStates of its regions.
//
// Two inputs per shard: a bounded data queue (events and resolved ts from
// the stream readers, which block when it is full: back-pressure on TiKV)
// and an unbounded control queue (region starts, stream breaks, dropped
// runs, send failures) that never blocks its producer and is served first.
// Thread-safe; Start()/Stop() are for the owner.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cdcpb.pb.h"
#include "common/lifecycle.h"
#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "logpuller/change_data.h"
#include "logpuller/matcher.h"
#include "logpuller/subscription_state.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"

namespace sluice::logpuller {

// What a request needs of a region: its id, epoch and leader (no boundaries
// or peers; the range asked for is the run's lock, and a range retry reloads
// the region from the cache).
struct RegionRoute {
  RegionId id;
  uint64_t conf_ver = 0;
  uint64_t version = 0;
  StoreId leader_store;
  uint64_t leader_peer_id = 0;

  static RegionRoute Of(const pd::Region& region) {
    return RegionRoute{region.id, region.conf_ver, region.version, region.leader_store,
                       region.leader_peer_id};
  }
};

// One region of one run, as sent to a store. Kept small (one 128-byte
// allocation): a subscription of many idle regions holds one per region.
// Its range is the one the region holds in the run's RangeLock.
struct RegionState {
  RegionState(std::shared_ptr<SubscriptionRun> run, RegionRoute region, Ts checkpoint, int attempts)
      : run(std::move(run)),
        region(region),
        checkpoint(checkpoint),
        attempts(attempts),
        matcher(region.id, this->run->checkpoint) {}

  std::shared_ptr<SubscriptionRun> run;
  RegionRoute region;
  Ts checkpoint;
  uint64_t stream_id = 0;
  int attempts;  // Failures since the range last initialized (backoff input).
  bool initialized = false;
  RegionMatcher matcher;

  Ts ResolvedTs() const { return std::max(checkpoint, matcher.resolved_ts()); }
};

// Why a region stopped being served.
struct RegionFailure {
  enum class Kind {
    kRegionError,  // TiKV answered with `error`.
    kStreamError,  // The store stream broke or the send failed.
  };
  Kind kind = Kind::kStreamError;
  cdcpb::Error error;
  Status status;
};

// What the pool needs from its owner (the subscription client).
class RegionWorkerHost {
 public:
  virtual ~RegionWorkerHost() = default;
  // The state was removed; the host unlocks its range and schedules a retry.
  // Must not block.
  virtual void OnRegionFailed(std::unique_ptr<RegionState> state, RegionFailure failure) = 0;
  virtual void OnRegionInitialized(RegionState& state) = 0;
  // The state is dropped with its run (unsubscribe, restart, failure); the
  // host returns what it holds for it (the scan slot of an uninitialized
  // region). Must not block.
  virtual void OnRegionDropped(RegionState& state) = 0;
  // Hands a batch of the run's changes to the span pipeline; may block.
  virtual void EnqueueData(SubscriptionRun& run, KvBatch batch, const CancelToken& token) = 0;
  // Recomputes the run's span resolved ts after region updates; may block.
  virtual void MaybeAdvance(SubscriptionRun& run, const CancelToken& token) = 0;
  // The run saw invalid input; the host restarts or fails the subscription.
  virtual void FailRun(const std::shared_ptr<SubscriptionRun>& run, const Status& status) = 0;
};

class RegionWorkerPool {
 public:
  RegionWorkerPool(size_t num_workers, size_t queue_capacity, RegionWorkerHost* host);
  ~RegionWorkerPool();
  RegionWorkerPool(const RegionWorkerPool&) = delete;
  RegionWorkerPool& operator=(const RegionWorkerPool&) = delete;

  void Start();
  // Closes the queues (blocked producers return), cancels blocked host
  // calls and joins. States left are dropped without callbacks.
  void Stop();

  // Data path (blocks while the shard's queue is full): one serialized
  // ChangeDataEvent read from stream `stream_id`. Its events are routed by
  // their headers and their rows parsed by the shard that owns the region.
  // Corruption if the message's top level does not decode; nothing of it is
  // posted then, and the caller breaks the stream.
  Status PostEvent(uint64_t stream_id, MessageBytes message);
  // Control path (never blocks).
  void PostStart(std::unique_ptr<RegionState> state);
  void PostStreamBroken(uint64_t stream_id, const Status& status);
  void PostDropRun(uint64_t request_id);
  void PostSendFailed(uint64_t request_id, RegionId region, uint64_t stream_id,
                      const Status& status);

  size_t NumStates() const;

 private:
  struct Message;
  struct Shard;

  void Run(Shard* shard, const StopToken& token);
  void Handle(Shard* shard, Message& msg, const StopToken& token);
  void HandleEvents(Shard* shard, uint64_t stream_id, const std::vector<RegionEventRef>& events,
                    const StopToken& token);
  // Runs one event's rows through the region's matcher into *batch.
  void HandleRows(RegionState& state, const std::vector<RowView>& rows, KvBatch* batch);
  void HandleResolved(Shard* shard, uint64_t stream_id, uint64_t request_id,
                      const std::vector<uint64_t>& regions, Ts ts, const StopToken& token);
  void FailState(Shard* shard, uint64_t request_id, uint64_t region_id, RegionFailure failure);
  // Region ids are mixed first: TiKV allocates a region's id and its peers'
  // from one sequence, so ids often share a residue modulo small counts.
  size_t ShardIndex(uint64_t region_id) const;
  Shard& ShardOf(uint64_t region_id) { return *shards_[ShardIndex(region_id)]; }
  void PostControl(Shard& shard, Message msg);

  RegionWorkerHost* const host_;
  const size_t queue_capacity_;
  std::vector<std::unique_ptr<Shard>> shards_;
  ThreadGroup threads_;
};

}  // namespace sluice::logpuller
