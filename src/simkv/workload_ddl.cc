// Workload: the DDL schedule, seeded choices of DDL targets, and keeping the
// DML generator in step with the schema.
#include <algorithm>
#include <utility>

#include "codec/mysql_type.h"
#include "simkv/tidb_types.h"
#include "simkv/workload.h"

namespace sluice::simkv {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

int IntegerRank(uint8_t tp) {
  constexpr uint8_t kOrder[] = {mt::kTiny, mt::kShort, mt::kInt24, mt::kLong, mt::kLonglong};
  for (int i = 0; i < 5; ++i) {
    if (kOrder[i] == tp) return i + 1;
  }
  return 0;
}

bool IsIndexed(const model::TableInfo& t, const model::ColumnInfo& c) {
  for (const model::IndexInfo& index : t.indices) {
    for (const model::IndexColumn& ic : index.columns) {
      if (ic.name.lower == c.name.lower) return true;
    }
  }
  return false;
}

bool IsTextVarchar(const model::FieldType& t) {
  return t.tp == mt::kVarchar && t.charset != "binary";
}

std::vector<std::string> DroppableColumns(const model::TableInfo& t) {
  std::vector<std::string> out;
  for (const model::ColumnInfo& c : t.columns) {
    if (!c.IsPrimaryKey() && !IsIndexed(t, c)) out.push_back(c.name.original);
  }
  // Keep at least one column besides the primary key.
  size_t non_key = std::count_if(t.columns.begin(), t.columns.end(),
                                 [](const model::ColumnInfo& c) { return !c.IsPrimaryKey(); });
  if (non_key < 2) out.clear();
  return out;
}

std::vector<std::string> WidenableColumns(const model::TableInfo& t) {
  std::vector<std::string> out;
  for (const model::ColumnInfo& c : t.columns) {
    if (c.IsPrimaryKey()) continue;
    int rank = IntegerRank(c.type.tp);
    bool widen_int = rank > 0 && rank < 5;
    bool widen_text = IsTextVarchar(c.type) && c.type.flen < 16383;
    if (widen_int || widen_text) out.push_back(c.name.original);
  }
  return out;
}

std::vector<std::string> IndexableColumns(const model::TableInfo& t) {
  std::vector<std::string> out;
  size_t secondary = std::count_if(t.indices.begin(), t.indices.end(),
                                   [](const model::IndexInfo& i) { return !i.primary; });
  if (secondary >= 4) return out;
  for (const model::ColumnInfo& c : t.columns) {
    bool kind = IntegerRank(c.type.tp) > 0 || (IsTextVarchar(c.type) && c.type.flen <= 255) ||
                c.type.tp == mt::kDate || c.type.tp == mt::kDatetime;
    if (kind && !c.IsPrimaryKey() && !IsIndexed(t, c)) out.push_back(c.name.original);
  }
  return out;
}

std::vector<std::string> SecondaryIndexes(const model::TableInfo& t) {
  std::vector<std::string> out;
  for (const model::IndexInfo& i : t.indices) {
    if (!i.primary) out.push_back(i.name.original);
  }
  return out;
}

// Whether a table-level `kind` has something to act on in `t`.
bool Applies(DdlKind kind, const model::TableInfo& t) {
  switch (kind) {
    case DdlKind::kDropColumn:
      return !DroppableColumns(t).empty();
    case DdlKind::kModifyColumn:
      return !WidenableColumns(t).empty();
    case DdlKind::kAddIndex:
      return !IndexableColumns(t).empty();
    case DdlKind::kDropIndex:
      return !SecondaryIndexes(t).empty();
    case DdlKind::kAddColumn:
      return t.columns.size() < 128;
    default:
      return true;
  }
}

model::FieldType Widen(const model::FieldType& t) {
  int rank = IntegerRank(t.tp);
  if (rank > 0) {
    constexpr uint8_t kOrder[] = {mt::kTiny, mt::kShort, mt::kInt24, mt::kLong, mt::kLonglong};
    return tidb::IntType(kOrder[std::min(rank, 4)], t.HasFlag(mf::kUnsigned));
  }
  return tidb::VarcharType(std::min<int64_t>(t.flen * 2, 16383));
}

}  // namespace

