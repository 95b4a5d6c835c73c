// SchemaCatalog: bootstrap, the job dispatcher, mutations and queries. The
// per-action handlers are in catalog_apply.cc.
#include "schemastore/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "schemastore/job_decoder.h"

namespace sluice::schemastore {

using model::ActionType;

namespace {

// Actions TiCDC drops before they reach the schema store (shouldSkipDDL):
// they change nothing a changefeed replicates and downstreams cannot run them.
bool IgnoredAction(ActionType type) {
  switch (type) {
    case ActionType::kLockTable:
    case ActionType::kUnlockTable:
    case ActionType::kRepairTable:
    case ActionType::kSetTiFlashReplica:
    case ActionType::kUpdateTiFlashReplicaStatus:
    case ActionType::kCreateSequence:
    case ActionType::kAlterSequence:
    case ActionType::kDropSequence:
    case ActionType::kModifyTableAutoIdCache:
    case ActionType::kRebaseAutoRandomBase:
    case ActionType::kAddCheckConstraint:
    case ActionType::kDropCheckConstraint:
    case ActionType::kAlterCheckConstraint:
    case ActionType::kAlterTableAttributes:
    case ActionType::kAlterTablePartitionAttributes:
    case ActionType::kCreatePlacementPolicy:
    case ActionType::kAlterPlacementPolicy:
    case ActionType::kDropPlacementPolicy:
    case ActionType::kAlterTablePartitionPlacement:
    case ActionType::kModifySchemaDefaultPlacement:
    case ActionType::kAlterTablePlacement:
    case ActionType::kAlterCacheTable:
    case ActionType::kAlterNoCacheTable:
    case ActionType::kFlashbackCluster:
    case ActionType::kRecoverSchema:
    case ActionType::kCreateResourceGroup:
    case ActionType::kAlterResourceGroup:
    case ActionType::kDropResourceGroup:
      return true;
    default:
      return false;
  }
}

// Single-table DDLs that only replace the table's info (TiCDC's
// "NormalDDLOnSingleTable" handlers).
bool NormalTableAction(ActionType type) {
  switch (type) {
    case ActionType::kAddColumn:
    case ActionType::kDropColumn:
    case ActionType::kAddIndex:
    case ActionType::kDropIndex:
    case ActionType::kAddForeignKey:
    case ActionType::kDropForeignKey:
    case ActionType::kModifyColumn:
    case ActionType::kRebaseAutoId:
    case ActionType::kSetDefaultValue:
    case ActionType::kShardRowId:
    case ActionType::kModifyTableComment:
    case ActionType::kRenameIndex:
    case ActionType::kModifyTableCharsetAndCollate:
    case ActionType::kAddPrimaryKey:
    case ActionType::kDropPrimaryKey:
    case ActionType::kAlterIndexVisibility:
    case ActionType::kMultiSchemaChange:
    case ActionType::kAlterTtlInfo:
    case ActionType::kAlterTtlRemove:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status SchemaCatalog::Bootstrap(const kvclient::MetaSnapshot& snap) {
  snapshot_ts_ = snap.ts;
  last_finished_ts_ = snap.ts;
  system_db_ids_.insert(kMysqlDbId);
  for (const auto& [id, db] : snap.dbs) {
    if (db.id != id)
      return Corruption(fmt::format("meta snapshot: database {} under id {}", db.id, id));
    if (IsSystemSchema(db.name.lower) || IsSystemSchema(db.name.original)) {
      system_db_ids_.insert(id);
      continue;
    }
    PutDb(db);
  }
  for (const auto& [id, entry] : snap.tables) {
    const auto& [db_id, info] = entry;
    if (info.id != id)
      return Corruption(fmt::format("meta snapshot: table {} under id {}", info.id, id));
    if (system_db_ids_.count(db_id) > 0) continue;
    if (dbs_.count(db_id) == 0) {
      return Corruption(fmt::format("meta snapshot: table {} in unknown database {}", id, db_id));
    }
    PutTable(db_id, info, snap.ts);
  }
  return Status::Ok();
}

Result<event::DdlEventPtr> SchemaCatalog::Apply(const model::Job& job) {
  const Ts ts(job.binlog.has_value() ? job.binlog->finished_ts : 0);
  // Schema version 0: TiDB ignored the job. Not after the last job: a
  // duplicate (re-delivered row) or already in the snapshot.
  if (!job.binlog.has_value() || job.binlog->schema_version == 0 || ts <= last_finished_ts_) {
    ++stats_.skipped;
    return event::DdlEventPtr();
  }
  const bool system = IsSystemSchema(job.schema_name) || system_db_ids_.count(job.schema_id) > 0 ||
                      (job.type == ActionType::kCreateSchema && job.FinishedDBInfo() != nullptr &&
                       IsSystemSchema(job.FinishedDBInfo()->name.lower));
  if (system || IgnoredAction(job.type)) {
    if (system && job.type == ActionType::kCreateSchema) system_db_ids_.insert(job.schema_id);
    last_finished_ts_ = ts;
    ++stats_.skipped;
    return event::DdlEventPtr();
  }

  Pending p;
  p.job = &job;
  p.ts = ts;
  event::DdlEvent& ev = p.ev;
  ev.job_id = job.id;
  ev.type = job.type;
  ev.start_ts = Ts(job.start_ts);
  ev.finished_ts = ts;
  ev.schema_version = job.binlog->schema_version;
  ev.query = job.query;
  ev.schema_id = job.schema_id;
  ev.schema_name = dbs_.count(job.schema_id) > 0 ? DbName(job.schema_id) : job.schema_name;
  ev.table_id = job.table_id;
  ev.table_name = job.table_name;

  bool skip = false;
  Status st;
  switch (job.type) {
    case ActionType::kCreateSchema:
      st = ApplyCreateSchema(&p);
      break;
    case ActionType::kDropSchema:
      st = ApplyDropSchema(&p);
      break;
    case ActionType::kModifySchemaCharsetAndCollate:
      st = ApplyModifySchema(&p);
      break;
    case ActionType::kCreateTable:
    case ActionType::kRecoverTable:
      st = ApplyCreateTable(&p, &skip);
      break;
    case ActionType::kCreateTables:
      st = ApplyCreateTables(&p, &skip);
      break;
    case ActionType::kDropTable:
      st = ApplyDropTable(&p);
      break;
    case ActionType::kTruncateTable:
      st = ApplyTruncateTable(&p);
      break;
    case ActionType::kRenameTable:
      st = ApplyRenameTable(&p);
      break;
    case ActionType::kRenameTables:
      st = ApplyRenameTables(&p);
      break;
    case ActionType::kAddTablePartition:
    case ActionType::kDropTablePartition:
    case ActionType::kTruncateTablePartition:
    case ActionType::kReorganizePartition:
      st = ApplyPartitionDdl(&p);
      break;
    case ActionType::kAlterTablePartitioning:
    case ActionType::kRemovePartitioning:
      st = ApplyRepartition(&p);
      break;
    case ActionType::kExchangeTablePartition:
      st = ApplyExchangePartition(&p);
      break;
    case ActionType::kCreateView:
      st = ApplyCreateView(&p);
      break;
    case ActionType::kDropView:
      st = ApplyDropView(&p);
      break;
    default:
      if (NormalTableAction(job.type)) {
        st = ApplyNormalTableDdl(&p);
      } else {
        ++stats_.unknown_action;
        st = ApplyUnknown(&p);
      }
      break;
  }
  if (!st.ok()) {
    return st.WithContext(fmt::format("DDL job {} ({}) finished at {}", job.id,
                                      model::ActionTypeName(job.type), ts.value()));
  }
  last_finished_ts_ = ts;
  if (skip) {
    ++stats_.skipped;
    return event::DdlEventPtr();
  }
  Commit(&p);
  ++stats_.applied;
  return events_.back();
}

void SchemaCatalog::Commit(Pending* p) {
  auto ev = std::make_shared<const event::DdlEvent>(std::move(p->ev));
  events_.push_back(ev);
  for (int64_t id : p->history) {
    std::vector<Ts>& h = table_history_[id];
    if (h.empty() || h.back() != p->ts) h.push_back(p->ts);
  }
  if (p->trigger) trigger_history_.push_back(p->ts);
}

// --- Lookups -------------------------------------------------------------

Result<const SchemaCatalog::Db*> SchemaCatalog::RequireDb(const Pending& p, int64_t id) const {
  auto it = dbs_.find(id);
  if (it == dbs_.end()) return Corruption(fmt::format("unknown database {}", id));
  return &it->second;
}

Result<const SchemaCatalog::Table*> SchemaCatalog::RequireTable(const Pending& p,
                                                                int64_t id) const {
  const Table* t = FindTable(id);
  if (t == nullptr) return Corruption(fmt::format("unknown table {}", id));
  return t;
}

Result<const model::TableInfo*> SchemaCatalog::RequireTableInfo(const Pending& p) const {
  const model::TableInfo* info = p.job->FinishedTableInfo();
  if (info == nullptr) return Corruption("the job carries no TableInfo");
  return info;
}

const SchemaCatalog::Table* SchemaCatalog::FindTable(int64_t id) const {
  auto it = tables_.find(id);
  return it == tables_.end() ? nullptr : &it->second;
}

const std::string& SchemaCatalog::DbName(int64_t id) const {
  static const std::string kEmpty;
  auto it = dbs_.find(id);
  return it == dbs_.end() ? kEmpty : it->second.info.name.original;
}

// --- Mutations -----------------------------------------------------------

void SchemaCatalog::PutDb(const model::DBInfo& info) {
  Db& db = dbs_[info.id];
  db.info = info;
}

void SchemaCatalog::DropDb(int64_t id, Ts ts) {
  auto it = dbs_.find(id);
  if (it == dbs_.end()) return;
  const std::set<int64_t> tables = it->second.tables;
  for (int64_t t : tables) DropTable(t, ts);
  dbs_.erase(id);
}

event::TableSchemaPtr SchemaCatalog::PutTable(int64_t schema_id, model::TableInfo info, Ts ts) {
  std::vector<int64_t> old_phys;
  auto existing = tables_.find(info.id);
  if (existing != tables_.end()) {
    if (existing->second.physical) old_phys = existing->second.info.PhysicalTableIds();
    if (existing->second.schema_id != schema_id) {
      auto old_db = dbs_.find(existing->second.schema_id);
      if (old_db != dbs_.end()) old_db->second.tables.erase(info.id);
    }
  }
  auto db = dbs_.find(schema_id);
  if (db != dbs_.end()) db->second.tables.insert(info.id);

  Table t;
  t.schema_id = schema_id;
  t.physical = !info.IsView() && !info.IsSequence();
  std::vector<int64_t> new_phys;
  if (t.physical) {
    new_phys = info.PhysicalTableIds();
    Result<event::TableSchemaPtr> made =
        event::TableSchema::Make(DbName(schema_id), schema_id, info, ts);
    if (made.ok()) {
      t.schema = made.value();
    } else {
      t.schema_status = made.status().WithContext(fmt::format("table {}", info.id));
      LOG_WARN("schema store: no schema for table {} at {}: {}", info.id, ts.value(),
               t.schema_status.ToString());
    }
  }
  for (int64_t id : old_phys) {
    if (std::find(new_phys.begin(), new_phys.end(), id) == new_phys.end()) AbsentVersion(id, ts);
  }
  for (int64_t id : new_phys) {
    Version v;
    v.ts = ts;
    v.exists = true;
    v.schema_id = schema_id;
    v.schema_name = DbName(schema_id);
    v.table_name = info.name.original;
    v.schema = t.schema;
    v.status = t.schema_status;
    PushVersion(id, std::move(v));
  }
  t.info = std::move(info);
  event::TableSchemaPtr schema = t.schema;
  tables_[t.info.id] = std::move(t);
  return schema;
}

void SchemaCatalog::DropTable(int64_t id, Ts ts) {
  auto it = tables_.find(id);
  if (it == tables_.end()) return;
  if (it->second.physical) {
    for (int64_t pid : it->second.info.PhysicalTableIds()) AbsentVersion(pid, ts);
  }
  auto db = dbs_.find(it->second.schema_id);
  if (db != dbs_.end()) db->second.tables.erase(id);
  tables_.erase(it);
}

void SchemaCatalog::PushVersion(int64_t physical_id, Version v) {
  std::vector<Version>& vs = versions_[physical_id];
  if (!vs.empty() && vs.back().ts == v.ts) {
    vs.back() = std::move(v);  // Two changes in one job: the last one wins.
  } else {
    vs.push_back(std::move(v));
  }
}

void SchemaCatalog::AbsentVersion(int64_t physical_id, Ts ts) {
  auto it = versions_.find(physical_id);
  if (it == versions_.end() || it->second.empty()) return;
  if (!it->second.back().exists) return;
  Version v;
  v.ts = ts;
  PushVersion(physical_id, std::move(v));
}

// --- Event helpers -------------------------------------------------------

std::vector<event::TableRef> SchemaCatalog::Refs(int64_t schema_id, const model::TableInfo& info,
                                                 const std::vector<int64_t>& ids) const {
  std::vector<event::TableRef> refs;
  refs.reserve(ids.size());
  for (int64_t id : ids) refs.push_back({schema_id, id, DbName(schema_id), info.name.original});
  return refs;
}

std::vector<int64_t> SchemaCatalog::PhysicalIdsOfDb(int64_t schema_id) const {
  std::vector<int64_t> ids;
  auto db = dbs_.find(schema_id);
  if (db == dbs_.end()) return ids;
  for (int64_t t : db->second.tables) {
    const Table* table = FindTable(t);
    if (table == nullptr || !table->physical) continue;
    for (int64_t id : table->info.PhysicalTableIds()) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<int64_t> SchemaCatalog::AllPhysicalIdsNow() const {
  std::vector<int64_t> ids;
  for (const auto& [id, table] : tables_) {
    if (!table.physical) continue;
    for (int64_t pid : table.info.PhysicalTableIds()) ids.push_back(pid);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// --- Queries -------------------------------------------------------------

Result<event::TableSchemaPtr> SchemaCatalog::GetTableSchema(int64_t table_id, Ts ts) const {
  auto it = versions_.find(table_id);
  if (it != versions_.end()) {
    const std::vector<Version>& vs = it->second;
    auto next =
        std::upper_bound(vs.begin(), vs.end(), ts, [](Ts t, const Version& v) { return t < v.ts; });
    if (next != vs.begin()) {
      const Version& v = *std::prev(next);
      if (v.exists) {
        if (!v.status.ok()) return v.status;
        return v.schema;
      }
    }
  }
  return NotFound(fmt::format("table {} does not exist at {}", table_id, ts.value()));
}

std::vector<event::TableRef> SchemaCatalog::AllPhysicalTables(Ts ts) const {
  std::vector<event::TableRef> out;
  for (const auto& [id, vs] : versions_) {
    auto next =
        std::upper_bound(vs.begin(), vs.end(), ts, [](Ts t, const Version& v) { return t < v.ts; });
    if (next == vs.begin()) continue;
    const Version& v = *std::prev(next);
    if (!v.exists) continue;
    out.push_back({v.schema_id, id, v.schema_name, v.table_name});
  }
  std::sort(out.begin(), out.end(), [](const event::TableRef& a, const event::TableRef& b) {
    return a.table_id < b.table_id;
  });
  return out;
}

std::vector<event::DdlEventPtr> SchemaCatalog::TableDdlEvents(int64_t table_id, Ts from,
                                                              Ts to) const {
  const std::vector<Ts>* history = &trigger_history_;
  if (table_id != kDdlSpanTableId) {
    auto it = table_history_.find(table_id);
    if (it == table_history_.end()) return {};
    history = &it->second;
  }
  std::vector<event::DdlEventPtr> out;
  auto begin = std::upper_bound(history->begin(), history->end(), from);
  auto end = std::upper_bound(history->begin(), history->end(), to);
  for (auto t = begin; t < end; ++t) {
    auto ev =
        std::lower_bound(events_.begin(), events_.end(), *t,
                         [](const event::DdlEventPtr& e, Ts v) { return e->finished_ts < v; });
    if (ev != events_.end() && (*ev)->finished_ts == *t) out.push_back(*ev);
  }
  return out;
}

std::vector<event::DdlEventPtr> SchemaCatalog::AllDdlEvents(Ts from, Ts to) const {
  auto by_ts = [](const event::DdlEventPtr& e, Ts v) { return e->finished_ts <= v; };
  auto begin = std::partition_point(events_.begin(), events_.end(),
                                    [&](const event::DdlEventPtr& e) { return by_ts(e, from); });
  auto end = std::partition_point(events_.begin(), events_.end(),
                                  [&](const event::DdlEventPtr& e) { return by_ts(e, to); });
  if (begin >= end) return {};
  return std::vector<event::DdlEventPtr>(begin, end);
}

std::vector<int64_t> SchemaCatalog::KnownPhysicalIds() const {
  std::vector<int64_t> ids;
  for (const auto& [id, vs] : versions_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace sluice::schemastore
