// ValidateAndAdjust: TiCDC's checks of a replica config against the sink URI;
// SinkParams: the sink URI parameters the [sink] config implies;
// RefuseUnsupported: the keys whose feature Sluice does not have.
#include <cctype>
#include <string>

#include "config/schema.h"

namespace sluice::config {
namespace {

bool IsMySqlScheme(std::string_view s) {
  return s == "mysql" || s == "mysql+ssl" || s == "tidb" || s == "tidb+ssl";
}

bool IsMqScheme(std::string_view s) {
  return s == "kafka" || s == "kafka+ssl" || s == "pulsar" || s == "pulsar+ssl" ||
         s == "pulsar+http" || s == "pulsar+https";
}

bool IsStorageScheme(std::string_view s) {
  return s == "file" || s == "s3" || s == "gcs" || s == "gs" || s == "azblob" || s == "azure" ||
         s == "cos" || s == "noop";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The URI's protocol, transaction-atomicity and safe-mode override the file.
Status ApplyUriParams(SinkConfig& sink, const sink::SinkUri& uri) {
  if (auto it = uri.params.find("protocol"); it != uri.params.end() && !it->second.empty()) {
    sink.protocol = it->second;
  }
  if (auto it = uri.params.find("transaction-atomicity");
      it != uri.params.end() && !it->second.empty()) {
    sink.transaction_atomicity = it->second;
  }
  if (IsMySqlScheme(uri.scheme)) {
    ASSIGN_OR_RETURN(std::optional<bool> safe_mode, uri.BoolParam("safe-mode"));
    if (safe_mode.has_value()) sink.safe_mode = safe_mode;
  }
  return Status::Ok();
}

Status CheckProtocol(const SinkConfig& sink, std::string_view scheme) {
  std::string protocol = Lower(sink.protocol.value_or(""));
  if (IsMySqlScheme(scheme) && sink.protocol.has_value()) {
    return InvalidArgument("protocol \"" + *sink.protocol + "\" is incompatible with the " +
                           std::string(scheme) + " scheme");
  }
  if ((IsMqScheme(scheme) || IsStorageScheme(scheme)) && protocol.empty()) {
    return InvalidArgument("sink.protocol (or the sink URI's protocol param) is required for the " +
                           std::string(scheme) + " scheme");
  }
  if (IsStorageScheme(scheme) && protocol != "csv" && protocol != "canal-json") {
    return InvalidArgument("protocol \"" + protocol + "\" is not supported by the " +
                           std::string(scheme) + " scheme; use csv or canal-json");
  }
  if (IsMqScheme(scheme) && sink.transaction_atomicity == "table") {
    return InvalidArgument("table level atomicity is not supported by the " + std::string(scheme) +
                           " scheme");
  }
  if (!IsMySqlScheme(scheme) && protocol == "csv" && sink.delete_only_output_handle_key_columns) {
    return InvalidArgument(
        "the csv protocol always outputs all columns of a delete; do not set "
        "sink.delete-only-output-handle-key-columns");
  }
  return Status::Ok();
}

Status CheckAndAdjust(ReplicaConfig& c, std::string_view scheme) {
  RETURN_IF_ERROR(CheckProtocol(c.sink, scheme));
  if (c.enable_sync_point && !IsMySqlScheme(scheme)) {
    return InvalidArgument("enable-sync-point needs a mysql or tidb downstream");
  }
  if (IsStorageScheme(scheme) && (c.sink.file_index_width < 6 || c.sink.file_index_width > 20)) {
    c.sink.file_index_width = 20;
  }
  if (scheme != "kafka" && scheme != "kafka+ssl") c.integrity.integrity_check_level = "none";
  if (c.integrity.integrity_check_level == "correctness" && !c.sink.column_selectors.empty()) {
    return InvalidArgument("integrity check and sink.column-selectors cannot be used together");
  }
  return filter::Filter::Validate(ToFilterConfig(c));
}

std::string Bool(bool b) { return b ? "true" : "false"; }

void StorageParams(const SinkConfig& s, std::map<std::string, std::string>* out) {
  if (s.protocol.has_value()) out->emplace("protocol", *s.protocol);
  out->emplace("date-separator", s.date_separator);
  out->emplace("enable-partition-separator", Bool(s.enable_partition_separator));
  if (s.file_index_width != 0) {
    out->emplace("file-index-digit", std::to_string(s.file_index_width));
  }
  out->emplace("terminator", s.terminator);
  out->emplace("only-output-updated-columns", Bool(s.only_output_updated_columns));
  out->emplace("csv-delimiter", s.csv.delimiter);
  out->emplace("csv-quote", s.csv.quote);
  out->emplace("csv-null", s.csv.null_string);
  out->emplace("csv-include-commit-ts", Bool(s.csv.include_commit_ts));
  out->emplace("csv-output-old-value", Bool(s.csv.output_old_value));
  out->emplace("csv-output-field-header", Bool(s.csv.output_field_header));
  out->emplace("csv-binary-encoding-method", s.csv.binary_encoding_method);
}

void MySqlParams(const SinkConfig& s, std::map<std::string, std::string>* out) {
  const MySqlConfig& m = s.mysql_config;
  if (s.safe_mode.has_value()) out->emplace("safe-mode", Bool(*s.safe_mode));
  if (m.worker_count) out->emplace("worker-count", std::to_string(*m.worker_count));
  if (m.max_txn_row) out->emplace("max-txn-row", std::to_string(*m.max_txn_row));
  if (m.enable_batch_dml) out->emplace("batch-dml-enable", Bool(*m.enable_batch_dml));
  if (m.enable_multi_statement) out->emplace("multi-stmt-enable", Bool(*m.enable_multi_statement));
  if (m.read_timeout) out->emplace("read-timeout", *m.read_timeout);
  if (m.write_timeout) out->emplace("write-timeout", *m.write_timeout);
  if (m.timeout) out->emplace("timeout", *m.timeout);
  if (m.ssl_ca) out->emplace("ssl-ca", *m.ssl_ca);
  if (m.ssl_cert) out->emplace("ssl-cert", *m.ssl_cert);
  if (m.ssl_key) out->emplace("ssl-key", *m.ssl_key);
}

}  // namespace

Result<ReplicaConfig> ValidateAndAdjust(ReplicaConfig config, const sink::SinkUri& uri) {
  RETURN_IF_ERROR(ApplyUriParams(config.sink, uri));
  RETURN_IF_ERROR(ValidateValues(config));
  RETURN_IF_ERROR(CheckAndAdjust(config, uri.scheme));
  RETURN_IF_ERROR(RefuseUnsupported(config));
  return config;
}

Status Validate(const ReplicaConfig& config, const sink::SinkUri& uri) {
  return ValidateAndAdjust(config, uri).status();
}

std::map<std::string, std::string> SinkParams(const ReplicaConfig& config,
                                              std::string_view scheme) {
  std::map<std::string, std::string> out;
  if (IsMySqlScheme(scheme)) MySqlParams(config.sink, &out);
  if (scheme == "file") StorageParams(config.sink, &out);
  return out;
}

Status RefuseUnsupported(const ReplicaConfig& c) {
  auto refuse = [](std::string_view key, std::string_view what) {
    return NotSupported(std::string(key) + ": " + std::string(what) +
                        " is not supported by Sluice yet; remove the setting");
  };
  if (c.enable_sync_point) return refuse("enable-sync-point", "the syncpoint");
  if (c.bdr_mode) return refuse("bdr-mode", "bidirectional replication");
  if (c.enable_table_monitor) return refuse("enable-table-monitor", "the table monitor");
  if (c.scheduler.enable_table_across_nodes) {
    return refuse("scheduler.enable-table-across-nodes", "splitting a table across nodes");
  }
  if (c.consistent.level != "none") return refuse("consistent.level", "the redo log");
  if (!c.sink.column_selectors.empty()) {
    return refuse("sink.column-selectors", "selecting the columns written");
  }
  if (c.sink.delete_only_output_handle_key_columns) {
    return refuse("sink.delete-only-output-handle-key-columns",
                  "writing only the handle of deleted rows");
  }
  if (c.sink.csv.output_handle_key)
    return refuse("sink.csv.output-handle-key", "the handle column");
  const MySqlConfig& m = c.sink.mysql_config;
  if (m.max_multi_update_row_size) {
    return refuse("sink.mysql-config.max-multi-update-row-size", "multi-row updates");
  }
  if (m.max_multi_update_row_count) {
    return refuse("sink.mysql-config.max-multi-update-row", "multi-row updates");
  }
  if (m.tidb_txn_mode) return refuse("sink.mysql-config.tidb-txn-mode", "setting tidb_txn_mode");
  if (m.time_zone) return refuse("sink.mysql-config.time-zone", "a session time zone");
  if (m.enable_cache_prepared_statement) {
    return refuse("sink.mysql-config.enable-cache-prepared-statement", "prepared statements");
  }
  return Status::Ok();
}

}  // namespace sluice::config
