#include "checker/mysql_reader.h"

#include <fmt/format.h>
#include <mysql.h>

#include <algorithm>
#include <memory>

#include "event/table_schema.h"
#include "sink/sink_uri.h"

namespace sluice::checker {

namespace {

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using Conn = std::unique_ptr<MYSQL, MysqlCloser>;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

Status QueryError(MYSQL* m, std::string_view what) {
  return Unavailable(
      fmt::format("checker: {}: mysql error {}: {}", what, mysql_errno(m), mysql_error(m)));
}

// Runs `sql` and calls `fn(row, lengths, n)` for every row.
template <typename Fn>
Status Query(MYSQL* m, const std::string& sql, Fn fn) {
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) return QueryError(m, sql);
  MYSQL_RES* res = mysql_use_result(m);
  if (res == nullptr) return mysql_field_count(m) == 0 ? Status::Ok() : QueryError(m, sql);
  unsigned n = mysql_num_fields(res);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    fn(row, mysql_fetch_lengths(res), n);
  }
  bool failed = mysql_errno(m) != 0;
  mysql_free_result(res);
  return failed ? QueryError(m, sql) : Status::Ok();
}

Result<Conn> Connect(const std::string& uri_text) {
  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(uri_text));
  if (uri.scheme != "mysql" && uri.scheme != "tidb") {
    return InvalidArgument(fmt::format("checker: '{}' is not a mysql:// uri", uri.Redacted()));
  }
  Conn m(mysql_init(nullptr));
  if (!m) return Internal("mysql_init failed");
  unsigned timeout = 10;
  mysql_optionsv(m.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_optionsv(m.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (mysql_real_connect(m.get(), uri.host.empty() ? "127.0.0.1" : uri.host.c_str(),
                         uri.user.c_str(), uri.password.c_str(), nullptr, uri.port.value_or(3306),
                         nullptr, 0) == nullptr) {
    return QueryError(m.get(), "connect " + uri.Redacted());
  }
  RETURN_IF_ERROR(Query(m.get(), "SET time_zone = '+00:00'", [](auto, auto, auto) {}));
  return m;
}

Status ReadTable(MYSQL* m, const std::string& schema, const std::string& table, TableData* t) {
  std::string cols;
  for (size_t i = 0; i < t->columns.size(); ++i) {
    if (i > 0) cols += ", ";
    std::string q = event::QuoteName(t->columns[i]);
    cols += t->bit[i] ? fmt::format("CAST({} AS UNSIGNED)", q) : q;
  }
  std::string sql =
      fmt::format("SELECT {} FROM {}.{}", cols, event::QuoteName(schema), event::QuoteName(table));
  return Query(m, sql, [&](MYSQL_ROW row, unsigned long* len, unsigned n) {
    RowValues values;
    for (unsigned i = 0; i < n; ++i) {
      if (row[i] == nullptr) {
        values.emplace_back();
      } else {
        values.emplace_back(std::string(row[i], len[i]));
      }
    }
    t->Upsert(std::move(values));
  });
}

bool IsSystemSchema(const std::string& lower) {
  return lower == "mysql" || lower == "information_schema" || lower == "performance_schema" ||
         lower == "sys" || lower == "tidb_cdc";
}

}  // namespace

Result<DatabaseState> ReadMysqlState(const std::string& uri, const DatabaseState& expected,
                                     const std::vector<std::string>& schemas) {
  ASSIGN_OR_RETURN(Conn m, Connect(uri));
  std::vector<std::pair<std::string, std::string>> tables;
  RETURN_IF_ERROR(Query(m.get(),
                        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                        "WHERE TABLE_TYPE = 'BASE TABLE'",
                        [&](MYSQL_ROW row, unsigned long* len, unsigned) {
                          tables.emplace_back(std::string(row[0], len[0]),
                                              std::string(row[1], len[1]));
                        }));
  DatabaseState state;
  for (const auto& [schema, table] : tables) {
    TableName name{Lower(schema), Lower(table)};
    if (IsSystemSchema(name.first)) continue;
    if (!schemas.empty() && std::none_of(schemas.begin(), schemas.end(),
                                         [&](const auto& s) { return Lower(s) == name.first; })) {
      continue;
    }
    auto want = expected.find(name);
    if (want == expected.end()) {
      state.emplace(name, TableData{});
      continue;
    }
    TableData data = want->second;
    data.rows.clear();
    Status s = ReadTable(m.get(), schema, table, &data);
    if (!s.ok() && mysql_errno(m.get()) == 1054) {  // ER_BAD_FIELD_ERROR
      return Corruption(fmt::format("checker: `{}`.`{}` lacks an expected column: {}", schema,
                                    table, s.message()));
    }
    RETURN_IF_ERROR(s);
    state.emplace(name, std::move(data));
  }
  return state;
}

Status ExecSql(const std::string& uri, const std::vector<std::string>& sql) {
  ASSIGN_OR_RETURN(sink::SinkUri u, sink::SinkUri::Parse(uri));
  MYSQL* m = mysql_init(nullptr);
  if (mysql_real_connect(m, u.host.c_str(), u.user.c_str(), u.password.c_str(), nullptr,
                         u.port.value_or(3306), nullptr, 0) == nullptr) {
    Status s = Unavailable(mysql_error(m));
    mysql_close(m);
    return s;
  }
  for (const std::string& q : sql) {
    if (mysql_query(m, q.c_str()) != 0) {
      Status s = Internal(fmt::format("{}: {}", q, mysql_error(m)));
      mysql_close(m);
      return s;
    }
  }
  mysql_close(m);
  return Status::Ok();
}

}  // namespace sluice::checker
