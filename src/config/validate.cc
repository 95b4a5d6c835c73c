// Value checks, the filter view, and the checks against the sink URI.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "config/schema.h"

namespace sluice::config {
namespace {

using internal::FieldError;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::array<std::string_view, 13> kProtocols = {
    "default",       "canal", "avro",     "flat-avro",     "maxwell", "canal-json", "craft",
    "open-protocol", "csv",   "debezium", "debezium-avro", "simple",  "open"};

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <size_t N>
bool OneOf(std::string_view v, const std::array<std::string_view, N>& options) {
  return std::find(options.begin(), options.end(), v) != options.end();
}

template <size_t N>
std::string Expected(std::string_view v, const std::array<std::string_view, N>& options) {
  std::string out;
  out.append("\"").append(v).append("\" is not one of ");
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out.append(", ");
    out.append(options[i]);
  }
  return out;
}

#define CHECK_ONE_OF(key, value, ...)                                                    \
  do {                                                                                   \
    constexpr std::array<std::string_view, std::size({__VA_ARGS__})> kOpts{__VA_ARGS__}; \
    if (!OneOf((value), kOpts)) return FieldError{(key), Expected((value), kOpts)};      \
  } while (0)

std::optional<FieldError> CheckCsv(const CsvConfig& c) {
  if (c.quote.size() > 1) return FieldError{"sink.csv.quote", "must be at most one character"};
  if (c.quote == "\r" || c.quote == "\n") {
    return FieldError{"sink.csv.quote", "cannot be a line break"};
  }
  if (c.delimiter.empty() || c.delimiter.size() > 3) {
    return FieldError{"sink.csv.delimiter", "must be 1 to 3 characters"};
  }
  if (c.delimiter.find_first_of("\r\n") != std::string::npos) {
    return FieldError{"sink.csv.delimiter", "cannot contain a line break"};
  }
  if (!c.quote.empty() && c.delimiter.find(c.quote[0]) != std::string::npos) {
    return FieldError{"sink.csv.delimiter", "shares a character with sink.csv.quote"};
  }
  CHECK_ONE_OF("sink.csv.binary-encoding-method", c.binary_encoding_method, "base64", "hex");
  return std::nullopt;
}

std::optional<FieldError> CheckDurationText(std::string key, const std::optional<std::string>& v) {
  if (!v.has_value()) return std::nullopt;
  auto parsed = ParseGoDuration(*v);
  if (!parsed.ok()) return FieldError{std::move(key), std::string(parsed.status().message())};
  return std::nullopt;
}

std::optional<FieldError> CheckSinkClients(const SinkConfig& s) {
  const KafkaConfig& k = s.kafka_config;
  for (auto [name, value] : {std::pair{"dial-timeout", &k.dial_timeout},
                             {"write-timeout", &k.write_timeout},
                             {"read-timeout", &k.read_timeout}}) {
    if (auto e = CheckDurationText(std::string("sink.kafka-config.") + name, *value)) return e;
  }
  const MySqlConfig& m = s.mysql_config;
  for (auto [name, value] : {std::pair{"write-timeout", &m.write_timeout},
                             {"read-timeout", &m.read_timeout},
                             {"timeout", &m.timeout}}) {
    if (auto e = CheckDurationText(std::string("sink.mysql-config.") + name, *value)) return e;
  }
  return std::nullopt;
}

std::optional<FieldError> CheckSink(const SinkConfig& s) {
  if (s.protocol.has_value() && !s.protocol->empty() &&
      !OneOf(LowerAscii(*s.protocol), kProtocols)) {
    return FieldError{"sink.protocol", Expected(*s.protocol, kProtocols)};
  }
  CHECK_ONE_OF("sink.transaction-atomicity", s.transaction_atomicity, "", "none", "table");
  CHECK_ONE_OF("sink.date-separator", LowerAscii(s.date_separator), "", "none", "year", "month",
               "day");
  if (s.encoder_concurrency < 0) return FieldError{"sink.encoder-concurrency", "must be >= 0"};
  for (size_t i = 0; i < s.dispatchers.size(); ++i) {
    if (!s.dispatchers[i].dispatcher.empty() && !s.dispatchers[i].partition.empty()) {
      return FieldError{"sink.dispatchers[" + std::to_string(i) + "].partition",
                        "dispatcher and partition cannot both be set"};
    }
  }
  if (auto e = CheckCsv(s.csv)) return e;
  return CheckSinkClients(s);
}

std::optional<FieldError> CheckConsistent(const ConsistentConfig& c) {
  CHECK_ONE_OF("consistent.level", c.level, "", "none", "eventual");
  CHECK_ONE_OF("consistent.compression", c.compression, "", "none", "lz4");
  if (c.level != "eventual") return std::nullopt;
  if (c.flush_interval < 50) return FieldError{"consistent.flush-interval", "must be >= 50 (ms)"};
  if (c.meta_flush_interval < 50) {
    return FieldError{"consistent.meta-flush-interval", "must be >= 50 (ms)"};
  }
  if (c.max_log_size < 0) return FieldError{"consistent.max-log-size", "must be >= 0"};
  return std::nullopt;
}

std::optional<FieldError> CheckTopLevel(const ReplicaConfig& c) {
  CHECK_ONE_OF("performance-mode", c.performance_mode, "", "throughput", "low-latency");
  if (c.enable_sync_point && c.sync_point_interval.value < seconds(30)) {
    return FieldError{"sync-point-interval", "must be at least 30s"};
  }
  if (c.enable_sync_point && c.sync_point_retention.value < hours(1)) {
    return FieldError{"sync-point-retention", "must be at least 1h"};
  }
  if (c.changefeed_error_stuck_duration.value < minutes(30)) {
    return FieldError{"changefeed-error-stuck-duration", "must be at least 30m"};
  }
  if (c.mounter_worker_num < 0) return FieldError{"mounter.worker-num", "must be >= 0"};
  return std::nullopt;
}

std::optional<FieldError> CheckOthers(const ReplicaConfig& c) {
  if (c.scheduler.region_threshold < 0) {
    return FieldError{"scheduler.region-threshold", "must be >= 0"};
  }
  if (c.scheduler.write_key_threshold < 0) {
    return FieldError{"scheduler.write-key-threshold", "must be >= 0"};
  }
  CHECK_ONE_OF("integrity.integrity-check-level", c.integrity.integrity_check_level, "none",
               "correctness");
  CHECK_ONE_OF("integrity.corruption-handle-level", c.integrity.corruption_handle_level, "warn",
               "error");
  return std::nullopt;
}

}  // namespace

