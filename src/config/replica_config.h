// ReplicaConfig: a changefeed's replication settings, the TOML file of
// `cdc cli changefeed create --config` and the `config` object of the HTTP
// API v2, with TiCDC's keys and defaults (pkg/config/replica_config.go).
//
// Plain value type: thread-compatible, distinct objects may be used from
// distinct threads. Every function here is pure and may be called from any
// thread. The accepted keys are listed in src/config/README.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "filter/filter.h"
#include "sink/sink_uri.h"

namespace sluice::config {

// A Go time.Duration: "1h30m" in TOML, nanoseconds (or a Go duration string
// on input) in JSON.
struct Duration {
  std::chrono::nanoseconds value{0};
  friend bool operator==(const Duration&, const Duration&) = default;
};

// `[[sink.dispatchers]]`: MQ topic / partition routing.
struct DispatchRule {
  std::vector<std::string> matcher;
  std::string dispatcher;  // TiCDC's old name for `partition` (TOML only)
  std::string partition;   // "default", "ts", "index-value", "table", "columns"
  std::string index;       // `index` key: index name for index-value dispatching
  std::vector<std::string> columns;
  std::string topic;
  friend bool operator==(const DispatchRule&, const DispatchRule&) = default;
};

// `[[sink.column-selectors]]`.
struct ColumnSelector {
  std::vector<std::string> matcher;
  std::vector<std::string> columns;
  friend bool operator==(const ColumnSelector&, const ColumnSelector&) = default;
};

// `[sink.csv]`.
struct CsvConfig {
  std::string delimiter = ",";
  std::string quote = "\"";
  std::string null_string = "\\N";  // key `null`
  bool include_commit_ts = false;
  std::string binary_encoding_method = "base64";  // "base64" or "hex"
  bool output_old_value = false;
  bool output_handle_key = false;
  bool output_field_header = false;
  friend bool operator==(const CsvConfig&, const CsvConfig&) = default;
};

// `[sink.kafka-config]`: the subset Sluice accepts. Unset means "take it
// from the sink URI or the sink's default".
struct KafkaConfig {
  std::optional<int64_t> partition_num;
  std::optional<int64_t> replication_factor;
  std::optional<std::string> kafka_version;
  std::optional<int64_t> max_message_bytes;
  std::optional<std::string> compression;
  std::optional<std::string> kafka_client_id;
  std::optional<bool> auto_create_topic;
  std::optional<std::string> dial_timeout;   // Go duration text
  std::optional<std::string> write_timeout;  // Go duration text
  std::optional<std::string> read_timeout;   // Go duration text
  std::optional<int64_t> required_acks;
  std::optional<std::string> sasl_user;
  std::optional<std::string> sasl_password;  // secret: ToJson masks it
  std::optional<std::string> sasl_mechanism;
  std::optional<bool> enable_tls;
  std::optional<std::string> ca;
  std::optional<std::string> cert;
  std::optional<std::string> key;
  std::optional<bool> insecure_skip_verify;
  friend bool operator==(const KafkaConfig&, const KafkaConfig&) = default;
};

// `[sink.mysql-config]`: the subset Sluice accepts; unset means "from URI".
struct MySqlConfig {
  std::optional<int64_t> worker_count;
  std::optional<int64_t> max_txn_row;
  std::optional<int64_t> max_multi_update_row_size;
  std::optional<int64_t> max_multi_update_row_count;  // TOML max-multi-update-row
  std::optional<std::string> tidb_txn_mode;
  std::optional<std::string> ssl_ca;
  std::optional<std::string> ssl_cert;
  std::optional<std::string> ssl_key;
  std::optional<std::string> time_zone;
  std::optional<std::string> write_timeout;  // Go duration text
  std::optional<std::string> read_timeout;   // Go duration text
  std::optional<std::string> timeout;        // Go duration text
  std::optional<bool> enable_batch_dml;
  std::optional<bool> enable_multi_statement;
  std::optional<bool> enable_cache_prepared_statement;
  friend bool operator==(const MySqlConfig&, const MySqlConfig&) = default;
};

// `[sink]`.
struct SinkConfig {
  std::optional<std::string> protocol;  // unset: the URI's `protocol` param
  std::string schema_registry;
  std::vector<DispatchRule> dispatchers;
  std::vector<ColumnSelector> column_selectors;
  CsvConfig csv;
  std::string transaction_atomicity;  // "", "none" or "table"; "" means none
  int64_t encoder_concurrency = 32;
  std::string terminator = "\r\n";
  std::string date_separator = "day";  // none / year / month / day
  bool enable_partition_separator = true;
  int64_t file_index_width = 0;  // key `file-index-digit`; 0: 20 for storage
  bool only_output_updated_columns = false;
  bool delete_only_output_handle_key_columns = false;
  bool content_compatible = false;
  int64_t advance_timeout_in_sec = 150;
  std::optional<bool> safe_mode;          // unset: the URI's `safe-mode` param
  bool open_output_old_value = true;      // `[sink.open] output-old-value`
  bool debezium_output_old_value = true;  // `[sink.debezium] output-old-value`
  KafkaConfig kafka_config;
  MySqlConfig mysql_config;
  friend bool operator==(const SinkConfig&, const SinkConfig&) = default;
};

// `[consistent]`: redo log settings. Intervals are milliseconds, as in TiCDC.
struct ConsistentConfig {
  std::string level = "none";  // "none" or "eventual"
  int64_t max_log_size = 64;   // MiB
  int64_t flush_interval = 2000;
  int64_t meta_flush_interval = 200;
  int64_t encoding_worker_num = 16;
  int64_t flush_worker_num = 8;
  std::string storage;
  bool use_file_backend = false;
  std::string compression;  // "" / "none" / "lz4"
  friend bool operator==(const ConsistentConfig&, const ConsistentConfig&) = default;
};

// `[scheduler]`.
struct SchedulerConfig {
  bool enable_table_across_nodes = false;
  int64_t region_threshold = 10000;
  int64_t write_key_threshold = 0;
  int64_t region_count_per_span = 100;
  int64_t scheduling_task_count_per_node = 20;
  friend bool operator==(const SchedulerConfig&, const SchedulerConfig&) = default;
};

// `[integrity]`.
struct IntegrityConfig {
  std::string integrity_check_level = "none";    // "none" or "correctness"
  std::string corruption_handle_level = "warn";  // "warn" or "error"
  friend bool operator==(const IntegrityConfig&, const IntegrityConfig&) = default;
};

// `[synced-status]`, seconds.
struct SyncedStatusConfig {
  int64_t synced_check_interval = 300;
  int64_t checkpoint_interval = 15;
  friend bool operator==(const SyncedStatusConfig&, const SyncedStatusConfig&) = default;
};

// `[filter]` without `case-sensitive` (top level in the file).
struct FilterSection {
  std::vector<std::string> rules{"*.*"};
  std::vector<uint64_t> ignore_txn_start_ts;
  std::vector<filter::EventFilterRule> event_filters;
};
bool operator==(const FilterSection& a, const FilterSection& b);

// Default-constructed, every field holds TiCDC's default.
struct ReplicaConfig {
  std::string performance_mode = "throughput";  // or "low-latency"
  uint64_t memory_quota = 1ULL << 30;           // bytes; 0 in input means the default
  bool case_sensitive = false;
  bool force_replicate = false;
  bool ignore_ineligible_table = false;
  bool check_gc_safe_point = true;
  bool enable_sync_point = false;
  bool enable_table_monitor = false;
  Duration sync_point_interval{std::chrono::minutes(10)};
  Duration sync_point_retention{std::chrono::hours(24)};
  bool bdr_mode = false;
  Duration changefeed_error_stuck_duration{std::chrono::minutes(30)};
  std::string sql_mode;  // deprecated in TiCDC; accepted and ignored
  FilterSection filter;
  int64_t mounter_worker_num = 16;  // `[mounter] worker-num`
  SinkConfig sink;
  ConsistentConfig consistent;
  SchedulerConfig scheduler;
  IntegrityConfig integrity;
  SyncedStatusConfig synced_status;
  friend bool operator==(const ReplicaConfig&, const ReplicaConfig&) = default;
};

// Parses the `--config` TOML file. Strict, as TiCDC: InvalidArgument for
//  - a syntax error: "TOML syntax error at line L, column C: ...";
//  - an unknown key: `unknown key "sink.protocl" at line 7`;
//  - a wrong type: `key "sink.protocol" at line 3: expected string, got integer`;
//  - a bad value: `invalid value for key "sink.csv.delimiter" at line 9: ...`.
// Keys left out keep TiCDC's defaults. Never throws.
[[nodiscard]] Result<ReplicaConfig> ParseReplicaConfigToml(std::string_view text);

// The API v2 JSON object (snake_case keys, durations in nanoseconds). The
// Kafka SASL password is masked as TiCDC's API does.
std::string ToJson(const ReplicaConfig& config);

// Parses an API v2 JSON object. Fields left out keep the defaults. Unknown
// fields are ignored, as TiCDC's API does, unless `reject_unknown` is set:
// then InvalidArgument names the field. A wrong type or a bad value is
// InvalidArgument naming the field. Never throws.
[[nodiscard]] Result<ReplicaConfig> ReplicaConfigFromJson(std::string_view json,
                                                          bool reject_unknown = false);

// Value checks that need no sink URI (enums, csv characters, minimums).
// InvalidArgument names the TOML key path.
[[nodiscard]] Status ValidateValues(const ReplicaConfig& config);

// The changefeed's filter (`filter.*` plus top-level `case-sensitive`).
filter::FilterConfig ToFilterConfig(const ReplicaConfig& config);

// TiCDC's ValidateAndAdjust against the sink URI: the URI's `protocol` and
// `transaction-atomicity` params override the file's (the URI wins, as in
// TiCDC); then protocol is required for MQ and storage sinks and must not be
// set for MySQL sinks; storage sinks take csv or canal-json only; sync point
// only for MySQL sinks; `table` atomicity not for MQ sinks; the filter must
// compile (NotSupported for expression filters). Returns the adjusted config.
[[nodiscard]] Result<ReplicaConfig> ValidateAndAdjust(ReplicaConfig config,
                                                      const sink::SinkUri& uri);

// The sink URI parameters the config implies for a sink of `scheme`
// (file: [sink] date-separator, enable-partition-separator,
// file-index-digit, terminator, only-output-updated-columns, protocol and
// [sink.csv] as csv-*; mysql/tidb: [sink] safe-mode and
// [sink.mysql-config] worker-count, max-txn-row, enable-batch-dml,
// enable-multi-statement, the timeouts and ssl files). The sink merges them
// under its URI's own parameters: as in TiCDC, a parameter in the URI wins.
std::map<std::string, std::string> SinkParams(const ReplicaConfig& config, std::string_view scheme);

// NotSupported naming the key for a setting whose feature Sluice does not
// have (syncpoints, the redo log, column selectors, ...), so that nothing is
// accepted and then ignored. ValidateAndAdjust calls it.
[[nodiscard]] Status RefuseUnsupported(const ReplicaConfig& config);

// ValidateAndAdjust without the adjusted result.
[[nodiscard]] Status Validate(const ReplicaConfig& config, const sink::SinkUri& uri);

// Parses a Go duration ("300ms", "-1.5h", "1h30m", "0"): InvalidArgument
// for anything else or an overflow of int64 nanoseconds.
[[nodiscard]] Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);

}  // namespace sluice::config
