// MysqlConnection: one session with a MySQL-compatible server through
// MariaDB Connector/C (libmariadb), with the session settings the sink
// writes under. Errors come back as Status (see mysql_error.h) and the raw
// error number is kept in last_errno() for the caller's retry decisions.
// Not thread-safe: one owner thread at a time (the owner may change).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sink/mysql/sql_value.h"

typedef struct st_mysql MYSQL;

namespace sluice::sink {

struct MysqlConnectOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 4000;
  std::string user = "root";
  std::string password;
  std::chrono::seconds connect_timeout{120};
  std::chrono::seconds read_timeout{120};
  std::chrono::seconds write_timeout{120};
  bool tls = false;  // mysql+ssl:// and tidb+ssl://
  std::string ssl_ca, ssl_cert, ssl_key;
  // Statements run after connecting (session variables), then the
  // flavor-specific ones (TiDB variables only on TiDB).
  std::vector<std::string> init_statements;
};

using SqlRow = std::vector<std::optional<std::string>>;

class MysqlConnection {
 public:
  // Connects and sets the session up: utf8mb4, multi-statements, the sink's
  // sql_mode, UTC time zone, READ COMMITTED, no foreign key checks, and on
  // TiDB optimistic transactions and explicit AUTO_RANDOM inserts.
  static Result<std::unique_ptr<MysqlConnection>> Connect(const MysqlConnectOptions& options);
  ~MysqlConnection();
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  // Runs one statement or several separated by ';' and reads every result.
  // Returns the first error; the session stays usable unless the error is a
  // connection error.
  Status Execute(std::string_view sql);
  // Runs a query and returns its rows as text (NULL as nullopt).
  Result<std::vector<SqlRow>> Query(std::string_view sql);

  // Error number of the last failed call, 0 after a success.
  unsigned last_errno() const { return last_errno_; }
  // The server's id of this session (for KILL).
  uint64_t connection_id() const;
  const std::string& server_version() const { return server_version_; }
  SqlFlavor flavor() const { return flavor_; }
  uint64_t max_allowed_packet() const { return max_allowed_packet_; }

 private:
  explicit MysqlConnection(MYSQL* mysql) : mysql_(mysql) {}
  Status Error(std::string_view context);

  MYSQL* mysql_;
  unsigned last_errno_ = 0;
  std::string server_version_;
  SqlFlavor flavor_ = SqlFlavor::kMysql;
  uint64_t max_allowed_packet_ = 4 << 20;
};

// The sql_mode the sink writes under: TiDB's default with the modes that
// reject TiDB-valid data turned off (TiCDC AdjustSQLModeCompatible).
inline constexpr std::string_view kSinkSqlMode =
    "ONLY_FULL_GROUP_BY,NO_ENGINE_SUBSTITUTION,IGNORE_SPACE,NO_AUTO_VALUE_ON_ZERO,"
    "ALLOW_INVALID_DATES";

}  // namespace sluice::sink
