// SchemaCatalog: the multi-version schema built from a meta snapshot and the
// finished DDL jobs after it. It keeps
//   - the current databases and tables (to apply the next job),
//   - per physical table id, its versions sorted by ts (schema or "absent"),
//   - every DDL event in finished-ts order, and per physical table (and for
//     the table-trigger dispatcher, id kDdlSpanTableId) the finished ts of the
//     events it must see,
// following TiCDC's logservice/schemastore handlers action by action.
// Answers ignore the resolved ts: the caller (SchemaStore) guards that.
// Not thread-safe: the owner serialises every call.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codec/model/db_info.h"
#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"
#include "event/table_schema.h"
#include "kvclient/meta_reader.h"

namespace sluice::schemastore {

// The table-trigger dispatcher's table id (TiCDC DDLSpanTableID): a DDL whose
// BlockedTables lists it, or whose influence is a database or all tables,
// goes through the table-trigger dispatcher.
inline constexpr int64_t kDdlSpanTableId = 0;

struct CatalogStats {
  uint64_t applied = 0;         // Jobs that produced an event.
  uint64_t skipped = 0;         // System schema, duplicate, ignored action, schema version 0.
  uint64_t unknown_action = 0;  // Applied through the generic path.
};

class SchemaCatalog {
 public:
  SchemaCatalog() = default;
  SchemaCatalog(const SchemaCatalog&) = delete;
  SchemaCatalog& operator=(const SchemaCatalog&) = delete;

  // Loads the schema valid at snap.ts: every database and table outside the
  // system schemas. Views and sequences are kept by name but have no
  // physical table. Call once, first.
  Status Bootstrap(const kvclient::MetaSnapshot& snap);

  // Applies one Done job whose binlog.finished_ts is its commit ts. Returns
  // the event, or nullptr when the job is skipped (schema version 0, not
  // after the last applied job, a system schema, an action TiCDC ignores, a
  // CREATE TABLE of a table that exists). Corruption when the job does not
  // fit the schema (an unknown database or table, a missing TableInfo); then
  // nothing changed.
  Result<event::DdlEventPtr> Apply(const model::Job& job);

  Ts snapshot_ts() const { return snapshot_ts_; }
  Ts last_finished_ts() const { return last_finished_ts_; }
  const CatalogStats& stats() const { return stats_; }

  // The newest version of physical table `table_id` at or below `ts`.
  // NotFound when it does not exist at ts; the error of TableSchema::Make
  // when that version's schema could not be built.
  Result<event::TableSchemaPtr> GetTableSchema(int64_t table_id, Ts ts) const;
  // Physical tables existing at ts, in id order.
  std::vector<event::TableRef> AllPhysicalTables(Ts ts) const;
  // Events with finished ts in (from, to] that physical table `table_id`
  // (or the table-trigger dispatcher for kDdlSpanTableId) must see.
  std::vector<event::DdlEventPtr> TableDdlEvents(int64_t table_id, Ts from, Ts to) const;
  std::vector<event::DdlEventPtr> AllDdlEvents(Ts from, Ts to) const;

  // Every physical table id ever known (tests).
  std::vector<int64_t> KnownPhysicalIds() const;

 private:
  struct Db {
    model::DBInfo info;
    std::set<int64_t> tables;  // Logical ids (views included).
  };
  struct Table {
    int64_t schema_id = 0;
    model::TableInfo info;
    bool physical = true;  // False for views and sequences.
    event::TableSchemaPtr schema;
    Status schema_status;  // Why `schema` is null for a physical table.
  };
  struct Version {
    Ts ts;
    bool exists = false;
    int64_t schema_id = 0;
    std::string schema_name;
    std::string table_name;
    event::TableSchemaPtr schema;
    Status status;
  };
  // What one job does, built by a handler before the catalog changes.
  struct Pending {
    const model::Job* job = nullptr;
    Ts ts;
    event::DdlEvent ev;
    std::vector<int64_t> history;  // Physical ids whose table history gets the event.
    bool trigger = false;          // The table-trigger dispatcher's history gets it.
  };

  // Handlers (catalog_apply.cc). Each checks everything it needs first,
  // returns Corruption without changing anything, then changes the catalog.
  Status ApplyCreateSchema(Pending* p);
  Status ApplyDropSchema(Pending* p);
  Status ApplyModifySchema(Pending* p);
  Status ApplyCreateTable(Pending* p, bool* skip);
  Status ApplyCreateTables(Pending* p, bool* skip);
  Status ApplyDropTable(Pending* p);
  Status ApplyTruncateTable(Pending* p);
  Status ApplyRenameTable(Pending* p);
  Status ApplyRenameTables(Pending* p);
  Status ApplyNormalTableDdl(Pending* p);
  Status ApplyPartitionDdl(Pending* p);
  Status ApplyRepartition(Pending* p);
  Status ApplyExchangePartition(Pending* p);
  Status ApplyCreateView(Pending* p);
  Status ApplyDropView(Pending* p);
  Status ApplyUnknown(Pending* p);

  // Lookups that fail with Corruption naming the job.
  Result<const Db*> RequireDb(const Pending& p, int64_t id) const;
  Result<const Table*> RequireTable(const Pending& p, int64_t id) const;
  Result<const model::TableInfo*> RequireTableInfo(const Pending& p) const;
  const Table* FindTable(int64_t id) const;
  const std::string& DbName(int64_t id) const;

  // Mutations (cannot fail).
  void PutDb(const model::DBInfo& info);
  void DropDb(int64_t id, Ts ts);
  // Creates or replaces logical table info.id in `schema_id`: new versions
  // for its physical tables at ts, "absent" versions for physical tables it
  // no longer has. Returns the new schema (null for views or on failure).
  event::TableSchemaPtr PutTable(int64_t schema_id, model::TableInfo info, Ts ts);
  void DropTable(int64_t id, Ts ts);
  void PushVersion(int64_t physical_id, Version v);
  void AbsentVersion(int64_t physical_id, Ts ts);

  // Event helpers.
  std::vector<event::TableRef> Refs(int64_t schema_id, const model::TableInfo& info,
                                    const std::vector<int64_t>& ids) const;
  std::vector<int64_t> PhysicalIdsOfDb(int64_t schema_id) const;
  std::vector<int64_t> AllPhysicalIdsNow() const;
  void Commit(Pending* p);

  Ts snapshot_ts_;
  Ts last_finished_ts_;
  std::map<int64_t, Db> dbs_;
  std::map<int64_t, Table> tables_;  // Logical id -> table.
  std::set<int64_t> system_db_ids_;  // Databases left out (system schemas).
  std::unordered_map<int64_t, std::vector<Version>> versions_;  // Physical id -> versions.
  std::vector<event::DdlEventPtr> events_;                      // By finished ts.
  std::unordered_map<int64_t, std::vector<Ts>> table_history_;
  std::vector<Ts> trigger_history_;
  CatalogStats stats_;
};

}  // namespace sluice::schemastore
