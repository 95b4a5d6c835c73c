// Workload: a seeded TiDB-like client of simkv's MvccStore. It bootstraps
// TiDB's system schema, creates a database and tables through DDL jobs, then
// writes DML transactions (TiDB-encoded rows, see dml_generator.h) and, on a
// schedule, more DDL jobs (ddl_runner.h), all through Percolator
// transactions with timestamps from the TsoAllocator. The same seed (and a
// TSO with a fixed clock) gives the same store contents, byte for byte.
// src/simkv/README.md ("Workload") describes exactly what is written.
//
// Ownership: the store and the allocator are not owned and must outlive the
// workload (so must options.clock). Threads: Step, RunDdl, Run, Pregenerate,
// Apply and the accessors may be called from any thread; one mutex
// serialises the generator, the catalog and the transactions. Start(),
// Wait() and Stop() are for the owner: Start() runs Run() on an owned
// thread, Stop() (or the destructor) cancels and joins it. Only one Workload
// may write to a store: the meta keys and ids are its own.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "common/cancel.h"
#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "simkv/ddl_runner.h"
#include "simkv/dml_generator.h"
#include "simkv/mvcc_store.h"
#include "simkv/tidb_catalog.h"
#include "simkv/tidb_tables.h"
#include "simkv/tso_allocator.h"
#include "simkv/txn_executor.h"
#include "simkv/workload_rng.h"

namespace sluice::simkv {

enum class DdlKind : uint8_t {
  kCreateDatabase,
  kDropDatabase,
  kCreateTable,
  kDropTable,
  kTruncateTable,
  kRenameTable,
  kAddColumn,
  kDropColumn,
  kModifyColumn,
  kAddIndex,
  kDropIndex,
};
inline constexpr size_t kNumDdlKinds = 11;

std::string_view DdlKindName(DdlKind kind);

// One DDL statement. Empty fields are chosen by the workload's seeded random
// source among the objects the statement can apply to.
struct DdlRequest {
  DdlKind kind = DdlKind::kCreateTable;
  // The database of the table acted on (or created in), or the database to
  // drop; empty = the workload database.
  std::string database;
  // The table acted on.
  std::string table;
  // The new database, table, column or index name; for DROP INDEX the index.
  std::string name;
  // DROP / MODIFY COLUMN, ADD INDEX: the column.
  std::string column;
  // RENAME TABLE: the database to move the table to; empty = its own.
  std::string target_database;
  // CREATE TABLE: the shape.
  std::optional<TableShape> shape;
};

struct WorkloadOptions {
  uint64_t seed = 1;

  // Initial schema, created by Setup() through DDL jobs.
  std::string database = "workload";
  int narrow_tables = 2;            // t1..tN
  bool kitchen_sink_table = true;   // "kitchen_sink": every column type
  bool clustered_table = false;     // a clustered (common handle) table
  bool partitioned_tables = false;  // one RANGE and one HASH partitioned table
  TableTemplateOptions table;       // pad width is set from row_width

  // DML.
  double rate = 0;             // Transactions per second in Run(); 0 = as fast as possible.
  DmlOptions dml;              // rows per txn, key space and distribution, mix, values
  int64_t row_width = 64;      // Bytes of padding text per row (the `pad` column).
  double one_pc_fraction = 0;  // Share of DML committed in one phase.
  double abort_fraction = 0;   // Share of DML prewritten then rolled back.
  // Long transactions: prewritten, and committed only after `long_txn_hold`
  // further steps (and, if set, `long_txn_hold_time` on the clock).
  double long_txn_fraction = 0;
  uint64_t long_txn_hold = 10;
  Clock::Duration long_txn_hold_time{0};
  uint64_t long_txn_ttl_ms = 60000;
  uint64_t lock_ttl_ms = 3000;
  int max_attempts = 10;  // Per transaction, counting conflict retries.

  // DDL schedule: after every `ddl_every` DML transactions (0 = never), the
  // next request of `ddl_list`, or once the list is used up (or if it is
  // empty) one drawn with `ddl_weights` (indexed by DdlKind; all 0 = none).
  uint64_t ddl_every = 0;
  std::vector<DdlRequest> ddl_list;
  std::array<int, kNumDdlKinds> ddl_weights = {1, 1, 2, 1, 2, 1, 3, 2, 2, 2, 2};
  bool ddl_intermediate_states = true;
  int min_tables = 2;   // Drawn DDL never drops below this many user tables...
  int max_tables = 12;  // ...nor creates more than this many.
  int max_databases = 3;

