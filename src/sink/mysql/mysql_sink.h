// MysqlSink: writes a changefeed's rows and DDLs to MySQL, MariaDB or TiDB
// (sink URIs mysql://, mysql+ssl://, tidb://, tidb+ssl://), as TiCDC's MySQL
// sink does:
// - DML: a conflict detector hands transactions to `worker-count` workers,
//   each with its own connection; transactions touching the same row (same
//   primary or unique key) are written in order, others in parallel. A
//   worker writes up to `max-txn-row` rows of queued transactions as one
//   downstream transaction of multi-row statements (dml_builder.h).
//   PostFlush runs per event once written, in each dispatcher's add order.
// - Safe mode (URI safe-mode, or automatically for events that may have been
//   written before a restart: commit ts < replicating ts; and for a few
//   seconds after a duplicate-key error): INSERT becomes REPLACE and UPDATE
//   becomes DELETE + REPLACE.
// - DDL: run synchronously on a control connection in the DDL's database,
//   rewritten for non-TiDB downstreams (ddl_rewrite.h), bracketed by rows in
//   tidb_cdc.ddl_ts_v1 so that a restarted changefeed skips DDLs already done.
// - Errors: retryable ones (lost connection, deadlock, lock wait, ...) are
//   retried with backoff on a fresh connection; fatal ones, or retries used
//   up, set the sticky status() naming the failing commit ts.
// - Memory: AddDmlEvent blocks while queued rows or bytes are over the limit.
//
// Threads: `worker-count` owned worker threads; PostFlush runs on them.
// Every public method is thread-safe; Close() is called once, last.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_quota.h"
#include "common/cancel.h"
#include "common/clock.h"
#include "common/lifecycle.h"
#include "sink/mysql/conflict_detector.h"
#include "sink/mysql/ddl_ts.h"
#include "sink/mysql/dml_builder.h"
#include "sink/mysql/epoch_fence.h"
#include "sink/mysql/flush_orderer.h"
#include "sink/mysql/mysql_config.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/sink.h"

namespace sluice::sink {

struct MysqlSinkOptions {
  // The changefeed id as written into tidb_cdc.ddl_ts_v1 (TiCDC writes
  // "<keyspace>/<name>", e.g. "default/cf-1").
  std::string changefeed_id;
  std::string cluster_id = "default";  // ddl_ts_v1.ticdc_cluster_id
  // The checkpoint the changefeed (re)started from.
  Ts start_ts;
  // Events with commit ts below this are written in safe mode (TiCDC's
  // ReplicatingTs: the TSO when the dispatchers were created; anything
  // before it may already be downstream). Zero: the TSO of the clock's wall
  // time when the sink is created.
  Ts replicating_ts;
  Clock* clock = nullptr;  // Required; must outlive the sink.
  uint64_t max_queued_bytes = uint64_t{64} << 20;
  uint64_t max_queued_rows = 65536;
  int dml_max_retry = 8;   // Attempts per batch (TiCDC DMLMaxRetry).
  int ddl_max_retry = 20;  // Attempts per DDL (TiCDC defaultDDLMaxRetry).
  BackoffOptions backoff{std::chrono::milliseconds(100), std::chrono::seconds(5), 2.0, 0.2};
  // Asked before every transaction and DDL (see sink.h); a refusal is not
  // retried.
  WritePermit write_permit;
  // The maintainer generation writing (epoch_fence.h): the sink claims the
  // changefeed's fence row at open and every commit is guarded by it. 0: no
  // fence.
  uint64_t epoch = 0;
  // How long a transaction or DDL refused by the fence waits for this sink
  // to be adopted by the newer generation (AdoptEpoch: a new maintainer
  // took over the dispatchers that write through it) before the sink fails
  // with kStaleOwner. Nothing commits meanwhile.
  Clock::Duration fence_adoption_grace = std::chrono::seconds(30);
  // How long a worker stays in safe mode after a duplicate-key error.
  Clock::Duration error_safe_mode_duration = std::chrono::seconds(5);
};

struct MysqlSinkStats {
  uint64_t rows_written = 0;
  uint64_t txns_written = 0;
  uint64_t batches_written = 0;
  uint64_t safe_mode_batches = 0;
  uint64_t ddls_executed = 0;
  uint64_t ddls_skipped = 0;  // Already done per ddl_ts, or TiDB-only.
  uint64_t retries = 0;
  uint64_t reconnects = 0;
  uint64_t fence_waits = 0;  // Writes refused by the fence that waited for an adoption.
};

class MysqlSink final : public Sink {
 public:
  // Parses the URI, connects the control connection (so a wrong address or
  // password fails here) and starts the workers. InvalidArgument for a bad
  // URI or options; the connection's error when the downstream is not
  // reachable.
  static Result<std::unique_ptr<MysqlSink>> Create(const SinkUri& uri, MysqlSinkOptions options);
  ~MysqlSink() override;

