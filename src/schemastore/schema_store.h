// SchemaStore: the node's multi-version schema (TiCDC logservice/schemastore).
// It bootstraps from a meta snapshot at the start ts, subscribes through the
// log puller to the record span of mysql.tidb_ddl_job, keeps the Done jobs
// until the span's resolved ts passes their commit ts, applies them in
// finished-ts order, persists them in RocksDB under <data_dir>/schema_store
// and serves SchemaReader: table schemas at a ts, the tables at a ts and DDL
// events in (from, to].
//
// Ownership: the store owns its RocksDB and one apply thread. `meta` is used
// only inside Open(); `subscriber` is borrowed and must outlive the store.
// Threads: every method is thread-safe. The puller calls the store's
// consumer on its own threads; resolved listeners run on the apply thread.
//
// Errors: bad input (a job row that does not decode, a job that does not fit
// the schema, a failed subscription, a failed disk write) stops the store at
// the last ts it can answer correctly: resolved_ts() stays below failed_ts()
// forever, status() is the error, and questions about ts >= failed_ts() get
// that error instead of Unavailable. TiCDC treats such input as fatal for
// the changefeed (it exits the process); here the readers' changefeeds fail
// with the typed error while the process keeps running.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "kvclient/meta_reader.h"
#include "logpuller/consumer.h"
#include "schemastore/catalog.h"
#include "schemastore/schema_reader.h"

namespace sluice::schemastore {

class SchemaDisk;
class DdlJobDecoder;

struct SchemaStoreOptions {
  // The store lives in <data_dir>/schema_store.
  std::string data_dir;
  // The schema is answerable from this ts on. A stored schema is reused when
  // its snapshot ts <= start_ts <= its resolved ts; otherwise the directory
  // is wiped and the store bootstraps from a meta snapshot at start_ts.
  Ts start_ts;
  Clock* clock = Clock::Real();
  // Progress without new jobs is written to disk at most this often (on
  // `clock`); a round that applies jobs is written at once.
  std::chrono::milliseconds persist_interval{1000};
  // For the DDL span: low latency (TiCDC advances it on every region
  // resolved ts), no old values, and a scan that never waits for tables'
  // first publishes (their rows cannot be delivered without it).
  logpuller::SubscribeOptions subscribe{.advance_interval = std::chrono::milliseconds(0),
                                        .read_old_value = false,
                                        .yield_scan = false};
};

struct SchemaStoreStats {
  uint64_t rows = 0;       // Row changes received from the puller.
  uint64_t done_jobs = 0;  // Done jobs among them (duplicates included).
  uint64_t bad_rows = 0;   // Rows that did not decode.
  CatalogStats catalog;    // Jobs applied / skipped.
};

class SchemaStore final : public SchemaReader {
 public:
  static Result<std::unique_ptr<SchemaStore>> Open(SchemaStoreOptions options,
                                                   kvclient::MetaReader* meta,
                                                   logpuller::SpanSubscriber* subscriber);
  ~SchemaStore() override;
  SchemaStore(const SchemaStore&) = delete;
  SchemaStore& operator=(const SchemaStore&) = delete;

  // Unsubscribes, joins the apply thread and writes the resolved ts.
  // Idempotent. Queries keep working on what was applied.
  void Stop();

  // SchemaReader. Questions about a ts below snapshot_ts() get
  // kGcSafepointExceeded (the store keeps nothing older); the table-trigger
  // dispatcher asks TableDdlEvents with kDdlSpanTableId.
  Ts resolved_ts() const override;
  Result<event::TableSchemaPtr> GetTableSchema(int64_t table_id, Ts ts) const override;
  Result<std::vector<event::TableRef>> AllPhysicalTables(Ts ts) const override;
  Result<std::vector<event::DdlEventPtr>> TableDdlEvents(int64_t table_id, Ts from,
                                                         Ts to) const override;
  Result<std::vector<event::DdlEventPtr>> AllDdlEvents(Ts from, Ts to) const override;
  uint64_t AddResolvedListener(std::function<void(Ts)> fn) override;
  void RemoveResolvedListener(uint64_t handle) override;

  // OK, or the first error (by ts) that stopped the store.
  Status status() const;
  // The first ts the store cannot answer for (commit ts of the bad job row
  // or job, or resolved ts + 1 for a failed subscription or write); zero
  // while status() is OK.
  Ts failed_ts() const;
  // The ts of the meta snapshot the schema starts from.
  Ts snapshot_ts() const { return snapshot_ts_; }
  // Whether Open() reused the stored schema instead of a new snapshot.
  bool reused_disk() const { return reused_disk_; }
  SchemaStoreStats stats() const;

 private:
  struct Inbox;
  class Consumer;

  SchemaStore(SchemaStoreOptions options, logpuller::SpanSubscriber* subscriber);
  Status Init(kvclient::MetaReader* meta);
  Status Bootstrap(kvclient::MetaReader* meta);
  Status LoadFromDisk();
  void Loop(const StopToken& token);
  // Applies `jobs` (sorted, commit ts <= target) and advances to `target`.
  void RunRound(std::vector<model::Job> jobs, Ts target, bool persist_now);
  void Publish(Ts ts);
  // The error for a question about `ts` above the resolved ts.
  Status Beyond(Ts ts, Ts resolved) const;
  Status CheckRange(Ts from, Ts to) const;

  const SchemaStoreOptions options_;
  logpuller::SpanSubscriber* const subscriber_;
  std::unique_ptr<SchemaDisk> disk_;  // Apply thread (and Open/Stop) only.
  std::shared_ptr<Inbox> inbox_;
  Ts snapshot_ts_;
  bool reused_disk_ = false;
  std::atomic<uint64_t> resolved_{0};

  mutable Mutex catalog_mu_;
  SchemaCatalog catalog_ GUARDED_BY(catalog_mu_);

  Mutex listener_mu_;
  uint64_t next_listener_ GUARDED_BY(listener_mu_) = 1;
  std::map<uint64_t, std::function<void(Ts)>> listeners_ GUARDED_BY(listener_mu_);

  Mutex stop_mu_;
  bool stopped_ GUARDED_BY(stop_mu_) = false;
  std::optional<SubscriptionId> subscription_ GUARDED_BY(stop_mu_);
  OwnedThread apply_thread_;
  // Apply thread only (and Stop after the join).
  Ts persisted_resolved_;
  Clock::TimePoint last_persist_;
};

}  // namespace sluice::schemastore
