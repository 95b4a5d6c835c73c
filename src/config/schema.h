// Internal: the one description of every accepted key, shared by the TOML
// decoder, the JSON decoder and the JSON encoder. A visitor V provides
//   Field(toml_key, json_key, T& value)
//   Section(toml_key, json_key, fn)        fn(V& sub)
//   Array(toml_key, json_key, vector<E>&, fn)  fn(V& sub, E& item)
// An empty json_key marks a TOML-only key. Stateless; any thread.
#pragma once

#include "config/replica_config.h"

namespace sluice::config::internal {

template <typename V>
void VisitEventFilter(V& v, filter::EventFilterRule& r) {
  v.Field("matcher", "matcher", r.matcher);
  v.Field("ignore-event", "ignore_event", r.ignore_event);
  v.Field("ignore-sql", "ignore_sql", r.ignore_sql);
  v.Field("ignore-insert-value-expr", "ignore_insert_value_expr", r.ignore_insert_value_expr);
  v.Field("ignore-update-new-value-expr", "ignore_update_new_value_expr",
          r.ignore_update_new_value_expr);
  v.Field("ignore-update-old-value-expr", "ignore_update_old_value_expr",
          r.ignore_update_old_value_expr);
  v.Field("ignore-delete-value-expr", "ignore_delete_value_expr", r.ignore_delete_value_expr);
  v.Field("ignore-update-only-columns", "ignore_update_only_columns", r.ignore_update_only_columns);
}

template <typename V>
void VisitFilter(V& v, FilterSection& f) {
  v.Field("rules", "rules", f.rules);
  v.Field("ignore-txn-start-ts", "ignore_txn_start_ts", f.ignore_txn_start_ts);
  v.Array("event-filters", "event_filters", f.event_filters,
          [](V& s, filter::EventFilterRule& r) { VisitEventFilter(s, r); });
}

template <typename V>
void VisitCsv(V& v, CsvConfig& c) {
  v.Field("delimiter", "delimiter", c.delimiter);
  v.Field("quote", "quote", c.quote);
  v.Field("null", "null", c.null_string);
  v.Field("include-commit-ts", "include_commit_ts", c.include_commit_ts);
  v.Field("binary-encoding-method", "binary_encoding_method", c.binary_encoding_method);
  v.Field("output-old-value", "output_old_value", c.output_old_value);
  v.Field("output-handle-key", "output_handle_key", c.output_handle_key);
  v.Field("output-field-header", "output_field_header", c.output_field_header);
}

template <typename V>
void VisitKafka(V& v, KafkaConfig& k) {
  v.Field("partition-num", "partition_num", k.partition_num);
  v.Field("replication-factor", "replication_factor", k.replication_factor);
  v.Field("kafka-version", "kafka_version", k.kafka_version);
  v.Field("max-message-bytes", "max_message_bytes", k.max_message_bytes);
  v.Field("compression", "compression", k.compression);
  v.Field("kafka-client-id", "kafka_client_id", k.kafka_client_id);
  v.Field("auto-create-topic", "auto_create_topic", k.auto_create_topic);
  v.Field("dial-timeout", "dial_timeout", k.dial_timeout);
  v.Field("write-timeout", "write_timeout", k.write_timeout);
  v.Field("read-timeout", "read_timeout", k.read_timeout);
  v.Field("required-acks", "required_acks", k.required_acks);
  v.Field("sasl-user", "sasl_user", k.sasl_user);
  v.Field("sasl-password", "sasl_password", k.sasl_password);
  v.Field("sasl-mechanism", "sasl_mechanism", k.sasl_mechanism);
  v.Field("enable-tls", "enable_tls", k.enable_tls);
  v.Field("ca", "ca", k.ca);
  v.Field("cert", "cert", k.cert);
  v.Field("key", "key", k.key);
  v.Field("insecure-skip-verify", "insecure_skip_verify", k.insecure_skip_verify);
}

template <typename V>
void VisitMySql(V& v, MySqlConfig& m) {
  v.Field("worker-count", "worker_count", m.worker_count);
  v.Field("max-txn-row", "max_txn_row", m.max_txn_row);
  v.Field("max-multi-update-row-size", "max_multi_update_row_size", m.max_multi_update_row_size);
  v.Field("max-multi-update-row", "max_multi_update_row_count", m.max_multi_update_row_count);
  v.Field("tidb-txn-mode", "tidb_txn_mode", m.tidb_txn_mode);
  v.Field("ssl-ca", "ssl_ca", m.ssl_ca);
  v.Field("ssl-cert", "ssl_cert", m.ssl_cert);
  v.Field("ssl-key", "ssl_key", m.ssl_key);
  v.Field("time-zone", "time_zone", m.time_zone);
  v.Field("write-timeout", "write_timeout", m.write_timeout);
  v.Field("read-timeout", "read_timeout", m.read_timeout);
  v.Field("timeout", "timeout", m.timeout);
  v.Field("enable-batch-dml", "enable_batch_dml", m.enable_batch_dml);
  v.Field("enable-multi-statement", "enable_multi_statement", m.enable_multi_statement);
  v.Field("enable-cache-prepared-statement", "enable_cache_prepared_statement",
          m.enable_cache_prepared_statement);
}

template <typename V>
void VisitSinkRouting(V& v, SinkConfig& s) {
  v.Array("dispatchers", "dispatchers", s.dispatchers, [](V& d, DispatchRule& r) {
    d.Field("matcher", "matcher", r.matcher);
    d.Field("dispatcher", "", r.dispatcher);
    d.Field("partition", "partition", r.partition);
    d.Field("index", "index", r.index);
    d.Field("columns", "columns", r.columns);
    d.Field("topic", "topic", r.topic);
  });
  v.Array("column-selectors", "column_selectors", s.column_selectors, [](V& d, ColumnSelector& c) {
    d.Field("matcher", "matcher", c.matcher);
    d.Field("columns", "columns", c.columns);
  });
}

template <typename V>
void VisitSink(V& v, SinkConfig& s) {
  v.Field("protocol", "protocol", s.protocol);
  v.Field("schema-registry", "schema_registry", s.schema_registry);
  VisitSinkRouting(v, s);
  v.Section("csv", "csv", [&](V& c) { VisitCsv(c, s.csv); });
  v.Field("transaction-atomicity", "transaction_atomicity", s.transaction_atomicity);
  v.Field("encoder-concurrency", "encoder_concurrency", s.encoder_concurrency);
  v.Field("terminator", "terminator", s.terminator);
  v.Field("date-separator", "date_separator", s.date_separator);
  v.Field("enable-partition-separator", "enable_partition_separator", s.enable_partition_separator);
  v.Field("file-index-digit", "file_index_width", s.file_index_width);
  v.Field("only-output-updated-columns", "only_output_updated_columns",
          s.only_output_updated_columns);
  v.Field("delete-only-output-handle-key-columns", "delete_only_output_handle_key_columns",
          s.delete_only_output_handle_key_columns);
  v.Field("content-compatible", "content_compatible", s.content_compatible);
  v.Field("advance-timeout-in-sec", "advance_timeout_in_sec", s.advance_timeout_in_sec);
  v.Field("safe-mode", "safe_mode", s.safe_mode);
  v.Section("open", "open", [&](V& o) {
    o.Field("output-old-value", "output_old_value", s.open_output_old_value);
  });
  v.Section("debezium", "debezium", [&](V& o) {
    o.Field("output-old-value", "output_old_value", s.debezium_output_old_value);
  });
  v.Section("kafka-config", "kafka_config", [&](V& k) { VisitKafka(k, s.kafka_config); });
  v.Section("mysql-config", "mysql_config", [&](V& m) { VisitMySql(m, s.mysql_config); });
}

template <typename V>
void VisitConsistent(V& v, ConsistentConfig& c) {
  v.Field("level", "level", c.level);
  v.Field("max-log-size", "max_log_size", c.max_log_size);
  v.Field("flush-interval", "flush_interval", c.flush_interval);
  v.Field("meta-flush-interval", "meta_flush_interval", c.meta_flush_interval);
  v.Field("encoding-worker-num", "encoding_worker_num", c.encoding_worker_num);
  v.Field("flush-worker-num", "flush_worker_num", c.flush_worker_num);
  v.Field("storage", "storage", c.storage);
  v.Field("use-file-backend", "use_file_backend", c.use_file_backend);
  v.Field("compression", "compression", c.compression);
}

template <typename V>
void VisitSections(V& v, ReplicaConfig& c) {
  v.Section("filter", "filter", [&](V& f) { VisitFilter(f, c.filter); });
  v.Section("mounter", "mounter",
            [&](V& m) { m.Field("worker-num", "worker_num", c.mounter_worker_num); });
  v.Section("sink", "sink", [&](V& s) { VisitSink(s, c.sink); });
  v.Section("consistent", "consistent", [&](V& s) { VisitConsistent(s, c.consistent); });
  v.Section("scheduler", "scheduler", [&](V& s) {
    s.Field("enable-table-across-nodes", "enable_table_across_nodes",
            c.scheduler.enable_table_across_nodes);
    s.Field("region-threshold", "region_threshold", c.scheduler.region_threshold);
    s.Field("write-key-threshold", "write_key_threshold", c.scheduler.write_key_threshold);
    s.Field("region-count-per-span", "region_count_per_span", c.scheduler.region_count_per_span);
    s.Field("scheduling-task-count-per-node", "scheduling_task_count_per_node",
            c.scheduler.scheduling_task_count_per_node);
  });
  v.Section("integrity", "integrity", [&](V& s) {
    s.Field("integrity-check-level", "integrity_check_level", c.integrity.integrity_check_level);
    s.Field("corruption-handle-level", "corruption_handle_level",
            c.integrity.corruption_handle_level);
  });
  v.Section("synced-status", "synced_status", [&](V& s) {
    s.Field("synced-check-interval", "synced_check_interval",
            c.synced_status.synced_check_interval);
    s.Field("checkpoint-interval", "checkpoint_interval", c.synced_status.checkpoint_interval);
  });
}

template <typename V>
void VisitReplicaConfig(V& v, ReplicaConfig& c) {
  v.Field("performance-mode", "performance_mode", c.performance_mode);
  v.Field("memory-quota", "memory_quota", c.memory_quota);
  v.Field("case-sensitive", "case_sensitive", c.case_sensitive);
  v.Field("force-replicate", "force_replicate", c.force_replicate);
  v.Field("ignore-ineligible-table", "ignore_ineligible_table", c.ignore_ineligible_table);
  v.Field("check-gc-safe-point", "check_gc_safe_point", c.check_gc_safe_point);
  v.Field("enable-sync-point", "enable_sync_point", c.enable_sync_point);
  v.Field("enable-table-monitor", "enable_table_monitor", c.enable_table_monitor);
  v.Field("sync-point-interval", "sync_point_interval", c.sync_point_interval);
  v.Field("sync-point-retention", "sync_point_retention", c.sync_point_retention);
  v.Field("bdr-mode", "bdr_mode", c.bdr_mode);
  v.Field("changefeed-error-stuck-duration", "changefeed_error_stuck_duration",
          c.changefeed_error_stuck_duration);
  v.Field("sql-mode", "sql_mode", c.sql_mode);
  VisitSections(v, c);
}

// Key path of a TOML key under `prefix` ("" at the top level).
inline std::string JoinKey(std::string_view prefix, std::string_view key) {
  std::string out(prefix);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

}  // namespace sluice::config::internal

namespace sluice::config::internal {

// A bad value: the TOML key path ("sink.csv.delimiter") and what is wrong.
struct FieldError {
  std::string key;
  std::string message;
};

// The first bad value in `config`, if any (see ValidateValues).
std::optional<FieldError> CheckValues(const ReplicaConfig& config);

// Replaces input values that mean "the default" (memory-quota = 0).
void Normalize(ReplicaConfig& config);

}  // namespace sluice::config::internal
