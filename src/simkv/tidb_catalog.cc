#include "simkv/tidb_catalog.h"

#include <algorithm>

#include "codec/metakey.h"
#include "simkv/tidb_tables.h"

namespace sluice::simkv {

std::string DbKey(int64_t db_id) { return "DB:" + std::to_string(db_id); }
std::string TableKey(int64_t table_id) { return "Table:" + std::to_string(table_id); }

TidbCatalog::TidbCatalog(int64_t first_global_id) : next_global_id_(first_global_id) {}

void TidbCatalog::Bootstrap(MutationSet* txn) {
  txn->Put(codec::EncodeMetaStringKey(kNextGlobalIdKey), std::to_string(next_global_id_ - 1));
  GenSchemaVersion(txn);
  PutDatabase(MysqlDbInfo(), txn);
  PutTable(kMysqlDbId, DdlJobTableInfo(), txn);
  bootstrapped_ = true;
}

std::vector<int64_t> TidbCatalog::GenGlobalIds(int n, MutationSet* txn) {
  std::vector<int64_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(next_global_id_++);
  txn->Put(codec::EncodeMetaStringKey(kNextGlobalIdKey), std::to_string(next_global_id_ - 1));
  return ids;
}

int64_t TidbCatalog::GenSchemaVersion(MutationSet* txn) {
  ++schema_version_;
  txn->Put(codec::EncodeMetaStringKey(kSchemaVersionKey), std::to_string(schema_version_));
  return schema_version_;
}

void TidbCatalog::PutDatabase(const model::DBInfo& db, MutationSet* txn) {
  dbs_[db.id] = db;
  txn->Put(codec::EncodeMetaHashFieldKey(kDbsKey, DbKey(db.id)), model::ToJson(db));
}

void TidbCatalog::PutTable(int64_t db_id, const model::TableInfo& table, MutationSet* txn) {
  tables_[table.id] = TableEntry{db_id, table};
  txn->Put(codec::EncodeMetaHashFieldKey(DbKey(db_id), TableKey(table.id)), model::ToJson(table));
}

void TidbCatalog::DropDatabase(int64_t db_id, MutationSet* txn) {
  for (int64_t table_id : TablesOf(db_id)) DropTable(db_id, table_id, txn);
  dbs_.erase(db_id);
  txn->Delete(codec::EncodeMetaHashFieldKey(kDbsKey, DbKey(db_id)));
}

void TidbCatalog::DropTable(int64_t db_id, int64_t table_id, MutationSet* txn) {
  tables_.erase(table_id);
  txn->Delete(codec::EncodeMetaHashFieldKey(DbKey(db_id), TableKey(table_id)));
}

const model::DBInfo* TidbCatalog::FindDatabase(int64_t db_id) const {
  auto it = dbs_.find(db_id);
  return it == dbs_.end() ? nullptr : &it->second;
}

const model::DBInfo* TidbCatalog::FindDatabaseByName(std::string_view name) const {
  std::string lower = model::AsciiLower(name);
  for (const auto& [id, db] : dbs_) {
    if (db.name.lower == lower) return &db;
  }
  return nullptr;
}

const TidbCatalog::TableEntry* TidbCatalog::FindTable(int64_t table_id) const {
  auto it = tables_.find(table_id);
  return it == tables_.end() ? nullptr : &it->second;
}

const TidbCatalog::TableEntry* TidbCatalog::FindTableByName(int64_t db_id,
                                                            std::string_view name) const {
  std::string lower = model::AsciiLower(name);
  for (const auto& [id, entry] : tables_) {
    if (entry.db_id == db_id && entry.info.name.lower == lower) return &entry;
  }
  return nullptr;
}

std::vector<int64_t> TidbCatalog::TablesOf(int64_t db_id) const {
  std::vector<int64_t> out;
  for (const auto& [id, entry] : tables_) {
    if (entry.db_id == db_id) out.push_back(id);
  }
  return out;
}

std::vector<int64_t> TidbCatalog::UserDatabases() const {
  std::vector<int64_t> out;
  for (const auto& [id, db] : dbs_) {
    if (id != kMysqlDbId) out.push_back(id);
  }
  return out;
}

std::vector<int64_t> TidbCatalog::UserTables() const {
  std::vector<int64_t> out;
  for (const auto& [id, entry] : tables_) {
    if (entry.db_id != kMysqlDbId) out.push_back(id);
  }
  return out;
}

const TidbCatalog::TableEntry* TidbCatalog::FindByPhysicalId(int64_t physical_id) const {
  if (const TableEntry* entry = FindTable(physical_id)) return entry;
  for (const auto& [id, entry] : tables_) {
    if (!entry.info.IsPartitioned()) continue;
    const auto& defs = entry.info.partition->definitions;
    if (std::any_of(defs.begin(), defs.end(),
                    [&](const model::PartitionDefinition& d) { return d.id == physical_id; })) {
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace sluice::simkv
