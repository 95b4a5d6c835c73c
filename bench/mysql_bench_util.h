// MariaDB helpers of the benchmarks: connections with the sink's session
// settings, statements, counters of SHOW GLOBAL STATUS, the server's pid and
// CPU, and a wait for a quiet server before each timed run. Not thread-safe
// per connection (libmariadb's rule).
#pragma once

#include <mysql.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sink/sink_uri.h"

namespace sluice::bench {

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using Conn = std::unique_ptr<MYSQL, MysqlCloser>;

Status MysqlError(MYSQL* m, std::string_view what);
// A connection with the session settings the sink uses.
Result<Conn> Connect(const sink::SinkUri& uri);
// Runs `sql` (one or more statements), discarding results.
Status Exec(MYSQL* m, const std::string& sql);
// Column `column` of the first row `sql` returns ("" for none or NULL).
Result<std::string> QueryValue(MYSQL* m, const std::string& sql, unsigned column = 0);
// Rows of the tables named (each "`db`.`table`"), summed.
Result<uint64_t> CountRows(MYSQL* m, const std::vector<std::string>& tables);
// Empties the tables named (each "`db`.`table`").
Status Truncate(MYSQL* m, const std::vector<std::string>& tables);
// A counter of SHOW GLOBAL STATUS, e.g. Com_insert (INSERT statements run).
Result<uint64_t> GlobalStatus(MYSQL* m, std::string_view name);
// INSERT and REPLACE statements the server ran so far (safe mode writes
// REPLACE).
Result<uint64_t> WriteStatements(MYSQL* m);
// The server's pid, read through its pid file; 0 when the server is not
// local or does not say.
pid_t ServerPid(MYSQL* m);
// The process CPU seconds (user + system, all threads) of `pid`; -1 if
// unknown.
double ProcessCpuSeconds(pid_t pid);
// Each timed run starts on a quiet server. InnoDB writes a run's pages back
// in the background, at the default io capacity over many seconds, so that
// work (and the checkpoint flushing it can force) would land on whichever
// run comes next. innodb_max_dirty_pages_pct=0 makes the page cleaner flush
// every dirty page; once none is left (and the setting is restored) the wait
// goes on until the server used under 5 ms of CPU in a 100 ms window.
// Returns the seconds waited; past `limit` it stops waiting and says so.
Result<double> Quiesce(MYSQL* m, pid_t server_pid, std::chrono::seconds limit);

}  // namespace sluice::bench