std::string_view DdlKindName(DdlKind kind) {
  static constexpr std::string_view kNames[kNumDdlKinds] = {
      "create database", "drop database", "create table", "drop table",
      "truncate table",  "rename table",  "add column",   "drop column",
      "modify column",   "add index",     "drop index"};
  size_t i = static_cast<size_t>(kind);
  return i < kNumDdlKinds ? kNames[i] : "unknown";
}

const model::TableInfo& Workload::TableInfoOf(int64_t table_id) const {
  return catalog_.FindTable(table_id)->info;
}

std::string Workload::NewName(const char* prefix) {
  return prefix + std::to_string(++name_counter_);
}

bool Workload::DdlDue() const {
  return options_.ddl_every > 0 && dml_since_ddl_ >= options_.ddl_every;
}

Status Workload::ScheduledDdl() {
  dml_since_ddl_ = 0;
  std::optional<DdlRequest> request;
  if (ddl_list_pos_ < options_.ddl_list.size()) {
    request = options_.ddl_list[ddl_list_pos_++];
  } else {
    request = DrawDdl();
  }
  if (!request.has_value()) {
    ++stats_.ddl_skipped;
    return Status::Ok();
  }
  return RunDdlLocked(*request).status();
}

std::vector<int64_t> Workload::DroppableDatabases() const {
  size_t tables = catalog_.UserTables().size();
  std::vector<int64_t> out;
  for (int64_t db : catalog_.UserDatabases()) {
    size_t left = tables - catalog_.TablesOf(db).size();
    if (db != primary_db_ && left >= static_cast<size_t>(std::max(options_.min_tables, 0))) {
      out.push_back(db);
    }
  }
  return out;
}

std::array<int, kNumDdlKinds> Workload::ApplicableWeights() const {
  std::vector<int64_t> tables = catalog_.UserTables();
  size_t dbs = catalog_.UserDatabases().size();
  std::array<int, kNumDdlKinds> weights = options_.ddl_weights;
  auto at = [&](DdlKind k) -> int& { return weights[static_cast<size_t>(k)]; };
  if (dbs >= static_cast<size_t>(options_.max_databases)) at(DdlKind::kCreateDatabase) = 0;
  if (DroppableDatabases().empty()) at(DdlKind::kDropDatabase) = 0;
  if (dbs == 0 || tables.size() >= static_cast<size_t>(options_.max_tables)) {
    at(DdlKind::kCreateTable) = 0;
  }
  if (tables.size() <= static_cast<size_t>(std::max(options_.min_tables, 0))) {
    at(DdlKind::kDropTable) = 0;
  }
  for (size_t k = static_cast<size_t>(DdlKind::kTruncateTable); k < kNumDdlKinds; ++k) {
    bool any = false;
    for (int64_t id : tables) any = any || Applies(static_cast<DdlKind>(k), TableInfoOf(id));
    if (!any) weights[k] = 0;
  }
  for (int& w : weights) w = std::max(w, 0);
  return weights;
}

std::optional<DdlRequest> Workload::DrawDdl() {
  std::array<int, kNumDdlKinds> weights = ApplicableWeights();
  int total = 0;
  for (int w : weights) total += w;
  if (total == 0) return std::nullopt;
  int r = static_cast<int>(rng_.Uniform(static_cast<uint64_t>(total)));
  size_t kind = 0;
  while (r >= weights[kind]) r -= weights[kind++];
  DdlRequest request;
  request.kind = static_cast<DdlKind>(kind);
  if (request.kind == DdlKind::kDropDatabase) {
    std::vector<int64_t> dbs = DroppableDatabases();
    request.database = catalog_.FindDatabase(dbs[rng_.Uniform(dbs.size())])->name.original;
  }
  std::vector<int64_t> dbs = catalog_.UserDatabases();
  if (request.kind == DdlKind::kRenameTable && dbs.size() > 1 && rng_.Chance(0.5)) {
    request.target_database = catalog_.FindDatabase(dbs[rng_.Uniform(dbs.size())])->name.original;
  }
  return request;
}

