// DdlRunner: the job lifecycle, and the database- and table-level actions.
// Column and index actions are in ddl_runner_alter.cc.
#include "simkv/ddl_runner.h"

#include <algorithm>
#include <utility>

#include "codec/model/job_args.h"
#include "simkv/sql_render.h"
#include "simkv/tidb_tables.h"
#include "simkv/tidb_types.h"

namespace sluice::simkv {

using model::ActionType;
using model::JobState;
using model::SchemaState;

namespace {

std::string JoinIds(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (int64_t id : ids) {
    if (!out.empty()) out += ",";
    out += std::to_string(id);
  }
  return out;
}

int NumPartitions(const model::TableInfo& table) {
  return table.partition.has_value() ? static_cast<int>(table.partition->definitions.size()) : 0;
}

// Assigns ids[first..] to the table and its partitions.
void AssignTableIds(const std::vector<int64_t>& ids, size_t first, model::TableInfo* table) {
  table->id = ids[first];
  if (!table->partition.has_value()) return;
  for (size_t i = 0; i < table->partition->definitions.size(); ++i) {
    table->partition->definitions[i].id = ids[first + 1 + i];
  }
}

// Physical ids of a partitioned table (empty for a plain one), as TiDB
// records them in the finished arguments of DROP / TRUNCATE TABLE.
std::vector<int64_t> PartitionIds(const model::TableInfo& table) {
  return table.IsPartitioned() ? table.partition->DefinitionIds() : std::vector<int64_t>{};
}

}  // namespace

DdlRunner::DdlRunner(TidbCatalog* catalog, TxnExecutor* executor, DdlRunnerOptions options)
    : catalog_(catalog), executor_(executor), options_(options) {}

Status DdlRunner::CommitTxn(MutationSet* txn, Ts start_ts) {
  TxnOptions opts;
  opts.lock_ttl_ms = options_.lock_ttl_ms;
  return executor_->Commit(txn->Take(), opts, start_ts).status();
}

Status DdlRunner::Bootstrap() {
  if (catalog_->bootstrapped()) return Status::Ok();
  ASSIGN_OR_RETURN(Ts start, executor_->NextTs());
  MutationSet txn;
  catalog_->Bootstrap(&txn);
  return CommitTxn(&txn, start);
}

Result<DdlRunner::TableTarget> DdlRunner::ResolveTable(int64_t table_id) const {
  TableTarget t;
  t.entry = catalog_->FindTable(table_id);
  if (t.entry == nullptr || t.entry->db_id == kMysqlDbId) {
    return NotFound("ddl: no user table " + std::to_string(table_id));
  }
  t.db = catalog_->FindDatabase(t.entry->db_id);
  if (t.db == nullptr) return Internal("ddl: table without database");
  return t;
}

DdlJobRow DdlRunner::NewJob(ActionType type, const model::DBInfo& db, const model::TableInfo* table,
                            std::string query) const {
  DdlJobRow row;
  model::Job& job = row.job;
  job.type = type;
  job.schema_id = db.id;
  job.schema_name = db.name.lower;
  job.state = JobState::kQueueing;
  job.query = std::move(query);
  job.binlog = model::JobBinlogInfo{};
  job.version = model::kJobVersion1;
  job.sql_mode = options_.sql_mode;
  model::InvolvingSchemaInfo involving;
  involving.database = db.name.lower;
  involving.table = "*";
  if (table != nullptr) {
    job.table_id = table->id;
    job.table_name = table->name.lower;
    involving.table = table->name.lower;
  }
  job.involving_schema_info = {involving};
  row.schema_ids = std::to_string(db.id);
  row.table_ids = std::to_string(job.table_id);
  return row;
}

Status DdlRunner::PutJobRow(const DdlJobRow& row, MutationSet* txn) const {
  const TidbCatalog::TableEntry* job_table = catalog_->FindTable(kDdlJobTableId);
  if (job_table == nullptr) return Internal("ddl: the catalog is not bootstrapped");
  ASSIGN_OR_RETURN(std::string value, EncodeDdlJobRow(job_table->info, row));
  txn->Put(DdlJobRowKey(row.job.id), std::move(value));
  return Status::Ok();
}

Status DdlRunner::Submit(DdlJobRow* row, int extra_ids, const AssignFn& assign) {
  ASSIGN_OR_RETURN(Ts start, executor_->NextTs());
  MutationSet txn;
  std::vector<int64_t> ids = catalog_->GenGlobalIds(1 + extra_ids, &txn);
  row->job.id = ids[0];
  row->job.start_ts = start.value();
  if (assign) assign(ids, row);
  RETURN_IF_ERROR(PutJobRow(*row, &txn));
  return CommitTxn(&txn, start);
}

Status DdlRunner::Step(DdlJobRow* row, SchemaState state, bool done, const MetaFn& fn) {
  ASSIGN_OR_RETURN(Ts start, executor_->NextTs());
  model::Job& job = row->job;
  job.schema_state = state;
  job.state = done ? JobState::kDone : JobState::kRunning;
  if (job.real_start_ts == 0) job.real_start_ts = start.value();
  MutationSet txn;
  RETURN_IF_ERROR(fn(start, &txn, &job));
  int64_t version = catalog_->GenSchemaVersion(&txn);
  if (done) {
    job.binlog->schema_version = version;
    job.binlog->finished_ts = start.value();
  }
  row->processing = true;
  RETURN_IF_ERROR(PutJobRow(*row, &txn));
  return CommitTxn(&txn, start);
}

Status DdlRunner::Finish(const DdlJobRow& row) {
  ASSIGN_OR_RETURN(Ts start, executor_->NextTs());
  MutationSet txn;
  txn.Delete(DdlJobRowKey(row.job.id));
  return CommitTxn(&txn, start);
}

Result<model::Job> DdlRunner::RunSteps(DdlJobRow* row, std::initializer_list<SchemaState> states,
                                       const MetaFn& fn, SchemaState final_state,
                                       const MetaFn& final_fn) {
  if (options_.intermediate_states) {
    for (SchemaState state : states) RETURN_IF_ERROR(Step(row, state, /*done=*/false, fn));
  }
  RETURN_IF_ERROR(Step(row, final_state, /*done=*/true, final_fn));
  model::Job done = row->job;
  RETURN_IF_ERROR(Finish(*row));
  return done;
}

void DdlRunner::PutTable(int64_t db_id, Ts start_ts, model::TableInfo* info, MutationSet* txn) {
  info->update_timestamp = start_ts.value();
  catalog_->PutTable(db_id, *info, txn);
}

Result<model::Job> DdlRunner::CreateDatabase(std::string_view name) {
  if (catalog_->FindDatabaseByName(name) != nullptr) {
    return AlreadyExists("ddl: database " + std::string(name) + " exists");
  }
  model::DBInfo db;
  db.name = model::CIStr::From(name);
  db.charset = std::string(tidb::kUtf8mb4);
  db.collate = std::string(tidb::kUtf8mb4Bin);
  db.state = SchemaState::kPublic;
  DdlJobRow row = NewJob(ActionType::kCreateSchema, db, nullptr,
                         "CREATE DATABASE " + QuoteName(db.name.original));
  row.job.charset = db.charset;
  row.job.collate = db.collate;
  RETURN_IF_ERROR(Submit(&row, 1, [&](const std::vector<int64_t>& ids, DdlJobRow* r) {
    db.id = ids[1];
    r->job.schema_id = db.id;
    r->schema_ids = std::to_string(db.id);
    r->job.raw_args = model::JsonValue::array({model::EncodeDBInfo(db)});
  }));
  return RunSteps(&row, {}, nullptr, SchemaState::kPublic,
                  [&](Ts, MutationSet* txn, model::Job* job) {
                    catalog_->PutDatabase(db, txn);
                    job->binlog->db_info = db;
                    return Status::Ok();
                  });
}

Result<model::Job> DdlRunner::DropDatabase(int64_t db_id) {
  const model::DBInfo* found = catalog_->FindDatabase(db_id);
  if (found == nullptr || db_id == kMysqlDbId) {
    return NotFound("ddl: no user database " + std::to_string(db_id));
  }
  model::DBInfo db = *found;
  DdlJobRow row =
      NewJob(ActionType::kDropSchema, db, nullptr, "DROP DATABASE " + QuoteName(db.name.original));
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  auto step = [&](Ts, MutationSet* txn, model::Job* job) {
    db.state = job->schema_state;
    catalog_->PutDatabase(db, txn);
    return Status::Ok();
  };
  auto final_step = [&](Ts, MutationSet* txn, model::Job* job) {
    std::vector<int64_t> dropped;
    for (int64_t table_id : catalog_->TablesOf(db_id)) {
      for (int64_t id : catalog_->FindTable(table_id)->info.PhysicalTableIds()) {
        dropped.push_back(id);
      }
    }
    catalog_->DropDatabase(db_id, txn);
    db.state = SchemaState::kNone;
    job->binlog->db_info = db;
    job->raw_args = model::MakeFinishedDroppedIdsArgs(job->type, job->version, dropped);
    return Status::Ok();
  };
  return RunSteps(&row, {SchemaState::kWriteOnly, SchemaState::kDeleteOnly}, step,
                  SchemaState::kNone, final_step);
}

Result<model::Job> DdlRunner::CreateTable(int64_t db_id, model::TableInfo table) {
  const model::DBInfo* db = catalog_->FindDatabase(db_id);
  if (db == nullptr) return NotFound("ddl: no database " + std::to_string(db_id));
  if (catalog_->FindTableByName(db_id, table.name.original) != nullptr) {
    return AlreadyExists("ddl: table " + table.name.original + " exists");
  }
  table.state = SchemaState::kPublic;
  DdlJobRow row = NewJob(ActionType::kCreateTable, *db, &table, CreateTableSql(table));
  row.job.charset = table.charset;
  row.job.collate = table.collate;
  RETURN_IF_ERROR(
      Submit(&row, 1 + NumPartitions(table), [&](const std::vector<int64_t>& ids, DdlJobRow* r) {
        AssignTableIds(ids, 1, &table);
        r->job.table_id = table.id;
        r->table_ids = std::to_string(table.id);
        r->job.raw_args = model::JsonValue::array({model::EncodeTableInfo(table), false});
      }));
  return RunSteps(&row, {}, nullptr, SchemaState::kPublic,
                  [&](Ts start, MutationSet* txn, model::Job* job) {
                    PutTable(db_id, start, &table, txn);
                    job->binlog->table_info = table;
                    return Status::Ok();
                  });
}

Result<model::Job> DdlRunner::DropTable(int64_t table_id) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  model::TableInfo info = target.entry->info;
  int64_t db_id = target.db->id;
  DdlJobRow row = NewJob(ActionType::kDropTable, *target.db, &info,
                         "DROP TABLE " + QuoteName(info.name.original));
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  auto step = [&](Ts start, MutationSet* txn, model::Job* job) {
    info.state = job->schema_state;
    PutTable(db_id, start, &info, txn);
    return Status::Ok();
  };
  auto final_step = [&](Ts, MutationSet* txn, model::Job* job) {
    catalog_->DropTable(db_id, table_id, txn);
    info.state = SchemaState::kNone;
    job->binlog->table_info = info;
    job->raw_args = model::MakeFinishedDroppedIdsArgs(job->type, job->version, PartitionIds(info));
    return Status::Ok();
  };
  return RunSteps(&row, {SchemaState::kWriteOnly, SchemaState::kDeleteOnly}, step,
                  SchemaState::kNone, final_step);
}

