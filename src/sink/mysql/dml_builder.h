// Builds the SQL that writes a batch of DML transactions as one downstream
// transaction, the way TiCDC's MySQL writer does:
// - the transactions are grouped by table, keeping their order within a
//   table (the batch is one downstream transaction, and rows of different
//   tables commute inside it);
// - consecutive transactions of one table with the same safe-mode flag form
//   a run, as long as no row identity repeats inside the run (a repeat
//   starts a new run, so changes to one row keep their order);
// - a run is written as DELETEs, then UPDATEs, then INSERTs:
//   DELETE FROM t WHERE (k1,k2) IN ((..),(..)) for keyed tables (one
//   statement per row with `IS NULL` and LIMIT 1 for tables without a key),
//   UPDATE per row, and multi-row INSERT INTO t (..) VALUES (..),(..);
// - in safe mode INSERT becomes REPLACE and an UPDATE becomes DELETE of the
//   old image plus REPLACE of the new one, so re-applied rows are absorbed.
// Generated columns are never written. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "event/events.h"
#include "sink/mysql/sql_value.h"

namespace sluice::sink {

struct DmlBuildOptions {
  SqlFlavor flavor = SqlFlavor::kMysql;
  // Multi-row statements (URI batch-dml-enable); false writes each row with
  // its own statement.
  bool batch = true;
  size_t max_rows_per_statement = 256;
  // A statement stops taking rows once it is this long (it always holds at
  // least one row).
  size_t max_statement_bytes = size_t{4} << 20;
};

// One transaction of a batch and whether it is written in safe mode.
struct BatchItem {
  const event::DmlEvent* event = nullptr;
  bool safe_mode = false;
};

// The table whose statements an event's rows join: its logical table (the
// partitions of a table share statements); 0 without a schema.
int64_t StatementTableOf(const event::DmlEvent& event);

// Appends to `out` the statements that write `items` in order. Corruption
// for a row whose width does not match its schema; the errors of
// AppendLiteral for values that have no SQL form.
Status BuildDmlStatements(const std::vector<BatchItem>& items, const DmlBuildOptions& options,
                          std::vector<std::string>* out);

}  // namespace sluice::sink
