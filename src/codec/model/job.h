// A DDL job (TiDB `model.Job`): the `job_meta` column of mysql.tidb_ddl_job
// (and of tidb_ddl_history), and the values of the legacy meta hash
// "DDLJobHistory". CDC keeps the jobs whose state is Done; their "binlog"
// member carries the schema after the change.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/db_info.h"
#include "codec/model/go_json.h"
#include "codec/model/table_info.h"
#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::model {

// Layout of Job::raw_args, chosen by Job::version. TiDB before v8.4 writes
// version 1 (zero in very old jobs means 1).
inline constexpr int64_t kJobVersion1 = 1;  // A JSON array of positional arguments.
inline constexpr int64_t kJobVersion2 = 2;  // One JSON object of named arguments.

// The schema a job leaves behind (TiDB `HistoryInfo`, JSON key "binlog";
// its keys are capitalised: "SchemaVersion", "DBInfo", ...).
struct JobBinlogInfo {
  int64_t schema_version = 0;
  std::optional<DBInfo> db_info;        // CREATE/DROP DATABASE and schema-level jobs.
  std::optional<TableInfo> table_info;  // Table-level jobs.
  uint64_t finished_ts = 0;             // Commit ts of the finishing transaction.
  // Jobs that change several tables at once (CREATE TABLES, RENAME TABLES).
  std::vector<TableInfo> multiple_table_infos;

  bool operator==(const JobBinlogInfo&) const = default;
};

// Which objects a job locks against concurrent DDL (lower-case names, "*"
// for all). Omitted from JSON when empty.
struct InvolvingSchemaInfo {
  std::string database;
  std::string table;
  std::string policy;
  std::string resource_group;
  int64_t mode = 0;  // 0 exclusive, 1 shared.

  bool operator==(const InvolvingSchemaInfo&) const = default;
};

struct Job {
  int64_t id = 0;
  ActionType type = ActionType::kNone;
  // For EXCHANGE PARTITION these name the non-partitioned table.
  int64_t schema_id = 0;
  int64_t table_id = 0;
  std::string schema_name;
  std::string table_name;
  JobState state = JobState::kNone;
  JsonValue warning;        // Kept verbatim.
  JsonValue error;          // "err"; kept verbatim.
  int64_t error_count = 0;  // "err_count"
  int64_t row_count = 0;
  // Action-specific arguments, kept verbatim; job_args.h reads the ones CDC
  // needs. Layout depends on `version`.
  JsonValue raw_args;
  SchemaState schema_state = SchemaState::kNone;
  uint64_t snapshot_ver = 0;
  uint64_t real_start_ts = 0;
  uint64_t start_ts = 0;
  int64_t dependency_id = 0;
  std::string query;
  std::optional<JobBinlogInfo> binlog;
  int64_t version = 0;
  JsonValue reorg_meta;         // Kept verbatim.
  JsonValue multi_schema_info;  // Kept verbatim (sub-jobs of ALTER ... , ...).
  int64_t priority = 0;
  uint64_t seq_num = 0;
  std::string charset;
  std::string collate;
  std::vector<InvolvingSchemaInfo> involving_schema_info;
  int64_t admin_operator = 0;
  JsonValue trace_info;  // Kept verbatim.
  std::string bdr_role;
  uint64_t cdc_write_source = 0;
  bool local_mode = false;
  int64_t sql_mode = 0;
  std::map<std::string, std::string> session_vars;  // Omitted from JSON when empty.
  int64_t last_schema_version = 0;

  bool IsDone() const { return state == JobState::kDone; }
  bool IsSynced() const { return state == JobState::kSynced; }
  // Done in tidb_ddl_job, Synced once moved to history: the change happened.
  bool IsDoneOrSynced() const { return IsDone() || IsSynced(); }
  bool IsCancelled() const { return state == JobState::kCancelled; }
  bool IsRollbackDone() const { return state == JobState::kRollbackDone; }
  // TiDB's IsFinished: Done, RollbackDone or Cancelled.
  bool IsFinished() const { return IsDone() || IsRollbackDone() || IsCancelled(); }

  // The schema after the job, or nullptr when the job carries none.
  const TableInfo* FinishedTableInfo() const;
  const DBInfo* FinishedDBInfo() const;

  bool operator==(const Job&) const = default;
};

// Parses job JSON. Malformed JSON, a wrong type for a known key anywhere in
// the document (including the TableInfo and DBInfo under "binlog"), or a
// missing "id", "type", "schema_id", "table_id" or "state" give Corruption.
// Unknown keys are ignored.
Result<Job> ParseJob(std::string_view json);

// Job JSON as TiDB writes it.
std::string ToJson(const Job& job);

Status DecodeJob(const JsonValue& value, std::string_view path, Job* out);
JsonValue EncodeJob(const Job& job);

}  // namespace sluice::model
