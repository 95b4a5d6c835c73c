#include "mysql_bench_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "sink/mysql/mysql_conn.h"

namespace sluice::bench {

Status MysqlError(MYSQL* m, std::string_view what) {
  return Internal(fmt::format("{}: {} ({})", what, mysql_error(m), mysql_errno(m)));
}

Result<Conn> Connect(const sink::SinkUri& uri) {
  Conn m(mysql_init(nullptr));
  if (m == nullptr) return ResourceExhausted("mysql_init failed");
  mysql_options(m.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (mysql_real_connect(m.get(), uri.host.c_str(), uri.user.c_str(), uri.password.c_str(), nullptr,
                         uri.port.value_or(3306), nullptr,
                         CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS) == nullptr) {
    return MysqlError(m.get(), "connect");
  }
  std::string session = fmt::format(
      "SET SESSION sql_mode = '{}', time_zone = '+00:00', foreign_key_checks = 0; "
      "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
      sink::kSinkSqlMode);
  if (mysql_real_query(m.get(), session.data(), session.size()) != 0) {
    return MysqlError(m.get(), "session settings");
  }
  while (mysql_next_result(m.get()) == 0) {
  }
  return m;
}

Status Exec(MYSQL* m, const std::string& sql) {
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) return MysqlError(m, sql.substr(0, 80));
  while (true) {
    if (MYSQL_RES* res = mysql_store_result(m); res != nullptr) mysql_free_result(res);
    int next = mysql_next_result(m);
    if (next == -1) return Status::Ok();
    if (next > 0) return MysqlError(m, sql.substr(0, 80));
  }
}

Result<std::string> QueryValue(MYSQL* m, const std::string& sql, unsigned column) {
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) return MysqlError(m, sql);
  MYSQL_RES* res = mysql_store_result(m);
  if (res == nullptr) return MysqlError(m, sql);
  MYSQL_ROW row = mysql_fetch_row(res);
  const bool present = row != nullptr && column < mysql_num_fields(res) && row[column] != nullptr;
  std::string value = present ? row[column] : "";
  mysql_free_result(res);
  return value;
}

Result<uint64_t> CountRows(MYSQL* m, const std::vector<std::string>& tables) {
  uint64_t total = 0;
  for (const std::string& t : tables) {
    ASSIGN_OR_RETURN(std::string n, QueryValue(m, "SELECT COUNT(*) FROM " + t));
    total += std::strtoull(n.c_str(), nullptr, 10);
  }
  return total;
}

Status Truncate(MYSQL* m, const std::vector<std::string>& tables) {
  for (const std::string& t : tables) RETURN_IF_ERROR(Exec(m, "TRUNCATE TABLE " + t));
  return Status::Ok();
}

Result<uint64_t> GlobalStatus(MYSQL* m, std::string_view name) {
  ASSIGN_OR_RETURN(std::string value,
                   QueryValue(m, fmt::format("SHOW GLOBAL STATUS LIKE '{}'", name), 1));
  return std::strtoull(value.c_str(), nullptr, 10);
}

Result<uint64_t> WriteStatements(MYSQL* m) {
  ASSIGN_OR_RETURN(uint64_t inserts, GlobalStatus(m, "Com_insert"));
  ASSIGN_OR_RETURN(uint64_t replaces, GlobalStatus(m, "Com_replace"));
  return inserts + replaces;
}

pid_t ServerPid(MYSQL* m) {
  Result<std::string> pid_file = QueryValue(m, "SELECT @@pid_file");
  if (!pid_file.ok()) return 0;
  std::ifstream pf(pid_file.value());
  long pid = 0;
  if (!(pf >> pid) || pid <= 0) return 0;
  // A pid file left on this machine by another server says nothing.
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(comm, name);
  if (name != "mariadbd" && name != "mysqld") return 0;
  return static_cast<pid_t>(pid);
}

double ProcessCpuSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return -1;
  std::istringstream in(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Result<double> Quiesce(MYSQL* m, pid_t server_pid, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  auto waited = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double limit_s = static_cast<double>(limit.count());
  ASSIGN_OR_RETURN(std::string pct, QueryValue(m, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct"));
  RETURN_IF_ERROR(Exec(m, "SET GLOBAL innodb_max_dirty_pages_pct = 0"));
  Result<uint64_t> dirty = GlobalStatus(m, "Innodb_buffer_pool_pages_dirty");
  while (dirty.ok() && dirty.value() > 0 && waited() < limit_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dirty = GlobalStatus(m, "Innodb_buffer_pool_pages_dirty");
  }
  RETURN_IF_ERROR(Exec(m, fmt::format("SET GLOBAL innodb_max_dirty_pages_pct = {}", pct)));
  if (!dirty.ok()) return dirty.status();
  bool idle = server_pid <= 0;
  while (!idle && waited() < limit_s) {
    const double before = ProcessCpuSeconds(server_pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    idle = before < 0 || ProcessCpuSeconds(server_pid) - before < 0.005;
  }
  if (dirty.value() > 0 || !idle) {
    std::printf("# quiesce: gave up after %.1f s (%llu dirty pages, server %s)\n", waited(),
                static_cast<unsigned long long>(dirty.value()), idle ? "idle" : "busy");
  }
  return waited();
}

}  // namespace sluice::bench
