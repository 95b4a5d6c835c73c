// The mounter: turns one raw row change read from the event store into an
// event::RowChange decoded with the table schema valid at its commit (TiCDC
// pkg/common/event/mounter.go), plus the unique-key check TiCDC's event
// service uses to split an update that changes a key into a delete and an
// insert (pkg/eventservice/event_scanner.go, dmlProcessor.appendRow). Pure
// functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/kv_entry.h"
#include "common/status.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::eventservice {

// Decodes `entry`, a record key of physical table `physical_table_id`, with
// `schema`:
//   put without old value -> kInsert (row),
//   put with old value    -> kUpdate (row and pre_row),
//   delete                -> kDelete (pre_row).
// Row formats v1 and v2 are both read; columns a row lacks get their origin
// default, handle columns come from the key (int or common handle). Every
// datum owns its bytes, so the result outlives `entry`. A delete without an
// old value (a subscription that did not ask for old values) gets a pre_row
// holding the handle columns only, the others null.
// Errors keep the decoder's code (kCorruption for bytes that do not decode,
// kInvalidArgument for a column type the decoder does not support) and name
// the physical table id and the commit ts.
Result<event::RowChange> MountRow(const RawKvEntry& entry, const event::TableSchema& schema,
                                  int64_t physical_table_id);

// Offsets into schema.columns() of every column that is part of the primary
// key or of a unique index, or carries the unique-key flag (TiCDC's
// TableInfo.GetIndexColumns plus UniqueKeyFlag columns), ascending.
std::vector<int> UniqueKeyColumns(const event::TableSchema& schema);

// True when an update changes any column of `uk_columns` (TiCDC IsUKChanged):
// the sink could not apply it as one UPDATE without risking a key conflict.
bool UniqueKeyChanged(const event::RowChange& update, const std::vector<int>& uk_columns);

// The delete half (pre_row) and the insert half (row) of an update.
std::pair<event::RowChange, event::RowChange> SplitUpdate(event::RowChange update);

}  // namespace sluice::eventservice