  // Infrastructure.
  int64_t first_global_id = 100;
  bool record_intents = false;  // Keep every committed row's values (tests).
  Clock* clock = nullptr;       // nullptr = the real clock; must outlive the workload.
  // Called before every prewrite attempt (a test seam for conflicts).
  TxnExecutor::BeforePrewriteHook before_prewrite;
};

struct WorkloadStats {
  uint64_t steps = 0;
  uint64_t txns = 0;  // DML transactions committed.
  uint64_t rows_inserted = 0;
  uint64_t rows_updated = 0;
  uint64_t rows_deleted = 0;
  uint64_t one_pc = 0;
  uint64_t conflict_retries = 0;
  uint64_t aborted = 0;  // Rolled back on purpose (abort_fraction).
  uint64_t long_opened = 0;
  uint64_t long_committed = 0;
  uint64_t abandoned = 0;  // Left to lock resolution (AbandonTxn).
  uint64_t ddls = 0;
  uint64_t ddl_skipped = 0;  // Scheduled draws with nothing to act on.
};

// A committed DML transaction and the rows it meant to write.
struct TxnIntent {
  Ts start_ts;
  Ts commit_ts;
  std::vector<RowIntent> rows;
};

// A user table as the workload last left it.
struct WorkloadTable {
  std::string database;
  int64_t db_id = 0;
  model::TableInfo info;
};

struct RunLimit {
  uint64_t steps = 0;           // 0 = no limit.
  Clock::Duration duration{0};  // 0 = no limit.
};

class Workload {
 public:
  Workload(MvccStore* store, TsoAllocator* tso, WorkloadOptions options);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Bootstraps the system schema and creates the initial database and
  // tables. Step(), RunDdl() and Pregenerate() call it first; idempotent.
  Status Setup() EXCLUDES(mu_);

  // One unit of work: due long transactions are committed, then either the
  // scheduled DDL runs or one DML transaction does.
  Status Step() EXCLUDES(mu_);

  // Runs one DDL statement now (all its transactions) and returns the job as
  // its Done row carried it.
  Result<model::Job> RunDdl(const DdlRequest& request) EXCLUDES(mu_);

  // Steps until the limit is reached or `token` is cancelled, paced to
  // `rate`. Returns the first error.
  Status Run(const RunLimit& limit, const CancelToken& token) EXCLUDES(mu_);
  // Run() on an owned thread. Start() while running is a programming error.
  void Start(RunLimit limit) EXCLUDES(mu_);
  // Waits for the thread's Run() to end by itself; returns its status.
  Status Wait() EXCLUDES(mu_);
  // True from Start() until the thread's Run() ends (its limit reached, an
  // error, or Stop()).
  bool Running() const EXCLUDES(mu_);
  // Cancels and joins the thread; returns its status (OK if never started).
  Status Stop() EXCLUDES(mu_);

  // `n` DML transactions, encoded and ready for Apply(); no DDL, long or
  // aborted transactions. The generator advances as if they were committed
  // in order, so apply all of them, in order, before the next Step().
  Result<std::vector<PreparedTxn>> Pregenerate(size_t n) EXCLUDES(mu_);
  // Commits one pre-generated transaction with fresh timestamps: in one phase
  // when one_pc_fraction >= 1, else in two.
  Status Apply(const PreparedTxn& txn) EXCLUDES(mu_);

  // Commits every open long transaction now.
  Status CommitLongTxns() EXCLUDES(mu_);

  // One DML transaction whose writer dies (a TiDB server killed between
  // prewrite and commit): prewritten with a `lock_ttl_ms` TTL and, with
  // `commit_primary`, its primary committed; never finished here. Its rows
  // are left out of later transactions (whatever lock resolution makes of
  // them). Returns its start ts; NotFound if the generator had nothing.
  Result<Ts> AbandonTxn(bool commit_primary, uint64_t lock_ttl_ms) EXCLUDES(mu_);

  WorkloadStats stats() const EXCLUDES(mu_);
  // Committed DML with their values (only with record_intents).
  std::vector<TxnIntent> intents() const EXCLUDES(mu_);
  // Every finished DDL job, in order, as its Done row carried it.
  std::vector<model::Job> jobs() const EXCLUDES(mu_);
  // The user tables now, in id order.
  std::vector<WorkloadTable> Tables() const EXCLUDES(mu_);
  std::optional<WorkloadTable> FindTable(std::string_view database, std::string_view table) const
      EXCLUDES(mu_);

 private:
  struct LongTxn {
    OpenTxn open;
    PreparedTxn txn;
    uint64_t due_step = 0;
    Clock::TimePoint due_time;
  };