Result<model::Job> DdlRunner::TruncateTable(int64_t table_id) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  const model::TableInfo old_info = target.entry->info;
  model::TableInfo info = old_info;
  int64_t db_id = target.db->id;
  DdlJobRow row = NewJob(ActionType::kTruncateTable, *target.db, &info,
                         "TRUNCATE TABLE " + QuoteName(info.name.original));
  RETURN_IF_ERROR(
      Submit(&row, 1 + NumPartitions(info), [&](const std::vector<int64_t>& ids, DdlJobRow* r) {
        AssignTableIds(ids, 1, &info);
        r->table_ids = JoinIds({table_id, info.id});
        r->job.raw_args =
            model::JsonValue::array({info.id, false, model::JsonValue(PartitionIds(info))});
      }));
  return RunSteps(
      &row, {}, nullptr, SchemaState::kPublic, [&](Ts start, MutationSet* txn, model::Job* job) {
        catalog_->DropTable(db_id, table_id, txn);
        PutTable(db_id, start, &info, txn);
        job->binlog->table_info = info;
        job->raw_args =
            model::MakeFinishedDroppedIdsArgs(job->type, job->version, PartitionIds(old_info));
        return Status::Ok();
      });
}

Result<model::Job> DdlRunner::RenameTable(int64_t table_id, int64_t new_db_id,
                                          std::string_view new_name) {
  ASSIGN_OR_RETURN(TableTarget target, ResolveTable(table_id));
  const model::DBInfo* new_db = catalog_->FindDatabase(new_db_id);
  if (new_db == nullptr || new_db_id == kMysqlDbId) {
    return NotFound("ddl: no user database " + std::to_string(new_db_id));
  }
  if (catalog_->FindTableByName(new_db_id, new_name) != nullptr) {
    return AlreadyExists("ddl: table " + std::string(new_name) + " exists");
  }
  model::TableInfo info = target.entry->info;
  const model::DBInfo old_db = *target.db;
  info.name = model::CIStr::From(new_name);
  std::string query = "RENAME TABLE " + QuoteName(old_db.name.original) + "." +
                      QuoteName(target.entry->info.name.original) + " TO " +
                      QuoteName(new_db->name.original) + "." + QuoteName(info.name.original);
  DdlJobRow row = NewJob(ActionType::kRenameTable, *new_db, &info, std::move(query));
  model::InvolvingSchemaInfo old_involving;
  old_involving.database = old_db.name.lower;
  old_involving.table = target.entry->info.name.lower;
  row.job.involving_schema_info.insert(row.job.involving_schema_info.begin(), old_involving);
  row.schema_ids = JoinIds({old_db.id, new_db_id});
  model::RenameTableArgs args{old_db.id, old_db.name, info.name};
  row.job.raw_args = model::MakeRenameTableArgs(row.job.version, args);
  RETURN_IF_ERROR(Submit(&row, 0, nullptr));
  return RunSteps(&row, {}, nullptr, SchemaState::kPublic,
                  [&](Ts start, MutationSet* txn, model::Job* job) {
                    if (old_db.id != new_db_id) catalog_->DropTable(old_db.id, table_id, txn);
                    PutTable(new_db_id, start, &info, txn);
                    job->binlog->table_info = info;
                    return Status::Ok();
                  });
}

}  // namespace sluice::simkv
