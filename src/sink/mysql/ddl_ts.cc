#include "sink/mysql/ddl_ts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "sink/mysql/mysql_error.h"
#include "sink/mysql/sql_value.h"

namespace sluice::sink {

namespace {

std::string TableName() { return fmt::format("{}.{}", kDdlTsSchema, kDdlTsTable); }

void AppendKey(std::string_view cluster, std::string_view changefeed, int64_t id,
               std::string* sql) {
  sql->push_back('(');
  AppendQuotedString(cluster, sql);
  sql->push_back(',');
  AppendQuotedString(changefeed, sql);
  sql->append(fmt::format(",{})", id));
}

bool ParseU64(const std::optional<std::string>& s, uint64_t* out) {
  if (!s.has_value() || s->empty()) return false;
  char* end = nullptr;
  *out = std::strtoull(s->c_str(), &end, 10);
  return end == s->c_str() + s->size();
}

bool Truthy(const std::optional<std::string>& s) { return s.has_value() && *s != "0"; }

}  // namespace

std::vector<int64_t> DdlTsTableIds(const event::DdlEvent& ddl) {
  std::vector<int64_t> ids = ddl.blocked.table_ids;
  if (ddl.blocked.influence != event::InfluenceType::kNormal || ids.empty()) {
    ids.push_back(event::kTableTriggerTableId);
  }
  for (const event::TableRef& t : ddl.tables_to_add) ids.push_back(t.table_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string CreateDdlTsTableSql() {
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {} ("
      "ticdc_cluster_id varchar(255), changefeed varchar(255), ddl_ts varchar(18), "
      "table_id bigint(21), finished bool, is_syncpoint bool, "
      "INDEX (ticdc_cluster_id, changefeed, table_id), "
      "PRIMARY KEY (ticdc_cluster_id, changefeed, table_id))",
      TableName());
}

std::string UpsertDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids, Ts ts, bool finished) {
  std::string sql = "INSERT INTO " + TableName() +
                    " (ticdc_cluster_id, changefeed, ddl_ts, table_id, finished, is_syncpoint)"
                    " VALUES ";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) sql.append(", ");
    sql.push_back('(');
    AppendQuotedString(cluster, &sql);
    sql.append(", ");
    AppendQuotedString(changefeed, &sql);
    sql.append(fmt::format(", '{}', {}, {}, 0)", ts.value(), ids[i], finished ? 1 : 0));
  }
  sql.append(
      " ON DUPLICATE KEY UPDATE finished=VALUES(finished), ddl_ts=VALUES(ddl_ts), "
      "is_syncpoint=VALUES(is_syncpoint)");
  return sql;
}

std::string DeleteDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids) {
  std::string sql =
      "DELETE FROM " + TableName() + " WHERE (ticdc_cluster_id, changefeed, table_id) IN (";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) sql.append(", ");
    AppendKey(cluster, changefeed, ids[i], &sql);
  }
  return sql + ")";
}

std::string SelectDdlTsSql(std::string_view cluster, std::string_view changefeed,
                           const std::vector<int64_t>& ids) {
  std::string sql = "SELECT table_id, ddl_ts, finished, is_syncpoint FROM " + TableName() +
                    " WHERE (ticdc_cluster_id, changefeed, table_id) IN (";
  for (int64_t id : ids) {
    AppendKey(cluster, changefeed, id, &sql);
    sql.append(", ");
  }
  AppendKey(cluster, changefeed, kSyncpointMetaTableId, &sql);
  return sql + ")";
}

Status DdlTsTable::Ensure(MysqlConnection* conn) {
  if (ensured_) return Status::Ok();
  RETURN_IF_ERROR(conn->Execute(fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDdlTsSchema)));
  RETURN_IF_ERROR(conn->Execute(CreateDdlTsTableSql()));
  ensured_ = true;
  return Status::Ok();
}

Result<std::vector<DdlTsTable::Row>> DdlTsTable::Read(MysqlConnection* conn,
                                                      const std::vector<int64_t>& ids) {
  Result<std::vector<SqlRow>> rows = conn->Query(SelectDdlTsSql(cluster_, changefeed_, ids));
  if (!rows.ok()) {
    unsigned e = conn->last_errno();
    // No table (or database) yet: nothing recorded.
    if (e == mysql_errnum::kNoSuchTable || e == mysql_errnum::kBadDb) return std::vector<Row>();
    return rows.status().WithContext("ddl_ts: read");
  }
  std::vector<Row> out;
  for (const SqlRow& r : *rows) {
    Row row;
    if (r.size() < 4 || !r[0].has_value()) continue;
    row.table_id = std::strtoll(r[0]->c_str(), nullptr, 10);
    if (!ParseU64(r[1], &row.ddl_ts)) {
      return Corruption(
          fmt::format("ddl_ts: bad ddl_ts '{}' for table {}", r[1].value_or("NULL"), row.table_id));
    }
    row.finished = Truthy(r[2]);
    row.is_syncpoint = Truthy(r[3]);
    out.push_back(row);
  }
  return out;
}

