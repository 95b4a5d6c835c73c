#include "config/replica_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace sluice::config {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using ::testing::HasSubstr;

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(SLUICE_CONFIG_TESTDATA) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Expects InvalidArgument whose message contains every piece.
void ExpectError(std::string_view toml, std::initializer_list<std::string_view> pieces) {
  auto r = ParseReplicaConfigToml(toml);
  ASSERT_FALSE(r.ok()) << toml;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  for (auto piece : pieces) EXPECT_THAT(std::string(r.status().message()), HasSubstr(piece));
}

TEST(ReplicaConfigTest, DefaultsAreTiCdcDefaults) {
  ReplicaConfig c;
  EXPECT_EQ(c.memory_quota, 1073741824u);
  EXPECT_FALSE(c.case_sensitive);
  EXPECT_FALSE(c.force_replicate);
  EXPECT_FALSE(c.ignore_ineligible_table);
  EXPECT_TRUE(c.check_gc_safe_point);
  EXPECT_FALSE(c.enable_sync_point);
  EXPECT_EQ(c.sync_point_interval.value, minutes(10));
  EXPECT_EQ(c.sync_point_retention.value, hours(24));
  EXPECT_FALSE(c.bdr_mode);
  EXPECT_EQ(c.changefeed_error_stuck_duration.value, minutes(30));
  EXPECT_EQ(c.filter.rules, std::vector<std::string>{"*.*"});
  EXPECT_EQ(c.mounter_worker_num, 16);
  EXPECT_FALSE(c.sink.protocol.has_value());
  EXPECT_EQ(c.sink.csv.delimiter, ",");
  EXPECT_EQ(c.sink.csv.quote, "\"");
  EXPECT_EQ(c.sink.csv.null_string, "\\N");
  EXPECT_EQ(c.sink.csv.binary_encoding_method, "base64");
  EXPECT_EQ(c.sink.encoder_concurrency, 32);
  EXPECT_EQ(c.sink.terminator, "\r\n");
  EXPECT_EQ(c.sink.date_separator, "day");
  EXPECT_TRUE(c.sink.enable_partition_separator);
  EXPECT_EQ(c.consistent.level, "none");
  EXPECT_EQ(c.consistent.max_log_size, 64);
  EXPECT_EQ(c.consistent.flush_interval, 2000);
  EXPECT_FALSE(c.consistent.use_file_backend);
  EXPECT_FALSE(c.scheduler.enable_table_across_nodes);
  EXPECT_EQ(c.scheduler.region_threshold, 10000);
  EXPECT_EQ(c.scheduler.write_key_threshold, 0);
  EXPECT_EQ(c.integrity.integrity_check_level, "none");
  EXPECT_EQ(c.integrity.corruption_handle_level, "warn");
  EXPECT_TRUE(ValidateValues(c).ok());
}

TEST(ReplicaConfigTest, EmptyFileGivesDefaults) {
  auto r = ParseReplicaConfigToml("");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, ReplicaConfig());
}

