// TidbCatalog: the schema a simulated TiDB keeps, and the meta ('m') keys it
// writes for every change, exactly as TiDB's meta package does
// (pkg/meta/meta.go, pkg/structure):
//
//   string "NextGlobalID"      -> decimal text of the largest id handed out
//   string "SchemaVersionKey"  -> decimal text of the global schema version
//   hash "DBs", field "DB:<id>"          -> DBInfo JSON
//   hash "DB:<db id>", field "Table:<id>" -> TableInfo JSON
//
// Writes are hash-field sets and deletes only (current TiDB keeps no hash
// meta key); dropping a database deletes every field of its hash, as
// TxStructure.HClear does. Ids come from one global allocator, like
// Mutator.GenGlobalIDs, for databases, tables, partitions and DDL jobs alike.
//
// Every mutating call updates the in-memory schema at once and appends its
// key writes to the caller's MutationSet; the caller commits that set as one
// transaction (a failed commit leaves the two out of step, which the owner
// treats as fatal). Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/db_info.h"
#include "codec/model/table_info.h"
#include "simkv/txn_executor.h"

namespace sluice::simkv {

inline constexpr std::string_view kNextGlobalIdKey = "NextGlobalID";
inline constexpr std::string_view kSchemaVersionKey = "SchemaVersionKey";
inline constexpr std::string_view kDbsKey = "DBs";

// "DB:<id>" and "Table:<id>" (meta.DBkey, meta.TableKey).
std::string DbKey(int64_t db_id);
std::string TableKey(int64_t table_id);

class TidbCatalog {
 public:
  struct TableEntry {
    int64_t db_id = 0;
    model::TableInfo info;
  };

  // The first id GenGlobalIds hands out is `first_global_id`.
  explicit TidbCatalog(int64_t first_global_id = 100);

  // The system schema TiDB bootstraps before any user DDL: the global id and
  // schema version keys, the `mysql` database and mysql.tidb_ddl_job.
  void Bootstrap(MutationSet* txn);
  bool bootstrapped() const { return bootstrapped_; }

  // Mutator.GenGlobalIDs(n): n consecutive new ids.
  std::vector<int64_t> GenGlobalIds(int n, MutationSet* txn);
  // Mutator.GenSchemaVersion: the next schema version.
  int64_t GenSchemaVersion(MutationSet* txn);
  int64_t schema_version() const { return schema_version_; }

  // Creates or replaces a database / a table under `db_id`.
  void PutDatabase(const model::DBInfo& db, MutationSet* txn);
  void PutTable(int64_t db_id, const model::TableInfo& table, MutationSet* txn);
  // Removes a database and every table in it, or one table.
  void DropDatabase(int64_t db_id, MutationSet* txn);
  void DropTable(int64_t db_id, int64_t table_id, MutationSet* txn);

  const model::DBInfo* FindDatabase(int64_t db_id) const;
  const model::DBInfo* FindDatabaseByName(std::string_view name) const;
  const TableEntry* FindTable(int64_t table_id) const;
  const TableEntry* FindTableByName(int64_t db_id, std::string_view name) const;
  // The tables of a database, in id order.
  std::vector<int64_t> TablesOf(int64_t db_id) const;
  // Databases other than `mysql`, in id order.
  std::vector<int64_t> UserDatabases() const;
  // Tables outside `mysql`, in id order.
  std::vector<int64_t> UserTables() const;
  // The logical table holding physical table (or partition) `physical_id`.
  const TableEntry* FindByPhysicalId(int64_t physical_id) const;

 private:
  int64_t next_global_id_;
  int64_t schema_version_ = 0;
  bool bootstrapped_ = false;
  std::map<int64_t, model::DBInfo> dbs_;
  std::map<int64_t, TableEntry> tables_;
};

}  // namespace sluice::simkv
