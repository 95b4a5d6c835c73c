// The downstream DDL progress table TiCDC keeps, tidb_cdc.ddl_ts_v1:
//   (ticdc_cluster_id, changefeed, ddl_ts, table_id, finished, is_syncpoint)
// with primary key (ticdc_cluster_id, changefeed, table_id). Before running a
// DDL the sink writes a row per affected table with finished = 0, after it
// finished = 1 (and deletes the rows of dropped tables). A restarted
// changefeed reads it to learn which DDLs already ran (so it does not run
// them again) and where each table must resume (TiCDC GetTableRecoveryInfo).
//
// The query builders are pure; DdlTsTable runs them on a connection it does
// not own and is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/sink.h"

namespace sluice::sink {

inline constexpr std::string_view kDdlTsSchema = "tidb_cdc";
inline constexpr std::string_view kDdlTsTable = "ddl_ts_v1";
// table_id of the row that records syncpoints (TiCDC syncPointMetaTableID).
inline constexpr int64_t kSyncpointMetaTableId = -1;

// The table ids a DDL records progress for: the tables it blocks (the
// table-trigger row for database- or cluster-wide DDLs) and the tables it
// creates.
std::vector<int64_t> DdlTsTableIds(const event::DdlEvent& ddl);

std::string CreateDdlTsTableSql();
// INSERT .. ON DUPLICATE KEY UPDATE of (ids, ts, finished).
std::string UpsertDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids, Ts ts, bool finished);
std::string DeleteDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids);
// SELECT table_id, ddl_ts, finished, is_syncpoint for the ids (and the
// syncpoint row).
std::string SelectDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids);

class DdlTsTable {
 public:
  DdlTsTable(std::string cluster_id, std::string changefeed_id)
      : cluster_(std::move(cluster_id)), changefeed_(std::move(changefeed_id)) {}

  // Creates tidb_cdc.ddl_ts_v1 if needed (once per instance).
  Status Ensure(MysqlConnection* conn);
  // True when the DDL at `ts` over `ids` ran to the end before: one of its
  // rows says finished at `ts`, or a row moved past `ts` (a later DDL of that
  // table started, which happens only after this one finished).
  Result<bool> AlreadyExecuted(MysqlConnection* conn, const std::vector<int64_t>& ids, Ts ts);
  Status WriteStarted(MysqlConnection* conn, const std::vector<int64_t>& ids, Ts ts);
  // Marks the DDL finished and forgets dropped tables, in one transaction.
  Status WriteFinished(MysqlConnection* conn, const std::vector<int64_t>& ids, Ts ts,
                       const std::vector<int64_t>& dropped);
  Result<std::vector<TableRecovery>> Recovery(MysqlConnection* conn,
                                              const std::vector<int64_t>& table_ids,
                                              const std::vector<Ts>& start_ts);
  // Deletes every row of this changefeed (when it is removed).
  Status RemoveAll(MysqlConnection* conn);

 private:
  struct Row {
    int64_t table_id = 0;
    uint64_t ddl_ts = 0;
    bool finished = false;
    bool is_syncpoint = false;
  };
  Result<std::vector<Row>> Read(MysqlConnection* conn, const std::vector<int64_t>& ids);

  const std::string cluster_;
  const std::string changefeed_;
  bool ensured_ = false;
};

}  // namespace sluice::sink
