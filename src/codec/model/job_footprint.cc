#include "codec/model/job_footprint.h"

#include <algorithm>
#include <string>

#include "codec/model/job_args.h"

namespace sluice::model {
namespace {

// How an action's objects show up in the job.
enum class Shape {
  kSchema,         // Changes a schema only.
  kWholeSchema,    // Drops or restores a schema with all its tables.
  kCreateTable,    // One new table, described by the finished TableInfo.
  kCreateTables,   // Several new tables in MultipleTableInfos.
  kDropTable,      // Removes job.table_id.
  kTruncateTable,  // Replaces job.table_id by the finished TableInfo's id.
  kRenameTable,
  kRenameTables,
  kExchange,
  kTable,  // Changes job.table_id in place (columns, indexes, partitions, ...).
};

Shape ShapeOf(ActionType type) {
  switch (type) {
    case ActionType::kCreateSchema:
    case ActionType::kModifySchemaCharsetAndCollate:
    case ActionType::kModifySchemaDefaultPlacement:
    case ActionType::kModifySchemaReadOnly:
      return Shape::kSchema;
    case ActionType::kDropSchema:
    case ActionType::kRecoverSchema:
      return Shape::kWholeSchema;
    case ActionType::kCreateTable:
    case ActionType::kCreateView:
    case ActionType::kCreateSequence:
    case ActionType::kRecoverTable:
      return Shape::kCreateTable;
    case ActionType::kCreateTables:
      return Shape::kCreateTables;
    case ActionType::kDropTable:
    case ActionType::kDropView:
    case ActionType::kDropSequence:
      return Shape::kDropTable;
    case ActionType::kTruncateTable:
      return Shape::kTruncateTable;
    case ActionType::kRenameTable:
      return Shape::kRenameTable;
    case ActionType::kRenameTables:
      return Shape::kRenameTables;
    case ActionType::kExchangeTablePartition:
      return Shape::kExchange;
    default:
      return Shape::kTable;
  }
}

void AddUnique(std::vector<int64_t>* ids, int64_t id) {
  if (id != 0 && std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
}

void AddAll(std::vector<int64_t>* ids, const std::vector<int64_t>& more) {
  for (int64_t id : more) AddUnique(ids, id);
}

// The finished table infos: MultipleTableInfos when set (TiDB then repeats
// its last element as TableInfo), else TableInfo.
std::vector<const TableInfo*> FinishedTables(const Job& job) {
  std::vector<const TableInfo*> tables;
  if (!job.binlog.has_value()) return tables;
  for (const auto& table : job.binlog->multiple_table_infos) tables.push_back(&table);
  if (tables.empty() && job.binlog->table_info.has_value()) {
    tables.push_back(&*job.binlog->table_info);
  }
  return tables;
}

int64_t FinishedTableId(const Job& job) {
  const TableInfo* table = job.FinishedTableInfo();
  return table == nullptr ? 0 : table->id;
}

Status AddRecordedDrops(const Job& job, JobFootprint* fp) {
  if (!RecordsDroppedIds(job.type)) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, GetFinishedDroppedIds(job));
  AddAll(&fp->dropped_physical_ids, ids);
  return Status::Ok();
}

Status AddRenameTables(const Job& job, JobFootprint* fp) {
  ASSIGN_OR_RETURN(std::vector<RenameTablesItem> items, GetRenameTablesArgs(job));
  for (const auto& item : items) {
    AddUnique(&fp->schema_ids, item.old_schema_id);
    AddUnique(&fp->schema_ids, item.new_schema_id);
    AddUnique(&fp->table_ids, item.table_id);
  }
  return Status::Ok();
}

// Fills schema_ids, table_ids and whole_schema for the job's shape.
Status AddObjects(const Job& job, JobFootprint* fp) {
  switch (ShapeOf(job.type)) {
    case Shape::kSchema:
      AddUnique(&fp->schema_ids, job.schema_id);
      return Status::Ok();
    case Shape::kWholeSchema:
      AddUnique(&fp->schema_ids, job.schema_id);
      fp->whole_schema = true;
      return Status::Ok();
    case Shape::kCreateTables:
      AddUnique(&fp->schema_ids, job.schema_id);
      for (const TableInfo* table : FinishedTables(job)) AddUnique(&fp->table_ids, table->id);
      return Status::Ok();
    case Shape::kRenameTable: {
      ASSIGN_OR_RETURN(RenameTableArgs args, GetRenameTableArgs(job));
      AddUnique(&fp->schema_ids, args.old_schema_id);
      AddUnique(&fp->schema_ids, job.schema_id);
      AddUnique(&fp->table_ids, job.table_id);
      return Status::Ok();
    }
    case Shape::kRenameTables:
      AddUnique(&fp->schema_ids, job.schema_id);
      return AddRenameTables(job, fp);
    case Shape::kExchange: {
      ASSIGN_OR_RETURN(ExchangePartitionArgs args, GetExchangePartitionArgs(job));
      AddUnique(&fp->schema_ids, job.schema_id);
      AddUnique(&fp->schema_ids, args.pt_schema_id);
      AddUnique(&fp->table_ids, job.table_id);
      AddUnique(&fp->table_ids, args.pt_table_id);
      return Status::Ok();
    }
    case Shape::kCreateTable:
      AddUnique(&fp->schema_ids, job.schema_id);
      AddUnique(&fp->table_ids, FinishedTableId(job) != 0 ? FinishedTableId(job) : job.table_id);
      return Status::Ok();
    case Shape::kDropTable:
    case Shape::kTruncateTable:
      // Views and sequences keep no rows.
      if (job.type != ActionType::kDropView && job.type != ActionType::kDropSequence) {
        AddUnique(&fp->dropped_physical_ids, job.table_id);
      }
      [[fallthrough]];
    case Shape::kTable:
      AddUnique(&fp->schema_ids, job.schema_id);
      AddUnique(&fp->table_ids, job.table_id);
      AddUnique(&fp->table_ids, FinishedTableId(job));  // A new id, if the job gave one.
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

Result<JobFootprint> ComputeFootprint(const Job& job) {
  if (!job.IsDoneOrSynced()) {
    return InvalidArgument("job " + std::to_string(job.id) + " is " +
                           std::string(JobStateName(job.state)) + ", not finished");
  }
  JobFootprint fp;
  RETURN_IF_ERROR(AddObjects(job, &fp));
  RETURN_IF_ERROR(AddRecordedDrops(job, &fp));
  if (ShapeOf(job.type) != Shape::kDropTable) {
    for (const TableInfo* table : FinishedTables(job)) {
      AddAll(&fp.physical_ids_after, table->PhysicalTableIds());
    }
  }
  return fp;
}

}  // namespace sluice::model
