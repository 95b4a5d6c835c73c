// Reads the user tables of a MySQL-compatible database (every schema except
// the system ones and Sluice's `tidb_cdc`) into a DatabaseState, using the
// layouts of `expected` for tables it knows (column order, key, BIT as
// integers) and reporting others as extra tables. Sessions use time zone
// +00:00, as the MySQL sink does. One connection; single-threaded.
#pragma once

#include <string>
#include <vector>

#include "checker/table_state.h"
#include "common/status.h"

namespace sluice::checker {

// `uri` is a sink URI: mysql://user:pass@host:port/. `schemas` limits the
// read to those schemas; empty = every user schema. Unavailable when the
// server cannot be reached; InvalidArgument for a bad URI; Corruption when
// an expected column is missing downstream.
Result<DatabaseState> ReadMysqlState(const std::string& uri, const DatabaseState& expected,
                                     const std::vector<std::string>& schemas = {});

// Runs `sql` in order on the MySQL-compatible server of sink URI `uri` (to
// prepare or inspect a downstream). Unavailable when it cannot connect;
// Internal naming the statement that failed.
Status ExecSql(const std::string& uri, const std::vector<std::string>& sql);

}  // namespace sluice::checker
