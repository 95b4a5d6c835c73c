// DataPathDriver: one changefeed's data path on one node, wired the way the
// dispatcher manager will wire it, with the test driver playing the
// maintainer: snapshot reader -> schema store, event store, event service,
// one EventDispatcher per physical table and the TableTriggerDispatcher, all
// writing to one sink. The driver thread answers block statuses with TiCDC's
// barrier rules (collect WAITING from every involved dispatcher, one writer
// (the table trigger when it takes part), then Pass to the others), adds and
// removes table dispatchers for DDLs that create or drop tables, and keeps
// the changefeed checkpoint (minimum over dispatchers; never goes back). At
// start each table resumes where the sink's recovery info says (a MySQL
// downstream records the DDLs it ran, so a table moves past them).
//
// Ownership: the PD client, region cache, puller and sink are borrowed and
// must outlive the driver. Threads: one owned driver thread; public methods
// are thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "dispatcher/block_event_executor.h"
#include "dispatcher/event_dispatcher.h"
#include "dispatcher/table_trigger_dispatcher.h"
#include "eventservice/event_service.h"
#include "eventstore/event_store.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "schemastore/schema_store.h"
#include "sink/sink.h"

namespace sluice::testing {

struct DataPathOptions {
  std::string data_dir;
  Ts start_ts;
  pd::PdClient* pd = nullptr;
  pd::RegionCache* cache = nullptr;
  logpuller::SpanSubscriber* puller = nullptr;
  sink::Sink* sink = nullptr;
  size_t memory_budget = 8 << 20;  // Per dispatcher.
  // The event store's RocksDB environment (null: the default) and memtable
  // size (0: the default), for scenarios on a failing disk.
  std::shared_ptr<rocksdb::Env> store_env;
  size_t store_memtable_bytes = 0;
};

// One failure of the path: where (a table's dispatcher (table 0 is the
// table trigger), the schema store, the sink, the driver) and the commit ts
// it could not get past.
struct PathError {
  std::string source;
  int64_t table_id = 0;
  Status status;
  Ts failing_ts;
};

struct DataPathStats {
  uint64_t barriers = 0;
  uint64_t tables_added = 0;
  uint64_t tables_removed = 0;
};

class DataPathDriver {
 public:
  static Result<std::unique_ptr<DataPathDriver>> Start(DataPathOptions options);
  ~DataPathDriver();  // Stop()s.

  // Closes the dispatchers, then stops the service, closes the sink (its
  // last flushes call back into the service) and stops the stores and
  // threads. The sink object stays with its owner.
  void Stop();

  // Everything with commit ts <= checkpoint() is in the sink.
  Ts checkpoint() const EXCLUDES(mu_);
  // OK, or the first error (a dispatcher's, the sink's or the schema
  // store's), with the failing ts in the message.
  Status status() const EXCLUDES(mu_);
  // Every failure so far, in the order they were seen (each source once per
  // table). A failed table stops; the others go on as far as they can.
  std::vector<PathError> errors() const EXCLUDES(mu_);
  // The checkpoint of one table's dispatcher; nullopt if it has none.
  std::optional<Ts> TableCheckpoint(int64_t table_id) const EXCLUDES(mu_);
  // Waits until checkpoint() >= ts; the error if the path fails first;
  // Timeout after `timeout`.
  Status WaitCheckpoint(Ts ts, std::chrono::milliseconds timeout) EXCLUDES(mu_);
  DataPathStats stats() const EXCLUDES(mu_);
  eventstore::EventStoreStats store_stats() const { return store_->stats(); }

 private:
  struct Barrier {
    event::DdlEventPtr ddl;
    std::set<DispatcherId> waiting;
    DispatcherId writer;
    bool write_sent = false;
  };
  struct Table {
    event::TableRef ref;
    std::shared_ptr<dispatcher::EventDispatcher> dispatcher;
  };

  explicit DataPathDriver(DataPathOptions options);
  Status Init();
  Status AddTable(const event::TableRef& ref, Ts start, bool skip_dml_after_start = false)
      REQUIRES(mu_);
  void RemoveTable(int64_t table_id) REQUIRES(mu_);
  void Loop(const StopToken& token);
  void Handle(const dispatcher::BlockStatus& s) REQUIRES(mu_);
  void TryStartBarrier(Ts ts) REQUIRES(mu_);
  void FinishBarrier(Ts ts) REQUIRES(mu_);
  std::set<DispatcherId> Involved(const event::DdlEvent& ddl) const REQUIRES(mu_);
  std::shared_ptr<dispatcher::BasicDispatcher> Find(DispatcherId id) const REQUIRES(mu_);
  void Tick() REQUIRES(mu_);
  void AddError(PathError e) REQUIRES(mu_);
  bool HasError(std::string_view source) const REQUIRES(mu_);
  dispatcher::DispatcherOptions DispatcherOptionsFor(int64_t table_id, Ts start) REQUIRES(mu_);
  DispatcherId NextId() REQUIRES(mu_);
  // The schema store's tables at `ts`, waiting (bounded) for it to get there.
  Result<std::vector<event::TableRef>> TablesAt(Ts ts);

  const DataPathOptions options_;
  std::unique_ptr<kvclient::SnapshotReader> snapshot_;
  std::unique_ptr<kvclient::KvMetaReader> meta_;
  std::unique_ptr<schemastore::SchemaStore> schema_;
  std::unique_ptr<eventstore::EventStore> store_;
  std::unique_ptr<eventservice::EventService> service_;
  dispatcher::BlockEventExecutor executor_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<dispatcher::BlockStatus> inbox_ GUARDED_BY(mu_);
  std::shared_ptr<dispatcher::TableTriggerDispatcher> trigger_ GUARDED_BY(mu_);
  std::map<int64_t, Table> tables_ GUARDED_BY(mu_);
  std::map<Ts, Barrier> barriers_ GUARDED_BY(mu_);
  Ts checkpoint_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  std::vector<PathError> errors_ GUARDED_BY(mu_);
  DataPathStats stats_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  bool stopped_ GUARDED_BY(mu_) = false;
  OwnedThread thread_;
};

}  // namespace sluice::testing
