// SchemaCatalog handlers, one per kind of DDL, after TiCDC's
// logservice/schemastore/persist_storage_ddl_handlers.go: what each job
// blocks (BlockedTables), which physical tables it adds and drops, whose
// DDL history gets it, and how the schema changes. Each handler checks
// first and changes the catalog only when nothing can fail any more.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "codec/model/job_args.h"
#include "schemastore/catalog.h"

namespace sluice::schemastore {

using event::InfluenceType;

namespace {

std::vector<int64_t> Minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t id : a) {
    if (std::find(b.begin(), b.end(), id) == b.end()) out.push_back(id);
  }
  return out;
}

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

event::BlockedTables Normal(std::vector<int64_t> ids) {
  event::BlockedTables b;
  b.influence = InfluenceType::kNormal;
  b.table_ids = std::move(ids);
  return b;
}

// Physical ids of a table the catalog knows (none for views).
std::vector<int64_t> PhysOf(bool physical, const model::TableInfo& info) {
  return physical ? info.PhysicalTableIds() : std::vector<int64_t>{};
}

std::string Quoted(const std::string& schema, const std::string& table) {
  return event::QuoteName(schema) + "." + event::QuoteName(table);
}

}  // namespace

Status SchemaCatalog::ApplyCreateSchema(Pending* p) {
  const model::DBInfo* db = p->job->FinishedDBInfo();
  if (db == nullptr) return Corruption("the job carries no DBInfo");
  PutDb(*db);
  p->ev.schema_id = db->id;
  p->ev.schema_name = db->name.original;
  p->ev.blocked = Normal({kDdlSpanTableId});
  p->trigger = true;
  return Status::Ok();
}