  std::string_view scheme() const override { return scheme_; }
  void AddDmlEvent(event::DmlEventPtr event) override;
  Status WriteBlockEvent(const event::DdlEvent& ddl) override;
  void AddCheckpointTs(Ts ts) override;
  Status status() const override;
  // Claims `epoch` downstream and commits under it from now on (a newer
  // maintainer generation took over this sink's dispatchers).
  Status AdoptEpoch(uint64_t epoch) override EXCLUDES(control_mu_, fence_mu_);
  void Close() override;

  // Where each table resumes after a restart, from tidb_cdc.ddl_ts_v1 (see
  // ddl_ts.h); `start_ts` is parallel to `table_ids`.
  Result<std::vector<TableRecovery>> GetTableRecoveryInfo(const std::vector<int64_t>& table_ids,
                                                          const std::vector<Ts>& start_ts) override;
  // Deletes this changefeed's ddl_ts rows (changefeed removed or recreated).
  Status RemoveDdlTsRows();

  // True while the checkpoint has not passed the replicating ts.
  bool in_startup_safe_mode() const;
  Ts replicating_ts() const { return replicating_ts_; }
  MysqlSinkStats stats() const;
  // Server ids of the sink's open sessions (control first), for diagnostics.
  std::vector<uint64_t> ConnectionIds() const;
  const MysqlSinkConfig& config() const { return config_; }

 private:
  struct PendingTxn {
    event::DmlEventPtr event;
    uint64_t seq = 0;
    QuotaLease bytes;
    QuotaLease rows;
  };
  using Detector = ConflictDetector<PendingTxn>;
  // One DML worker; everything but conn_id is used by its thread only.
  struct Worker {
    Worker(size_t i, const BackoffOptions& options) : index(i), backoff(options, 0x5eed + i) {}

    const size_t index;
    std::unique_ptr<MysqlConnection> conn;
    bool connected_once = false;
    Clock::TimePoint error_safe_until{};  // Duplicate-key safe mode lasts until then.
    Backoff backoff;
    std::atomic<uint64_t> conn_id{0};
  };

  MysqlSink(MysqlSinkConfig config, MysqlSinkOptions options);

  void RunWorker(size_t index, const StopToken& stop);
  Status WriteBatch(Worker* worker, const std::vector<Detector::Ticket*>& batch,
                    const StopToken& stop);
  Status ExecuteTxn(MysqlConnection* conn, const std::vector<std::string>& statements,
                    unsigned* errnum);
  Result<MysqlConnection*> WorkerConnection(Worker* worker);
  Status WriteDdlOnce(const event::DdlEvent& ddl, bool* skipped) REQUIRES(control_mu_);
  std::shared_ptr<const EpochFence> fence() const EXCLUDES(fence_mu_);
  // After the fence refused a write made under `refused_epoch`: waits
  // (bounded by fence_adoption_grace, the write permit and `stop`) until
  // this sink adopts a newer epoch. True: retry the write.
  bool AwaitAdoption(uint64_t refused_epoch, const CancelToken& stop) EXCLUDES(fence_mu_);
  Status EnsureControlConnection() REQUIRES(control_mu_);
  // Sets the sticky status (first error wins) and wakes Close().
  void Fail(const Status& st) EXCLUDES(mu_);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  DmlBuildOptions BuildOptions(const MysqlConnection& conn) const;

  const MysqlSinkConfig config_;
  const MysqlSinkOptions options_;
  const std::string scheme_;
  Clock* const clock_;
  Ts replicating_ts_;

  ByteQuota bytes_quota_;
  ByteQuota rows_quota_;
  FlushOrderer orderer_;
  Detector detector_;
  CancelSource close_source_;  // Cancels blocked AddDmlEvent and DDL backoff.

  mutable Mutex mu_;
  CondVar progress_;  // A batch finished or the sink failed.
  Status status_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  std::atomic<bool> failed_{false};
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> checkpoint_{0};

  Mutex control_mu_;  // Serialises DDLs and ddl_ts access.
  std::unique_ptr<MysqlConnection> control_ GUARDED_BY(control_mu_);
  std::atomic<uint64_t> control_id_{0};
  DdlTsTable ddl_ts_ GUARDED_BY(control_mu_);
  // The fence of the generation this sink writes for. AdoptEpoch replaces
  // it (a fence is never changed in place); its queries run on the caller's
  // connection.
  mutable Mutex fence_mu_;
  std::shared_ptr<const EpochFence> fence_ GUARDED_BY(fence_mu_);

  std::vector<std::unique_ptr<Worker>> workers_;
  ThreadGroup threads_;

  struct Counters {
    std::atomic<uint64_t> rows{0}, txns{0}, batches{0}, safe_batches{0};
    std::atomic<uint64_t> ddls{0}, ddls_skipped{0}, retries{0}, reconnects{0};
    std::atomic<uint64_t> fence_waits{0};
  };
  Counters counters_;
};

}  // namespace sluice::sink