TEST(ReplicaConfigTest, ExampleParses) {
  auto r = ParseReplicaConfigToml(ReadTestdata("changefeed.toml"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ReplicaConfig& c = *r;
  EXPECT_EQ(c.memory_quota, 536870912u);
  EXPECT_TRUE(c.case_sensitive);
  EXPECT_EQ(c.sync_point_interval.value, minutes(5));
  EXPECT_EQ(c.sync_point_retention.value, minutes(90));
  EXPECT_EQ(c.changefeed_error_stuck_duration.value, hours(1));
  EXPECT_EQ(c.sql_mode, "ANSI_QUOTES");
  EXPECT_EQ(c.mounter_worker_num, 8);
  EXPECT_EQ(c.filter.rules.size(), 3u);
  EXPECT_EQ(c.filter.ignore_txn_start_ts, (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(c.filter.event_filters.size(), 2u);
  EXPECT_EQ(c.filter.event_filters[0].ignore_sql[1], "add column");
  EXPECT_EQ(c.sink.protocol, "canal-json");
  EXPECT_EQ(c.sink.terminator, "\n");
  EXPECT_EQ(c.sink.file_index_width, 10);
  EXPECT_EQ(c.sink.safe_mode, true);
  ASSERT_EQ(c.sink.dispatchers.size(), 2u);
  EXPECT_EQ(c.sink.dispatchers[0].topic, "{schema}_{table}");
  EXPECT_EQ(c.sink.dispatchers[1].columns, (std::vector<std::string>{"id", "region"}));
  EXPECT_EQ(c.sink.column_selectors[0].columns[1], "!secret");
  EXPECT_EQ(c.sink.csv.delimiter, "|");
  EXPECT_EQ(c.sink.csv.null_string, "NULL");
  EXPECT_TRUE(c.sink.csv.output_field_header);
  EXPECT_FALSE(c.sink.open_output_old_value);
  EXPECT_EQ(c.sink.kafka_config.required_acks, -1);
  EXPECT_EQ(c.sink.mysql_config.max_multi_update_row_count, 40);
  EXPECT_EQ(c.consistent.level, "eventual");
  EXPECT_EQ(c.consistent.storage, "file:///tmp/redo");
  EXPECT_EQ(c.scheduler.write_key_threshold, 3000);
  EXPECT_EQ(c.integrity.corruption_handle_level, "error");
  EXPECT_EQ(c.synced_status.checkpoint_interval, 30);
}

TEST(ReplicaConfigTest, ExampleFilterCompiles) {
  auto r = ParseReplicaConfigToml(ReadTestdata("changefeed.toml"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  filter::FilterConfig fc = ToFilterConfig(*r);
  EXPECT_EQ(fc.rules, r->filter.rules);
  EXPECT_TRUE(fc.case_sensitive);
  EXPECT_EQ(fc.ignore_txn_start_ts, r->filter.ignore_txn_start_ts);
  ASSERT_EQ(fc.event_filters.size(), 2u);
  EXPECT_EQ(fc.event_filters[1].ignore_event, std::vector<std::string>{"all ddl"});
  auto f = filter::Filter::Make(fc);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE((*f)->ShouldIgnoreTable("test", "worker"));
  EXPECT_TRUE((*f)->ShouldIgnoreTable("test", "tmp_1"));
  EXPECT_TRUE((*f)->ShouldIgnoreDml(filter::DmlType::kInsert, "test", "worker", 10));
  EXPECT_TRUE((*f)->ShouldIgnoreStartTs(2));
}

TEST(ReplicaConfigTest, ExpressionFilterIsNotSupportedWhenCompiled) {
  auto r = ParseReplicaConfigToml(R"(
[[filter.event-filters]]
matcher = ["test.*"]
ignore-insert-value-expr = "id > 10"
)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->filter.event_filters[0].ignore_insert_value_expr, "id > 10");
  auto f = filter::Filter::Make(ToFilterConfig(*r));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), Code::kNotSupported);
}

TEST(ReplicaConfigTest, UnknownTopLevelKey) {
  ExpectError("case-sensitive = true\nmemory-quotaa = 5\n",
              {"unknown key \"memory-quotaa\"", "line 2"});
}

TEST(ReplicaConfigTest, UnknownNestedKey) {
  ExpectError("[sink]\nprotocol = \"csv\"\n\n[sink.csv]\ndelimiter = \",\"\n\n[sink]\n",
              {"syntax"});  // a table defined twice is a syntax error
  ExpectError("\n\n[sink]\nencoder-concurrency = 4\n\n\nprotocl = \"csv\"\n",
              {"unknown key \"sink.protocl\" at line 7"});
  ExpectError("[[sink.dispatchers]]\nmatcher = [\"a.*\"]\ntopc = \"t\"\n",
              {"unknown key \"sink.dispatchers[0].topc\" at line 3"});
  ExpectError(
      "[[filter.event-filters]]\nmatcher = [\"a.*\"]\n[[filter.event-filters]]\nignore = 1\n",
      {"unknown key \"filter.event-filters[1].ignore\" at line 4"});
  ExpectError("[sink.kafka-config]\nsasl-pass = \"x\"\n",
              {"unknown key \"sink.kafka-config.sasl-pass\" at line 2"});
  ExpectError("[nope]\nx = 1\n", {"unknown key \"nope\" at line 1"});
}

TEST(ReplicaConfigTest, WrongType) {
  ExpectError("memory-quota = \"1GB\"\n",
              {"\"memory-quota\"", "line 1", "expected non-negative integer", "got string"});
  ExpectError("[sink]\nprotocol = 5\n", {"\"sink.protocol\"", "line 2", "expected string"});
  ExpectError("[filter]\nrules = [\"a.*\", 3]\n", {"\"filter.rules[1]\"", "line 2"});
  ExpectError("filter = 3\n", {"\"filter\"", "expected table"});
  ExpectError("case-sensitive = \"true\"\n", {"\"case-sensitive\"", "expected boolean"});
  ExpectError("memory-quota = -1\n", {"\"memory-quota\"", "non-negative"});
}

TEST(ReplicaConfigTest, SyntaxError) {
  ExpectError("case-sensitive = true\n[sink\nprotocol = \"csv\"\n", {"syntax error", "line 2"});
  ExpectError("a = \n", {"syntax error", "line 1", "column"});
}

TEST(ReplicaConfigTest, BadValues) {
  ExpectError("\n[sink]\nprotocol = \"json\"\n",
              {"invalid value for key \"sink.protocol\" at line 3", "canal-json"});
  ExpectError("[consistent]\nlevel = \"strong\"\n", {"\"consistent.level\" at line 2"});
  ExpectError("[sink.csv]\ndelimiter = \"\"\n", {"\"sink.csv.delimiter\" at line 2"});
  ExpectError("[sink.csv]\ndelimiter = \"abcd\"\n", {"\"sink.csv.delimiter\""});
  ExpectError("[sink.csv]\ndelimiter = \"'\"\nquote = \"'\"\n",
              {"\"sink.csv.delimiter\"", "quote"});
  ExpectError("[sink.csv]\nbinary-encoding-method = \"b32\"\n",
              {"\"sink.csv.binary-encoding-method\""});
  ExpectError("enable-sync-point = true\nsync-point-interval = \"10s\"\n",
              {"\"sync-point-interval\" at line 2", "30s"});
  ExpectError("[sink]\ndate-separator = \"week\"\n", {"\"sink.date-separator\""});
  ExpectError("[integrity]\nintegrity-check-level = \"all\"\n",
              {"\"integrity.integrity-check-level\""});
  ExpectError("[sink.kafka-config]\ndial-timeout = \"10\"\n",
              {"\"sink.kafka-config.dial-timeout\"", "missing unit"});
}

TEST(ReplicaConfigTest, BadDuration) {
  ExpectError("sync-point-interval = \"10x\"\n",
              {"\"sync-point-interval\" at line 1", "unknown unit"});
  ExpectError("sync-point-interval = \"\"\n", {"\"sync-point-interval\"", "empty"});
  ExpectError("sync-point-interval = true\n", {"\"sync-point-interval\"", "duration"});
}

TEST(ReplicaConfigTest, ZeroMemoryQuotaMeansDefault) {
  auto r = ParseReplicaConfigToml("memory-quota = 0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->memory_quota, ReplicaConfig().memory_quota);
}

}  // namespace
}  // namespace sluice::config
