// The events that flow from the event service through the dispatchers to the
// sinks: DML transactions (or pieces of one), DDL (block) events and resolved
// marks. Row images are owned datums in TableSchema::columns() order.
// Value types; an event handed to a sink is shared read-only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codec/datum.h"
#include "codec/model/types.h"
#include "common/strong_id.h"
#include "event/table_schema.h"

namespace sluice::event {

// The table id that stands for a changefeed's table-trigger (DDL span)
// dispatcher, as in TiCDC (DDLSpanTableID): in DDL events' blocked tables,
// block statuses, event-service registrations and the MySQL sink's `ddl_ts`
// rows.
inline constexpr int64_t kTableTriggerTableId = 0;

enum class RowKind : uint8_t { kInsert, kUpdate, kDelete };
std::string_view RowKindName(RowKind kind);  // "insert", "update", "delete"

struct RowChange {
  RowKind kind = RowKind::kInsert;
  std::vector<codec::Datum> row;      // After image: insert and update.
  std::vector<codec::Datum> pre_row;  // Before image: update and delete.
  std::string raw_key;                // The TiKV record key of the row.

  // Bytes of row data (datum payloads of both images), for quotas and
  // throughput figures.
  size_t ApproximateBytes() const;
};

// One transaction of one table span, or one piece of a transaction too large
// for the dispatcher's memory budget (pieces share commit ts and arrive in
// order; `last_piece` marks the end of the transaction).
struct DmlEvent {
  DispatcherId dispatcher_id;
  int64_t physical_table_id = 0;  // The partition id for a partitioned table.
  TableSchemaPtr schema;
  Ts start_ts;
  Ts commit_ts;
  std::vector<RowChange> rows;
  uint32_t piece = 0;
  bool last_piece = true;

  // Bytes of row data (datum payloads), for quotas and throughput figures.
  size_t ApproximateBytes() const;

  // Callbacks run once, by the sink, when every row is durably written.
  void AddPostFlush(std::function<void()> fn) { post_flush_.push_back(std::move(fn)); }
  void PostFlush();

 private:
  std::vector<std::function<void()>> post_flush_;
  std::atomic<bool> flushed_{false};
};
using DmlEventPtr = std::shared_ptr<DmlEvent>;

// How far a DDL reaches (TiCDC InfluenceType): its own tables, a whole
// database, or every table.
enum class InfluenceType : uint8_t { kNormal, kDb, kAll };

struct BlockedTables {
  InfluenceType influence = InfluenceType::kNormal;
  std::vector<int64_t> table_ids;  // kNormal: the physical tables it blocks.
  int64_t schema_id = 0;           // kDb: the database.
};

struct TableRef {
  int64_t schema_id = 0;
  int64_t table_id = 0;  // Physical table id.
  std::string schema_name;
  std::string table_name;
  bool operator==(const TableRef&) const = default;
};

// A finished DDL job as the data path sees it.
struct DdlEvent {
  int64_t job_id = 0;
  model::ActionType type = model::ActionType::kNone;
  Ts start_ts;     // The job's start ts.
  Ts finished_ts;  // Commit ts of the job's final transaction.
  int64_t schema_version = 0;
  std::string query;  // As TiDB recorded it (one statement).
  int64_t schema_id = 0;
  std::string schema_name;
  int64_t table_id = 0;
  std::string table_name;
  std::string prev_schema_name;  // RENAME TABLE: the old names.
  std::string prev_table_name;
  TableSchemaPtr table_schema;  // The table after the job, when one remains.
  BlockedTables blocked;
  std::vector<TableRef> tables_to_add;
  std::vector<int64_t> tables_to_drop;

  // Goes through the maintainer's barrier: reaches beyond one table.
  bool NeedsBarrier() const {
    return blocked.influence != InfluenceType::kNormal || blocked.table_ids.size() > 1;
  }
};
using DdlEventPtr = std::shared_ptr<const DdlEvent>;

}  // namespace sluice::event
