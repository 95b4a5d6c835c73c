#include "sink/mysql/mysql_conn.h"

#include <fmt/format.h>
#include <mysql.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "sink/mysql/mysql_error.h"

namespace sluice::sink {

namespace {

void InitLibraryOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mysql_library_init(0, nullptr, nullptr); });
}

unsigned Seconds(std::chrono::seconds s) {
  return static_cast<unsigned>(std::max<int64_t>(1, s.count()));
}

}  // namespace

Result<std::unique_ptr<MysqlConnection>> MysqlConnection::Connect(
    const MysqlConnectOptions& options) {
  InitLibraryOnce();
  MYSQL* m = mysql_init(nullptr);
  if (m == nullptr) return ResourceExhausted("mysql: out of memory creating a connection");
  std::unique_ptr<MysqlConnection> conn(new MysqlConnection(m));
  unsigned connect = Seconds(options.connect_timeout);
  unsigned read = Seconds(options.read_timeout);
  unsigned write = Seconds(options.write_timeout);
  unsigned no_infile = 0;
  mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect);
  mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &read);
  mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &write);
  mysql_options(m, MYSQL_OPT_LOCAL_INFILE, &no_infile);
  mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (options.tls) {
    my_bool enforce = 1;
    mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &enforce);
    auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    mysql_ssl_set(m, opt(options.ssl_key), opt(options.ssl_cert), opt(options.ssl_ca), nullptr,
                  nullptr);
  }
  std::string where = fmt::format("mysql: connect to {}:{}", options.host, options.port);
  if (mysql_real_connect(m, options.host.c_str(), options.user.c_str(), options.password.c_str(),
                         nullptr, options.port, nullptr,
                         CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS) == nullptr) {
    return conn->Error(where);
  }
  conn->server_version_ = mysql_get_server_info(m);
  if (conn->server_version_.find("TiDB") != std::string::npos) {
    conn->flavor_ = SqlFlavor::kTiDb;
  } else if (conn->server_version_.find("MariaDB") != std::string::npos) {
    conn->flavor_ = SqlFlavor::kMariaDb;
  }
  std::string session = fmt::format(
      "SET SESSION sql_mode = '{}', time_zone = '+00:00', foreign_key_checks = 0; "
      "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
      kSinkSqlMode);
  if (conn->flavor_ == SqlFlavor::kTiDb) {
    session +=
        "; SET SESSION tidb_txn_mode = 'optimistic', allow_auto_random_explicit_insert = 1, "
        "tidb_placement_mode = 'ignore'";
  }
  RETURN_IF_ERROR(conn->Execute(session));
  for (const std::string& stmt : options.init_statements) RETURN_IF_ERROR(conn->Execute(stmt));
  ASSIGN_OR_RETURN(std::vector<SqlRow> rows, conn->Query("SELECT @@max_allowed_packet"));
  if (!rows.empty() && !rows[0].empty() && rows[0][0].has_value()) {
    conn->max_allowed_packet_ = std::strtoull(rows[0][0]->c_str(), nullptr, 10);
  }
  return conn;
}

MysqlConnection::~MysqlConnection() { mysql_close(mysql_); }

Status MysqlConnection::Error(std::string_view context) {
  last_errno_ = ::mysql_errno(mysql_);
  if (last_errno_ == 0) last_errno_ = mysql_errnum::kServerLost;
  return MysqlErrorStatus(last_errno_, mysql_error(mysql_), context);
}

Status MysqlConnection::Execute(std::string_view sql) {
  last_errno_ = 0;
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return Error("mysql");
  while (true) {
    MYSQL_RES* res = mysql_store_result(mysql_);
    if (res != nullptr) {
      mysql_free_result(res);
    } else if (mysql_field_count(mysql_) != 0) {
      return Error("mysql: reading a result");
    }
    int next = mysql_next_result(mysql_);
    if (next == -1) return Status::Ok();
    if (next > 0) return Error("mysql");
  }
}

Result<std::vector<SqlRow>> MysqlConnection::Query(std::string_view sql) {
  last_errno_ = 0;
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return Error("mysql: query");
  MYSQL_RES* res = mysql_store_result(mysql_);
  if (res == nullptr) {
    if (mysql_field_count(mysql_) != 0) return Error("mysql: reading a result");
    return std::vector<SqlRow>();
  }
  std::vector<SqlRow> rows;
  unsigned n = mysql_num_fields(res);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    unsigned long* lengths = mysql_fetch_lengths(res);
    SqlRow out(n);
    for (unsigned i = 0; i < n; ++i) {
      if (row[i] != nullptr) out[i] = std::string(row[i], lengths[i]);
    }
    rows.push_back(std::move(out));
  }
  mysql_free_result(res);
  // Drain further results of a multi-statement query.
  while (mysql_next_result(mysql_) == 0) {
    if (MYSQL_RES* more = mysql_store_result(mysql_)) mysql_free_result(more);
  }
  return rows;
}

uint64_t MysqlConnection::connection_id() const { return mysql_thread_id(mysql_); }

}  // namespace sluice::sink
