// Rebuilds the final state of the tables in a storage-sink directory (what a
// consumer applying the files to a database would end up with): rows of each
// table replayed in table-version order, TRUNCATE / DROP / CREATE TABLE
// clearing the table, DROP DATABASE dropping the tables it held. Rows are
// laid out as the expected table of the same name (columns by name; a column
// a row lacks takes its default). An expected table without rows that has no
// files counts as present and empty (the sink writes nothing for a table
// that existed before the changefeed and never changed). Pure function.
#pragma once

#include <string>

#include "checker/table_state.h"
#include "common/status.h"
#include "sink/storage/storage_reader.h"

namespace sluice::checker {

// Errors: the reader's (Corruption, IoError).
Result<DatabaseState> ReadStorageState(const std::string& root,
                                       const sink::storage::ReaderOptions& options,
                                       const DatabaseState& expected);

}  // namespace sluice::checker