  Status SetupLocked() REQUIRES(mu_);
  Status CreateInitialTables() REQUIRES(mu_);
  Status DmlStep() REQUIRES(mu_);
  Status CommitTxn(PreparedTxn txn, bool one_pc) REQUIRES(mu_);
  // Counts the rows and keeps them as an intent (with record_intents).
  void RecordCommitted(std::vector<RowIntent> rows, const TxnOutcome& outcome) REQUIRES(mu_);
  void CountCommitted(const std::vector<RowIntent>& rows) REQUIRES(mu_);
  Status CommitLong(LongTxn* lt) REQUIRES(mu_);
  // Commits the open long transactions matching `pred`, in order.
  Status CommitLongIf(const std::function<bool(const LongTxn&)>& pred) REQUIRES(mu_);
  Status CommitDueLongTxns() REQUIRES(mu_);
  // Commits the open long transactions writing any of `table_ids` (as
  // TiDB's metadata lock makes a DDL wait for them).
  Status CommitLongTxnsOn(const std::vector<int64_t>& table_ids) REQUIRES(mu_);

  // DDL (workload_ddl.cc).
  bool DdlDue() const REQUIRES(mu_);
  Status ScheduledDdl() REQUIRES(mu_);
  std::optional<DdlRequest> DrawDdl() REQUIRES(mu_);
  // ddl_weights with 0 for the kinds that have nothing to act on now.
  std::array<int, kNumDdlKinds> ApplicableWeights() const REQUIRES(mu_);
  // User databases other than the workload's whose drop keeps min_tables.
  std::vector<int64_t> DroppableDatabases() const REQUIRES(mu_);
  Result<model::Job> RunDdlLocked(const DdlRequest& request) REQUIRES(mu_);
  Result<model::Job> Dispatch(const DdlRequest& request) REQUIRES(mu_);
  Result<model::Job> DoCreateTable(const DdlRequest& request) REQUIRES(mu_);
  Result<model::Job> DoDropDatabase(const DdlRequest& request) REQUIRES(mu_);
  Result<model::Job> DoTableDdl(const DdlRequest& request) REQUIRES(mu_);
  Result<model::Job> DoAlter(const DdlRequest& request, int64_t table_id) REQUIRES(mu_);
  Result<int64_t> ResolveDatabase(const std::string& name) const REQUIRES(mu_);
  Result<int64_t> ResolveTable(const DdlRequest& request) REQUIRES(mu_);
  Result<std::string> Pick(const std::vector<std::string>& names, const char* what) REQUIRES(mu_);
  // A column for ADD COLUMN: INT DEFAULT n, VARCHAR(32) NOT NULL DEFAULT
  // 'dflt..', DATETIME(3) or BIGINT UNSIGNED NOT NULL DEFAULT n.
  model::ColumnInfo DrawColumn(const std::string& name) REQUIRES(mu_);
  std::string NewName(const char* prefix) REQUIRES(mu_);
  // The catalog's TableInfo of an existing table.
  const model::TableInfo& TableInfoOf(int64_t table_id) const REQUIRES(mu_);
  WorkloadTable TableView(int64_t table_id) const REQUIRES(mu_);

  const WorkloadOptions options_;
  Clock* const clock_;

  mutable Mutex mu_;
  TidbCatalog catalog_ GUARDED_BY(mu_);
  TxnExecutor executor_ GUARDED_BY(mu_);
  DdlRunner ddl_ GUARDED_BY(mu_);
  DmlGenerator dml_ GUARDED_BY(mu_);
  WorkloadRng rng_ GUARDED_BY(mu_);  // Transaction kinds and DDL choices.
  bool setup_done_ GUARDED_BY(mu_) = false;
  int64_t primary_db_ GUARDED_BY(mu_) = 0;
  uint64_t name_counter_ GUARDED_BY(mu_) = 0;
  uint64_t dml_since_ddl_ GUARDED_BY(mu_) = 0;
  size_t ddl_list_pos_ GUARDED_BY(mu_) = 0;
  std::vector<LongTxn> long_txns_ GUARDED_BY(mu_);
  WorkloadStats stats_ GUARDED_BY(mu_);
  std::vector<TxnIntent> intents_ GUARDED_BY(mu_);
  std::vector<model::Job> jobs_ GUARDED_BY(mu_);
  Status run_status_ GUARDED_BY(mu_);
  bool running_ GUARDED_BY(mu_) = false;

  // Owner-only (Start/Wait/Stop and the destructor).
  std::unique_ptr<OwnedThread> thread_;
};

}  // namespace sluice::simkv
