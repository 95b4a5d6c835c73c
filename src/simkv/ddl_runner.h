// DdlRunner: executes DDL statements the way TiDB's DDL owner does, as a
// sequence of transactions that change the meta keys (TidbCatalog) and the
// job's row in mysql.tidb_ddl_job (ddl_job_row.h):
//
//   1. submit:  new global ids (the job id first, then any new database,
//               table or partition ids); PUT the job row, state Queueing.
//   2. running: one transaction per intermediate schema state (e.g. ADD
//               COLUMN: delete only, write only, write reorganization): the
//               object in that state, a new schema version, the job row
//               PUT with state Running and processing = 1.
//   3. done:    the final meta change, a new schema version, the job row PUT
//               with state Done and binlog {SchemaVersion, DBInfo/TableInfo,
//               FinishedTS = this transaction's start ts}.
//   4. finish:  DELETE the job row.
//
// A CDC reader keeps only the Done PUT (and takes FinishedTS from its commit
// ts). src/simkv/README.md ("Workload") lists the states of every action.
//
// Not thread-safe: one owner (the Workload, under its mutex). The catalog and
// executor are not owned and must outlive the runner. A failed transaction
// leaves the catalog ahead of the store; the owner must stop using both.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "simkv/ddl_job_row.h"
#include "simkv/tidb_catalog.h"
#include "simkv/txn_executor.h"

namespace sluice::simkv {

struct DdlRunnerOptions {
  // Write the intermediate-state transactions (step 2). Off: only the
  // submit, done and finish transactions.
  bool intermediate_states = true;
  int64_t sql_mode = 1436549152;  // TiDB's default sql_mode bits.
  uint64_t lock_ttl_ms = 3000;
};

class DdlRunner {
 public:
  DdlRunner(TidbCatalog* catalog, TxnExecutor* executor, DdlRunnerOptions options);
  DdlRunner(const DdlRunner&) = delete;
  DdlRunner& operator=(const DdlRunner&) = delete;

  // Commits the catalog's bootstrap (no job).
  Status Bootstrap();

  // Each runs one statement to completion and returns the job as its Done
  // row carried it. NotFound / AlreadyExists / InvalidArgument for a bad
  // target, before anything is written.
  Result<model::Job> CreateDatabase(std::string_view name);
  Result<model::Job> DropDatabase(int64_t db_id);
  // `table` is a template (tidb_tables.h): its table and partition ids are
  // allocated here.
  Result<model::Job> CreateTable(int64_t db_id, model::TableInfo table);
  Result<model::Job> DropTable(int64_t table_id);
  // A new table id (and new partition ids); the old rows stay under the old
  // ids, as TiDB leaves them to its GC.
  Result<model::Job> TruncateTable(int64_t table_id);
  Result<model::Job> RenameTable(int64_t table_id, int64_t new_db_id, std::string_view new_name);
  // `column` gets the next column id and the last offset.
  Result<model::Job> AddColumn(int64_t table_id, model::ColumnInfo column);
  Result<model::Job> DropColumn(int64_t table_id, std::string_view column);
  // A type change that needs no data rewrite (widening), done in place.
  Result<model::Job> ModifyColumn(int64_t table_id, std::string_view column, model::FieldType type);
  Result<model::Job> AddIndex(int64_t table_id, std::string_view index, std::string_view column);
  Result<model::Job> DropIndex(int64_t table_id, std::string_view index);

 private:
  // Meta changes of one step; may fill the job (binlog, arguments). The
  // job's schema_state is already the step's state.
  using MetaFn = std::function<Status(Ts start_ts, MutationSet* txn, model::Job* job)>;
  // Called once the submit transaction has allocated the ids.
  using AssignFn = std::function<void(const std::vector<int64_t>& new_ids, DdlJobRow* row)>;

  struct TableTarget {
    const model::DBInfo* db = nullptr;
    const TidbCatalog::TableEntry* entry = nullptr;
  };

  Result<TableTarget> ResolveTable(int64_t table_id) const;
  DdlJobRow NewJob(model::ActionType type, const model::DBInfo& db, const model::TableInfo* table,
                   std::string query) const;

  Status Submit(DdlJobRow* row, int extra_ids, const AssignFn& assign);
  Status Step(DdlJobRow* row, model::SchemaState state, bool done, const MetaFn& fn);
  // The intermediate `states` (unless disabled), each through `fn`, then the
  // done step in `final_state` through `final_fn`, then finish.
  Result<model::Job> RunSteps(DdlJobRow* row, std::initializer_list<model::SchemaState> states,
                              const MetaFn& fn, model::SchemaState final_state,
                              const MetaFn& final_fn);
  Status Finish(const DdlJobRow& row);
  Status PutJobRow(const DdlJobRow& row, MutationSet* txn) const;
  Status CommitTxn(MutationSet* txn, Ts start_ts);

  // Puts `info` under `db_id` with update_timestamp = start_ts.
  void PutTable(int64_t db_id, Ts start_ts, model::TableInfo* info, MutationSet* txn);
  // Walks a column or index just added to `info` (its state at `*state`)
  // through delete-only, write-only and reorganisation to public, writing
  // `info` at each step, as TiDB's ADD COLUMN / ADD INDEX do.
  Result<model::Job> PublishNewElement(DdlJobRow* row, int64_t db_id, model::TableInfo* info,
                                       model::SchemaState* state);

  TidbCatalog* catalog_;
  TxnExecutor* executor_;
  DdlRunnerOptions options_;
};

}  // namespace sluice::simkv