Result<model::Job> Workload::RunDdl(const DdlRequest& request) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetupLocked());
  return RunDdlLocked(request);
}

Result<model::Job> Workload::RunDdlLocked(const DdlRequest& request) {
  ASSIGN_OR_RETURN(model::Job job, Dispatch(request));
  jobs_.push_back(job);
  ++stats_.ddls;
  return job;
}

Result<model::Job> Workload::Dispatch(const DdlRequest& request) {
  switch (request.kind) {
    case DdlKind::kCreateDatabase:
      return ddl_.CreateDatabase(request.name.empty() ? NewName("db") : request.name);
    case DdlKind::kDropDatabase:
      return DoDropDatabase(request);
    case DdlKind::kCreateTable:
      return DoCreateTable(request);
    default:
      return DoTableDdl(request);
  }
}

Result<int64_t> Workload::ResolveDatabase(const std::string& name) const {
  if (name.empty()) {
    if (catalog_.FindDatabase(primary_db_) != nullptr) return primary_db_;
    std::vector<int64_t> dbs = catalog_.UserDatabases();
    if (dbs.empty()) return NotFound("workload: no database");
    return dbs.front();
  }
  const model::DBInfo* db = catalog_.FindDatabaseByName(name);
  if (db == nullptr) return NotFound("workload: no database " + name);
  return db->id;
}

Result<model::Job> Workload::DoCreateTable(const DdlRequest& request) {
  ASSIGN_OR_RETURN(int64_t db_id, ResolveDatabase(request.database));
  TableShape shape = TableShape::kNarrow;
  if (request.shape.has_value()) {
    shape = *request.shape;
  } else {
    constexpr TableShape kShapes[] = {TableShape::kNarrow,           TableShape::kNarrow,
                                      TableShape::kNarrow,           TableShape::kClustered,
                                      TableShape::kRangePartitioned, TableShape::kHashPartitioned};
    shape = kShapes[rng_.Uniform(std::size(kShapes))];
  }
  TableTemplateOptions topts = options_.table;
  topts.pad_width = options_.row_width;
  topts.key_space = dml_.options().key_space;
  std::string name = request.name.empty() ? NewName("t") : request.name;
  ASSIGN_OR_RETURN(model::Job job, ddl_.CreateTable(db_id, TableTemplate(shape, name, topts)));
  dml_.SetTable(catalog_.FindTable(job.table_id)->info);
  return job;
}

Result<model::Job> Workload::DoDropDatabase(const DdlRequest& request) {
  int64_t db_id = 0;
  if (request.database.empty()) {
    std::vector<int64_t> dbs = catalog_.UserDatabases();
    std::erase(dbs, primary_db_);
    if (dbs.empty()) return NotFound("workload: no database to drop");
    db_id = dbs[rng_.Uniform(dbs.size())];
  } else {
    ASSIGN_OR_RETURN(db_id, ResolveDatabase(request.database));
  }
  std::vector<int64_t> tables = catalog_.TablesOf(db_id);
  RETURN_IF_ERROR(CommitLongTxnsOn(tables));
  ASSIGN_OR_RETURN(model::Job job, ddl_.DropDatabase(db_id));
  for (int64_t id : tables) dml_.RemoveTable(id);
  return job;
}

Result<int64_t> Workload::ResolveTable(const DdlRequest& request) {
  if (!request.table.empty()) {
    ASSIGN_OR_RETURN(int64_t db_id, ResolveDatabase(request.database));
    const TidbCatalog::TableEntry* entry = catalog_.FindTableByName(db_id, request.table);
    if (entry == nullptr) return NotFound("workload: no table " + request.table);
    return entry->info.id;
  }
  std::vector<int64_t> candidates;
  for (int64_t id : catalog_.UserTables()) {
    if (Applies(request.kind, catalog_.FindTable(id)->info)) candidates.push_back(id);
  }
  if (candidates.empty()) {
    return NotFound("workload: no table for " + std::string(DdlKindName(request.kind)));
  }
  return candidates[rng_.Uniform(candidates.size())];
}

Result<std::string> Workload::Pick(const std::vector<std::string>& names, const char* what) {
  if (names.empty()) return NotFound(std::string("workload: no ") + what);
  return names[rng_.Uniform(names.size())];
}

