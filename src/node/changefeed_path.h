// ChangefeedPath: one changefeed generation's data path on this node
// (TiCDC's per-node event store, schema store and event service, here per
// generation): a snapshot reader, the schema store, the event store, the
// event service, the block-event executor, the changefeed's sink and its
// dispatchers, under <data_dir>/<namespace>/<name>/<epoch>. The directory is
// a cache: it is deleted when the path is destroyed, and a restarted node
// starts from the persisted checkpoint with a fresh one.
//
// The maintainer (tables at a ts) and the dispatcher factory (dispatchers)
// of the same generation share one path through the PathRegistry.
//
// Threads: every public method is thread-safe. Block statuses and errors of
// the dispatchers are handed to the listener on the dispatchers' threads;
// the listener must not block or call back into the path.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "dispatcher/block_event_executor.h"
#include "dispatcher/dispatcher.h"
#include "dispatchermanager/messages.h"
#include "eventservice/event_service.h"
#include "eventstore/event_store.h"
#include "filter/filter.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "logpuller/subscription_client.h"
#include "meta/model.h"
#include "node/sink_opener.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "schemastore/schema_store.h"
#include "sink/sink.h"

namespace sluice::node {

// The node-level parts every path borrows; they must outlive the paths.
struct PathDeps {
  pd::PdClient* pd = nullptr;
  pd::RegionCache* cache = nullptr;
  logpuller::SpanSubscriber* puller = nullptr;
  std::string data_dir;  // The node's <data-dir>/changefeeds.
  Clock* clock = Clock::Real();
  size_t memory_budget = 16 << 20;  // Per dispatcher.
  // How often a table subscription's resolved ts is recomputed.
  std::chrono::milliseconds advance_interval{100};
  // The event stores' RocksDB environment (null: the default) and memtable
  // size (0: the default); scenarios put the stores on a failing disk.
  std::shared_ptr<rocksdb::Env> store_env;
  size_t store_memtable_bytes = 0;
  // Opens each path's sink (null: OpenSink). Benchmarks wrap OpenSink's
  // sink to meter what it flushes.
  std::function<Result<std::unique_ptr<sink::Sink>>(const SinkOpenOptions&)> open_sink;
  // Asked before every write downstream (sink.h); the server passes its
  // session check. Null: always allowed.
  sink::WritePermit write_permit;
};

// What a path reports to its generation's maintainer.
struct PathListener {
  std::function<void(const dispatcher::BlockStatus&)> on_block_status;
};

class ChangefeedPath {
 public:
  // Opens the stores at `start_ts` and the sink. kInvalidArgument for a bad
  // replica config or filter; the sink's error if it cannot be opened.
  static Result<std::shared_ptr<ChangefeedPath>> Open(const PathDeps& deps,
                                                      const meta::ChangefeedInfo& info,
                                                      MaintainerEpoch epoch, Ts start_ts);
  ~ChangefeedPath();  // Stop()s and deletes the directory.
  ChangefeedPath(const ChangefeedPath&) = delete;
  ChangefeedPath& operator=(const ChangefeedPath&) = delete;

  // Closes the dispatchers and the sink (flushing what it holds), then the
  // service and the stores. Idempotent.
  void Stop() EXCLUDES(mu_);

  // The changefeed's tables at `ts` that the filter keeps. kUnavailable
  // while the schema store has not reached `ts` (retry later).
  Result<std::vector<event::TableRef>> TablesAt(Ts ts) const;
  // True if the changefeed's filter leaves `table` out (by its schema and
  // table names): it gets no dispatcher.
  bool IgnoresTable(const event::TableRef& table) const;

  // Creates a table or table-trigger dispatcher at `config.start_ts`,
  // moved past what the sink says it already has (ddl_ts recovery), and
  // registers it with the event service. Returns the start ts it got.
  Result<Ts> AddDispatcher(const dispatchermanager::DispatcherConfig& config) EXCLUDES(mu_);
  // Unregisters and closes a dispatcher. Idempotent.
  void RemoveDispatcher(DispatcherId id) EXCLUDES(mu_);
  // The write fence of this generation: every dispatcher is closed at once
  // (none hands another row or DDL to the sink; hand-offs already running
  // may finish) and AddDispatcher() refuses from now on. The dispatchers
  // stay listed until removed, so their handles can tell when they are
  // drained. Idempotent; never blocks on the sink.
  void FenceWrites() EXCLUDES(mu_);
  std::shared_ptr<dispatcher::BasicDispatcher> Find(DispatcherId id) const EXCLUDES(mu_);
  // The checkpoint of the dispatcher of `table_id` (the table trigger's for
  // event::kTableTriggerTableId); nullopt if this path has none.
  std::optional<Ts> TableCheckpoint(int64_t table_id) const EXCLUDES(mu_);
  eventstore::EventStoreStats store_stats() const { return store_->stats(); }