Status SchemaCatalog::ApplyDropSchema(Pending* p) {
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  std::vector<int64_t> ids = PhysicalIdsOfDb(db->info.id);
  p->ev.schema_name = db->info.name.original;
  p->ev.blocked.influence = InfluenceType::kDb;
  p->ev.blocked.schema_id = db->info.id;
  p->ev.tables_to_drop = ids;
  p->history = std::move(ids);
  p->trigger = true;
  DropDb(db->info.id, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyModifySchema(Pending* p) {
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  p->ev.schema_name = db->info.name.original;
  p->ev.blocked.influence = InfluenceType::kDb;
  p->ev.blocked.schema_id = db->info.id;
  p->history = PhysicalIdsOfDb(db->info.id);
  p->trigger = true;
  const model::DBInfo* after = p->job->FinishedDBInfo();
  if (after != nullptr && after->id == db->info.id) PutDb(*after);
  return Status::Ok();
}

Status SchemaCatalog::ApplyCreateTable(Pending* p, bool* skip) {
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  // A re-delivered or snapshot-covered CREATE TABLE (TiCDC shouldSkipDDL).
  if (p->job->type == model::ActionType::kCreateTable && FindTable(info->id) != nullptr) {
    *skip = true;
    return Status::Ok();
  }
  const int64_t schema_id = db->info.id;
  std::vector<int64_t> phys = PhysOf(!info->IsView() && !info->IsSequence(), *info);
  p->ev.table_id = info->id;
  p->ev.table_name = info->name.original;
  p->ev.blocked = Normal({kDdlSpanTableId});
  p->ev.tables_to_add = Refs(schema_id, *info, phys);
  p->history = std::move(phys);
  p->trigger = true;
  p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyCreateTables(Pending* p, bool* skip) {
  const std::vector<model::TableInfo>* infos =
      p->job->binlog.has_value() ? &p->job->binlog->multiple_table_infos : nullptr;
  if (infos == nullptr || infos->empty()) return Corruption("the job carries no TableInfos");
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  if (FindTable(infos->front().id) != nullptr) {
    *skip = true;
    return Status::Ok();
  }
  const int64_t schema_id = db->info.id;
  p->ev.blocked = Normal({kDdlSpanTableId});
  p->trigger = true;
  for (const model::TableInfo& info : *infos) {
    std::vector<int64_t> phys = PhysOf(!info.IsView() && !info.IsSequence(), info);
    for (event::TableRef& ref : Refs(schema_id, info, phys)) {
      p->ev.tables_to_add.push_back(std::move(ref));
    }
    p->history = Concat(std::move(p->history), phys);
  }
  for (const model::TableInfo& info : *infos) PutTable(schema_id, info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyDropTable(Pending* p) {
  ASSIGN_OR_RETURN(const Table* t, RequireTable(*p, p->job->table_id));
  std::vector<int64_t> phys = PhysOf(t->physical, t->info);
  p->ev.schema_id = t->schema_id;
  p->ev.schema_name = DbName(t->schema_id);
  p->ev.table_name = t->info.name.original;
  p->ev.query = "DROP TABLE " + Quoted(p->ev.schema_name, p->ev.table_name);
  p->ev.blocked = Normal(Concat(phys, {kDdlSpanTableId}));
  p->ev.tables_to_drop = phys;
  p->history = std::move(phys);
  p->trigger = true;
  DropTable(t->info.id, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyTruncateTable(Pending* p) {
  ASSIGN_OR_RETURN(const Table* old_table, RequireTable(*p, p->job->table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  const int64_t schema_id = old_table->schema_id;
  std::vector<int64_t> old_phys = PhysOf(old_table->physical, old_table->info);
  std::vector<int64_t> new_phys = info->PhysicalTableIds();
  p->ev.schema_id = schema_id;
  p->ev.schema_name = DbName(schema_id);
  p->ev.table_name = old_table->info.name.original;
  p->ev.blocked = Normal(Concat(old_phys, {kDdlSpanTableId}));
  p->ev.tables_to_drop = old_phys;
  p->ev.tables_to_add = Refs(schema_id, *info, new_phys);
  p->history = Concat(old_phys, new_phys);
  p->trigger = true;
  DropTable(old_table->info.id, p->ts);
  p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyRenameTable(Pending* p) {
  ASSIGN_OR_RETURN(const Table* t, RequireTable(*p, p->job->table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  if (info->id != t->info.id) return Corruption("the TableInfo is of another table");
  // The catalog holds the table as it was just before this job, so the old
  // names come from it (TiCDC recovers them from the job's arguments and
  // query because its snapshot may already hold the renamed table).
  p->ev.prev_schema_name = DbName(t->schema_id);
  p->ev.prev_table_name = t->info.name.original;
  p->ev.schema_id = db->info.id;
  p->ev.schema_name = db->info.name.original;
  p->ev.table_name = info->name.original;
  p->ev.query = "RENAME TABLE " + Quoted(p->ev.prev_schema_name, p->ev.prev_table_name) + " TO " +
                Quoted(p->ev.schema_name, p->ev.table_name);
  std::vector<int64_t> phys = PhysOf(t->physical, *info);
  p->ev.blocked = Normal(Concat(phys, {kDdlSpanTableId}));
  p->history = std::move(phys);
  p->trigger = true;
  p->ev.table_schema = PutTable(db->info.id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyRenameTables(Pending* p) {
  Result<std::vector<model::RenameTablesItem>> items = model::GetRenameTablesArgs(*p->job);
  if (!items.ok()) return items.status();
  const std::vector<model::TableInfo>* infos =
      p->job->binlog.has_value() ? &p->job->binlog->multiple_table_infos : nullptr;
  if (infos == nullptr || infos->size() != items->size()) {
    return Corruption("RENAME TABLES: arguments and TableInfos differ in number");
  }
  std::vector<std::pair<int64_t, const model::TableInfo*>> moves;  // (new schema, info)
  p->ev.blocked = Normal({kDdlSpanTableId});
  p->trigger = true;
  for (const model::RenameTablesItem& item : *items) {
    ASSIGN_OR_RETURN(const Table* t, RequireTable(*p, item.table_id));
    RETURN_IF_ERROR(RequireDb(*p, item.new_schema_id).status());
    auto info = std::find_if(infos->begin(), infos->end(),
                             [&](const model::TableInfo& i) { return i.id == item.table_id; });
    if (info == infos->end()) return Corruption(fmt::format("no TableInfo for {}", item.table_id));
    std::vector<int64_t> phys = PhysOf(t->physical, *info);
    p->ev.blocked.table_ids = Concat(std::move(p->ev.blocked.table_ids), phys);
    p->history = Concat(std::move(p->history), phys);
    moves.emplace_back(item.new_schema_id, &*info);
  }
  for (const auto& [schema_id, info] : moves) PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyNormalTableDdl(Pending* p) {
  ASSIGN_OR_RETURN(const Table* t, RequireTable(*p, p->job->table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  if (info->id != t->info.id) return Corruption("the TableInfo is of another table");
  const int64_t schema_id = t->schema_id;
  std::vector<int64_t> phys = PhysOf(t->physical, *info);
  p->ev.schema_id = schema_id;
  p->ev.schema_name = DbName(schema_id);
  p->ev.table_name = info->name.original;
  p->ev.blocked = Normal(phys);
  p->history = std::move(phys);
  p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyPartitionDdl(Pending* p) {
  ASSIGN_OR_RETURN(const Table* t, RequireTable(*p, p->job->table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  if (info->id != t->info.id || !info->IsPartitioned()) {
    return Corruption("the TableInfo is not the partitioned table");
  }
  const int64_t schema_id = t->schema_id;
  std::vector<int64_t> prev = t->info.PhysicalTableIds();
  std::vector<int64_t> after = info->PhysicalTableIds();
  std::vector<int64_t> created = Minus(after, prev);
  p->ev.schema_id = schema_id;
  p->ev.schema_name = DbName(schema_id);
  p->ev.table_name = info->name.original;
  p->ev.blocked = Normal(Concat(prev, {kDdlSpanTableId}));
  p->ev.tables_to_add = Refs(schema_id, *info, created);
  p->ev.tables_to_drop = Minus(prev, after);
  switch (p->job->type) {
    case model::ActionType::kAddTablePartition:
      p->history = after;
      break;
    case model::ActionType::kDropTablePartition:
      p->history = prev;
      break;
    default:  // Truncate and reorganize: the old partitions and the new ones.
      p->history = Concat(prev, created);
      break;
  }
  p->trigger = true;
  p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyRepartition(Pending* p) {
  ASSIGN_OR_RETURN(const Table* old_table, RequireTable(*p, p->job->table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  const int64_t schema_id = old_table->schema_id;
  const int64_t old_id = old_table->info.id;
  std::vector<int64_t> old_phys = PhysOf(old_table->physical, old_table->info);
  std::vector<int64_t> new_phys = info->PhysicalTableIds();
  p->ev.schema_id = schema_id;
  p->ev.schema_name = DbName(schema_id);
  p->ev.table_id = info->id;
  p->ev.table_name = info->name.original;
  p->ev.blocked = Normal(Concat({kDdlSpanTableId}, old_phys));
  p->ev.tables_to_drop = Minus(old_phys, new_phys);
  p->ev.tables_to_add = Refs(schema_id, *info, Minus(new_phys, old_phys));
  p->history = Concat(old_phys, Minus(new_phys, old_phys));
  p->trigger = true;
  if (old_id != info->id) DropTable(old_id, p->ts);
  p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyExchangePartition(Pending* p) {
  ASSIGN_OR_RETURN(const Table* normal, RequireTable(*p, p->job->table_id));
  Result<model::ExchangePartitionArgs> args = model::GetExchangePartitionArgs(*p->job);
  if (!args.ok()) return args.status();
  ASSIGN_OR_RETURN(const Table* part, RequireTable(*p, args->pt_table_id));
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  const int64_t nt_id = normal->info.id;
  const int64_t partition_id = args->partition_id;
  std::vector<int64_t> prev = part->info.PhysicalTableIds();
  std::vector<int64_t> after = info->PhysicalTableIds();
  if (info->id != part->info.id ||
      std::find(prev.begin(), prev.end(), partition_id) == prev.end() ||
      std::find(after.begin(), after.end(), nt_id) == after.end()) {
    return Corruption("EXCHANGE PARTITION: tables and partitions do not match the schema");
  }
  const int64_t normal_schema = normal->schema_id;
  const int64_t part_schema = part->schema_id;
  model::TableInfo swapped = normal->info;  // The normal table, now under the partition's id.
  swapped.id = partition_id;
  p->ev.schema_id = normal_schema;
  p->ev.schema_name = DbName(normal_schema);
  p->ev.table_name = normal->info.name.original;
  p->ev.prev_schema_name = DbName(part_schema);
  p->ev.prev_table_name = part->info.name.original;
  p->ev.blocked = Normal({nt_id, partition_id, kDdlSpanTableId});
  p->history = {partition_id, nt_id};
  p->trigger = true;
  DropTable(nt_id, p->ts);
  p->ev.table_schema = PutTable(part_schema, *info, p->ts);
  PutTable(normal_schema, std::move(swapped), p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyCreateView(Pending* p) {
  ASSIGN_OR_RETURN(const model::TableInfo* info, RequireTableInfo(*p));
  ASSIGN_OR_RETURN(const Db* db, RequireDb(*p, p->job->schema_id));
  p->ev.schema_name = db->info.name.original;
  p->ev.table_id = info->id;
  p->ev.table_name = info->name.original;
  p->ev.blocked.influence = InfluenceType::kAll;
  p->history = AllPhysicalIdsNow();
  p->trigger = true;
  PutTable(db->info.id, *info, p->ts);
  return Status::Ok();
}

Status SchemaCatalog::ApplyDropView(Pending* p) {
  const Table* view = FindTable(p->job->table_id);
  if (view != nullptr && view->physical) return Corruption("DROP VIEW of a table");
  if (view != nullptr) {
    p->ev.schema_id = view->schema_id;
    p->ev.schema_name = DbName(view->schema_id);
    p->ev.table_name = view->info.name.original;
  }
  p->ev.query = "DROP VIEW " + Quoted(p->ev.schema_name, p->ev.table_name);
  p->ev.blocked = Normal({kDdlSpanTableId});
  p->trigger = true;
  if (view != nullptr) DropTable(view->info.id, p->ts);
  return Status::Ok();
}

// An action the store has no handler for: kept as an event blocking its own
// table (or the table-trigger dispatcher when it names no known table);
// the table's schema follows the job's TableInfo when it carries one.
Status SchemaCatalog::ApplyUnknown(Pending* p) {
  const Table* t = p->job->table_id != 0 ? FindTable(p->job->table_id) : nullptr;
  if (t == nullptr) {
    p->ev.blocked = Normal({kDdlSpanTableId});
    p->trigger = true;
    return Status::Ok();
  }
  const int64_t schema_id = t->schema_id;
  const model::TableInfo* info = p->job->FinishedTableInfo();
  std::vector<int64_t> phys = PhysOf(t->physical, info != nullptr ? *info : t->info);
  p->ev.schema_id = schema_id;
  p->ev.schema_name = DbName(schema_id);
  p->ev.table_name = t->info.name.original;
  if (phys.empty()) {
    p->ev.blocked = Normal({kDdlSpanTableId});
    p->trigger = true;
  } else {
    p->ev.blocked = Normal(phys);
    p->history = std::move(phys);
  }
  if (info != nullptr && info->id == t->info.id) {
    p->ev.table_schema = PutTable(schema_id, *info, p->ts);
  }
  return Status::Ok();
}

}  // namespace sluice::schemastore
