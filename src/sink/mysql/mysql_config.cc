#include "sink/mysql/mysql_config.h"

#include <fmt/format.h>

namespace sluice::sink {

namespace {

Status ReadSeconds(const SinkUri& uri, std::string_view name, std::chrono::seconds* out) {
  ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> d, uri.DurationParam(name));
  if (d.has_value()) {
    *out = std::max(std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(*d));
  }
  return Status::Ok();
}

Status ReadBool(const SinkUri& uri, std::string_view name, bool* out) {
  ASSIGN_OR_RETURN(std::optional<bool> v, uri.BoolParam(name));
  if (v.has_value()) *out = *v;
  return Status::Ok();
}

}  // namespace

Result<MysqlSinkConfig> MysqlSinkConfig::FromUri(const SinkUri& uri) {
  MysqlSinkConfig c;
  if (uri.scheme == "tidb" || uri.scheme == "tidb+ssl") {
    c.tidb_scheme = true;
  } else if (uri.scheme != "mysql" && uri.scheme != "mysql+ssl") {
    return InvalidArgument(fmt::format("mysql sink: unsupported scheme '{}'", uri.scheme));
  }
  c.connect.tls = uri.scheme.ends_with("+ssl");
  if (uri.host.empty()) return InvalidArgument("mysql sink: the sink uri has no host");
  c.connect.host = uri.host;
  if (uri.port.has_value()) c.connect.port = *uri.port;
  if (!uri.user.empty()) c.connect.user = uri.user;
  c.connect.password = uri.password;

  ASSIGN_OR_RETURN(std::optional<int64_t> workers, uri.IntParam("worker-count", 1, 1024));
  if (workers.has_value()) c.worker_count = static_cast<int>(*workers);
  ASSIGN_OR_RETURN(std::optional<int64_t> rows, uri.IntParam("max-txn-row", 1, 2048));
  if (rows.has_value()) c.max_txn_row = static_cast<int>(*rows);
  RETURN_IF_ERROR(ReadBool(uri, "safe-mode", &c.safe_mode));
  RETURN_IF_ERROR(ReadBool(uri, "batch-dml-enable", &c.batch_dml));
  RETURN_IF_ERROR(ReadBool(uri, "multi-stmt-enable", &c.multi_stmt));
  RETURN_IF_ERROR(ReadBool(uri, "enable-ddl-ts", &c.enable_ddl_ts));
  RETURN_IF_ERROR(ReadSeconds(uri, "read-timeout", &c.connect.read_timeout));
  RETURN_IF_ERROR(ReadSeconds(uri, "write-timeout", &c.connect.write_timeout));
  RETURN_IF_ERROR(ReadSeconds(uri, "timeout", &c.connect.connect_timeout));
  auto param = [&](const char* name) {
    auto it = uri.params.find(name);
    return it == uri.params.end() ? std::string() : it->second;
  };
  c.connect.ssl_ca = param("ssl-ca");
  c.connect.ssl_cert = param("ssl-cert");
  c.connect.ssl_key = param("ssl-key");
  return c;
}

}  // namespace sluice::sink