Result<bool> DdlTsTable::AlreadyExecuted(MysqlConnection* conn, const std::vector<int64_t>& ids,
                                         Ts ts) {
  ASSIGN_OR_RETURN(std::vector<Row> rows, Read(conn, ids));
  for (const Row& r : rows) {
    if (r.table_id == kSyncpointMetaTableId) continue;
    if (r.ddl_ts > ts.value() || (r.ddl_ts == ts.value() && r.finished)) return true;
  }
  return false;
}

Status DdlTsTable::WriteStarted(MysqlConnection* conn, const std::vector<int64_t>& ids, Ts ts) {
  RETURN_IF_ERROR(Ensure(conn));
  return conn->Execute(UpsertDdlTsSql(cluster_, changefeed_, ids, ts, false));
}

Status DdlTsTable::WriteFinished(MysqlConnection* conn, const std::vector<int64_t>& ids, Ts ts,
                                 const std::vector<int64_t>& dropped) {
  RETURN_IF_ERROR(Ensure(conn));
  std::string sql = "BEGIN; " + UpsertDdlTsSql(cluster_, changefeed_, ids, ts, true);
  if (!dropped.empty()) sql += "; " + DeleteDdlTsSql(cluster_, changefeed_, dropped);
  sql += "; COMMIT";
  Status st = conn->Execute(sql);
  if (!st.ok() && !IsConnectionError(conn->last_errno())) conn->Execute("ROLLBACK").IgnoreError();
  return st;
}

Result<std::vector<TableRecovery>> DdlTsTable::Recovery(MysqlConnection* conn,
                                                        const std::vector<int64_t>& table_ids,
                                                        const std::vector<Ts>& start_ts) {
  if (table_ids.size() != start_ts.size()) {
    return InvalidArgument("ddl_ts: table ids and start ts differ in length");
  }
  ASSIGN_OR_RETURN(std::vector<Row> rows, Read(conn, table_ids));
  std::map<int64_t, Row> by_table;
  std::optional<Row> syncpoint;
  for (const Row& r : rows) {
    if (r.table_id == kSyncpointMetaTableId) {
      syncpoint = r;
    } else {
      by_table[r.table_id] = r;
    }
  }
  std::vector<TableRecovery> out;
  for (size_t i = 0; i < table_ids.size(); ++i) {
    TableRecovery rec{table_ids[i], start_ts[i]};
    auto it = by_table.find(table_ids[i]);
    if (it != by_table.end()) {
      Row chosen = it->second;
      if (syncpoint.has_value() && syncpoint->ddl_ts >= chosen.ddl_ts) chosen = *syncpoint;
      uint64_t ts = chosen.ddl_ts;
      bool skip_dml = false, skip_syncpoint = false;
      if (chosen.finished) {
        skip_syncpoint = chosen.is_syncpoint;
      } else if (!chosen.is_syncpoint) {
        ts = ts == 0 ? 0 : ts - 1;  // Replay the DDL, skip DML already written at its ts.
        skip_dml = true;
      }
      if (start_ts[i].value() <= ts) {
        rec.start_ts = Ts(ts);
        rec.skip_dml_at_start_ts = skip_dml;
        rec.skip_syncpoint_at_start_ts = skip_syncpoint;
      }
    }
    out.push_back(rec);
  }
  return out;
}

Status DdlTsTable::RemoveAll(MysqlConnection* conn) {
  std::string sql = "DELETE FROM " + TableName() + " WHERE ticdc_cluster_id = ";
  AppendQuotedString(cluster_, &sql);
  sql.append(" AND changefeed = ");
  AppendQuotedString(changefeed_, &sql);
  Status st = conn->Execute(sql);
  unsigned e = conn->last_errno();
  if (!st.ok() && (e == mysql_errnum::kNoSuchTable || e == mysql_errnum::kBadDb))
    return Status::Ok();
  return st;
}

}  // namespace sluice::sink