  // A newer maintainer generation took over this path's dispatchers (a
  // surviving dispatcher manager): the sink writes under `epoch` from now
  // on (sink::Sink::AdoptEpoch). An older or equal epoch is a no-op.
  Status AdoptEpoch(MaintainerEpoch epoch);

  void SetListener(PathListener listener) EXCLUDES(mu_);
  // Pushes each dispatcher's checkpoint to the event service (event store
  // GC) and the changefeed checkpoint to the sink.
  void UpdateCheckpoints(Ts changefeed_checkpoint) EXCLUDES(mu_);
  // OK, or the first error of a dispatcher, the sink or the schema store.
  Status error() const EXCLUDES(mu_);

  const std::string& changefeed() const { return changefeed_; }
  MaintainerEpoch epoch() const { return epoch_; }
  Ts start_ts() const { return start_ts_; }

 private:
  ChangefeedPath(const PathDeps& deps, const meta::ChangefeedInfo& info, MaintainerEpoch epoch,
                 Ts start_ts);
  Status Init(const meta::ChangefeedInfo& info);
  dispatcher::DispatcherOptions OptionsFor(DispatcherId id, int64_t table_id, Ts start);
  eventservice::RowFilter MakeRowFilter() const;
  void RecordError(const Status& status) EXCLUDES(mu_);

  const PathDeps deps_;
  const std::string changefeed_;  // "<namespace>/<name>".
  const MaintainerEpoch epoch_;
  const Ts start_ts_;
  const std::string dir_;
  std::shared_ptr<const filter::Filter> filter_;
  std::unique_ptr<kvclient::SnapshotReader> snapshot_;
  std::unique_ptr<kvclient::KvMetaReader> meta_;
  std::unique_ptr<schemastore::SchemaStore> schema_;
  std::unique_ptr<eventstore::EventStore> store_;
  std::unique_ptr<eventservice::EventService> service_;
  std::unique_ptr<sink::Sink> sink_;  // The opened sink behind a FilteringSink.
  dispatcher::BlockEventExecutor executor_;

  mutable Mutex mu_;
  PathListener listener_ GUARDED_BY(mu_);
  std::map<DispatcherId, std::shared_ptr<dispatcher::BasicDispatcher>> dispatchers_ GUARDED_BY(mu_);
  Status error_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  bool fenced_ GUARDED_BY(mu_) = false;
};

// The live paths of this node by (changefeed, epoch). Holds them weakly:
// a path lives while its maintainer or its dispatcher manager holds it.
// Thread-safe.
class PathRegistry {
 public:
  explicit PathRegistry(PathDeps deps) : deps_(std::move(deps)) {}

  // The path of (changefeed, epoch), opened at `start_ts` if none is live.
  Result<std::shared_ptr<ChangefeedPath>> Acquire(const meta::ChangefeedInfo& info,
                                                  MaintainerEpoch epoch, Ts start_ts) EXCLUDES(mu_);
  // Every live path of a changefeed (a reused dispatcher manager keeps the
  // path of an older generation).
  std::vector<std::shared_ptr<ChangefeedPath>> PathsOf(const std::string& changefeed) const
      EXCLUDES(mu_);
  const PathDeps& deps() const { return deps_; }
  // Where the dispatchers' block statuses of every path opened from now on
  // go (the maintainer host).
  using BlockStatusListener =
      std::function<void(const std::string& changefeed, const dispatcher::BlockStatus&)>;
  void SetBlockStatusListener(BlockStatusListener listener) EXCLUDES(mu_);

 private:
  const PathDeps deps_;
  mutable Mutex mu_;
  BlockStatusListener listener_ GUARDED_BY(mu_);
  // Opening is serialized so that one (changefeed, epoch) opens once.
  Mutex open_mu_ ACQUIRED_BEFORE(mu_);
  std::map<std::pair<std::string, uint64_t>, std::weak_ptr<ChangefeedPath>> paths_ GUARDED_BY(mu_);
};

}  // namespace sluice::node