model::ColumnInfo Workload::DrawColumn(const std::string& name) {
  model::ColumnInfo c;
  switch (rng_.Uniform(4)) {
    case 0:
      c = tidb::MakeColumn(0, name, 0, tidb::IntType(mt::kLong));
      tidb::SetDefault(&c, std::to_string(rng_.Range(0, 999)));
      break;
    case 1:
      c = tidb::MakeColumn(0, name, 0, tidb::VarcharType(32));
      tidb::SetNotNull(&c, /*has_default=*/true);
      tidb::SetDefault(&c, "dflt" + std::to_string(rng_.Range(0, 99)));
      break;
    case 2:
      c = tidb::MakeColumn(0, name, 0, tidb::DatetimeType(3));
      break;
    default:
      c = tidb::MakeColumn(0, name, 0, tidb::IntType(mt::kLonglong, /*is_unsigned=*/true));
      tidb::SetNotNull(&c, /*has_default=*/true);
      tidb::SetDefault(&c, std::to_string(rng_.Range(0, 1000000)));
      break;
  }
  return c;
}

Result<model::Job> Workload::DoTableDdl(const DdlRequest& request) {
  ASSIGN_OR_RETURN(int64_t table_id, ResolveTable(request));
  RETURN_IF_ERROR(CommitLongTxnsOn({table_id}));
  ASSIGN_OR_RETURN(model::Job job, DoAlter(request, table_id));
  if (request.kind == DdlKind::kDropTable) {
    dml_.RemoveTable(table_id);
  } else if (request.kind == DdlKind::kTruncateTable) {
    dml_.ReplaceTable(table_id, catalog_.FindTable(job.binlog->table_info->id)->info);
  } else {
    dml_.SetTable(catalog_.FindTable(table_id)->info);
  }
  return job;
}

Result<model::Job> Workload::DoAlter(const DdlRequest& request, int64_t table_id) {
  const TidbCatalog::TableEntry entry = *catalog_.FindTable(table_id);
  const model::TableInfo& info = entry.info;
  switch (request.kind) {
    case DdlKind::kDropTable:
      return ddl_.DropTable(table_id);
    case DdlKind::kTruncateTable:
      return ddl_.TruncateTable(table_id);
    case DdlKind::kRenameTable: {
      int64_t db_id = entry.db_id;
      if (!request.target_database.empty()) {
        ASSIGN_OR_RETURN(db_id, ResolveDatabase(request.target_database));
      }
      return ddl_.RenameTable(table_id, db_id, request.name.empty() ? NewName("t") : request.name);
    }
    case DdlKind::kAddColumn:
      return ddl_.AddColumn(table_id,
                            DrawColumn(request.name.empty() ? NewName("c") : request.name));
    case DdlKind::kDropColumn: {
      std::string column = request.column;
      if (column.empty()) {
        ASSIGN_OR_RETURN(column, Pick(DroppableColumns(info), "column"));
      }
      return ddl_.DropColumn(table_id, column);
    }
    case DdlKind::kModifyColumn: {
      std::string column = request.column;
      if (column.empty()) {
        ASSIGN_OR_RETURN(column, Pick(WidenableColumns(info), "column"));
      }
      const model::ColumnInfo* c = info.FindColumnByName(column);
      if (c == nullptr) return NotFound("workload: no column " + column);
      return ddl_.ModifyColumn(table_id, column, Widen(c->type));
    }
    case DdlKind::kAddIndex: {
      std::string column = request.column;
      if (column.empty()) {
        ASSIGN_OR_RETURN(column, Pick(IndexableColumns(info), "column"));
      }
      return ddl_.AddIndex(table_id, request.name.empty() ? NewName("idx") : request.name, column);
    }
    case DdlKind::kDropIndex: {
      std::string index = request.name;
      if (index.empty()) {
        ASSIGN_OR_RETURN(index, Pick(SecondaryIndexes(info), "index"));
      }
      return ddl_.DropIndex(table_id, index);
    }
    default:
      return InvalidArgument("workload: not a table DDL");
  }
}

}  // namespace sluice::simkv