namespace internal {

std::optional<FieldError> CheckValues(const ReplicaConfig& c) {
  if (auto e = CheckTopLevel(c)) return e;
  if (auto e = CheckSink(c.sink)) return e;
  if (auto e = CheckConsistent(c.consistent)) return e;
  return CheckOthers(c);
}

void Normalize(ReplicaConfig& c) {
  if (c.memory_quota == 0) c.memory_quota = ReplicaConfig().memory_quota;
  if (c.consistent.max_log_size == 0) c.consistent.max_log_size = 64;
  if (c.consistent.flush_interval == 0) c.consistent.flush_interval = 2000;
  if (c.consistent.meta_flush_interval == 0) c.consistent.meta_flush_interval = 200;
}

}  // namespace internal

bool operator==(const FilterSection& a, const FilterSection& b) {
  auto same_rule = [](const filter::EventFilterRule& x, const filter::EventFilterRule& y) {
    return x.matcher == y.matcher && x.ignore_event == y.ignore_event &&
           x.ignore_sql == y.ignore_sql &&
           x.ignore_insert_value_expr == y.ignore_insert_value_expr &&
           x.ignore_update_new_value_expr == y.ignore_update_new_value_expr &&
           x.ignore_update_old_value_expr == y.ignore_update_old_value_expr &&
           x.ignore_delete_value_expr == y.ignore_delete_value_expr &&
           x.ignore_update_only_columns == y.ignore_update_only_columns;
  };
  return a.rules == b.rules && a.ignore_txn_start_ts == b.ignore_txn_start_ts &&
         std::equal(a.event_filters.begin(), a.event_filters.end(), b.event_filters.begin(),
                    b.event_filters.end(), same_rule);
}

Status ValidateValues(const ReplicaConfig& config) {
  if (auto e = internal::CheckValues(config)) {
    return InvalidArgument("invalid value for key \"" + e->key + "\": " + e->message);
  }
  return Status::Ok();
}

filter::FilterConfig ToFilterConfig(const ReplicaConfig& config) {
  filter::FilterConfig out;
  out.rules = config.filter.rules.empty() ? std::vector<std::string>{"*.*"} : config.filter.rules;
  out.case_sensitive = config.case_sensitive;
  out.ignore_txn_start_ts = config.filter.ignore_txn_start_ts;
  out.event_filters = config.filter.event_filters;
  return out;
}

}  // namespace sluice::config
