// MysqlSinkConfig: what a mysql:// or tidb:// sink URI says, with TiCDC's
// parameter names and defaults:
//   mysql://user:pass@host:port/?worker-count=16&max-txn-row=256&safe-mode=false
// Parameters: worker-count (1..1024, default 16), max-txn-row (1..2048,
// default 256), safe-mode (default false), batch-dml-enable (default true),
// multi-stmt-enable (default true), enable-ddl-ts (default true),
// read-timeout / write-timeout / timeout (default 2m), ssl-ca, ssl-cert,
// ssl-key (with mysql+ssl / tidb+ssl), time-zone (accepted; rows are always
// written in UTC, see README). User defaults to root, port to 4000. Unknown
// parameters are ignored, as TiCDC does. Value type.
#pragma once

#include "common/status.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/sink_uri.h"

namespace sluice::sink {

struct MysqlSinkConfig {
  MysqlConnectOptions connect;
  bool tidb_scheme = false;  // tidb:// or tidb+ssl://
  int worker_count = 16;
  int max_txn_row = 256;
  bool safe_mode = false;
  bool batch_dml = true;
  bool multi_stmt = true;
  bool enable_ddl_ts = true;

  // InvalidArgument for another scheme, a missing host or a bad parameter.
  static Result<MysqlSinkConfig> FromUri(const SinkUri& uri);
};

}  // namespace sluice::sink
