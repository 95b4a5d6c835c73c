// SchemaReader: what the data path asks of the schema store. The schema store
// implements it; tests of the layers above use a fake with the same contract.
//
// All answers are for commit ts at or below resolved_ts(): asking beyond it
// gives Unavailable (retry later), never a guess. Table ids are physical ids
// (a partition id for a partitioned table). Thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::schemastore {

class SchemaReader {
 public:
  virtual ~SchemaReader() = default;

  // Every DDL with finished ts <= this is known.
  virtual Ts resolved_ts() const = 0;

  // The schema of physical table `table_id` valid at `ts` (the newest version
  // with version <= ts). NotFound when the table does not exist at ts.
  virtual Result<event::TableSchemaPtr> GetTableSchema(int64_t table_id, Ts ts) const = 0;

  // Every user table (physical ids, partitions expanded) that exists at ts,
  // in id order; system schemas excluded.
  virtual Result<std::vector<event::TableRef>> AllPhysicalTables(Ts ts) const = 0;

  // DDL events in finished-ts order with finished ts in (from, to] that a
  // dispatcher of physical table `table_id` must see (the DDLs that change,
  // block or drop it). Table id 0 (TiCDC's DDL span, kDdlSpanTableId) is the
  // table-trigger dispatcher: the DDLs whose BlockedTables list id 0 or
  // reach a whole database or every table (TiCDC's table-trigger history).
  virtual Result<std::vector<event::DdlEventPtr>> TableDdlEvents(int64_t table_id, Ts from,
                                                                 Ts to) const = 0;
  // Every DDL event in (from, to], whatever it blocks.
  virtual Result<std::vector<event::DdlEventPtr>> AllDdlEvents(Ts from, Ts to) const = 0;

  // Calls `fn` (from the schema store's thread) whenever resolved_ts()
  // advances. Returns a handle for RemoveResolvedListener.
  virtual uint64_t AddResolvedListener(std::function<void(Ts)> fn) = 0;
  virtual void RemoveResolvedListener(uint64_t handle) = 0;
};

}  // namespace sluice::schemastore
