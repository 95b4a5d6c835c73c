#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/replica_config.h"

namespace sluice::config {
namespace {

using ::testing::HasSubstr;

sink::SinkUri Uri(std::string_view text) {
  auto r = sink::SinkUri::Parse(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : sink::SinkUri{};
}

void ExpectInvalid(const ReplicaConfig& c, std::string_view uri, std::string_view piece) {
  Status st = Validate(c, Uri(uri));
  ASSERT_FALSE(st.ok()) << uri;
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr(piece)) << st.ToString();
}

TEST(SinkChecksTest, DefaultsWorkForMySqlAndBlackhole) {
  EXPECT_TRUE(Validate(ReplicaConfig(), Uri("mysql://root@127.0.0.1:3306/")).ok());
  EXPECT_TRUE(Validate(ReplicaConfig(), Uri("blackhole://")).ok());
}

TEST(SinkChecksTest, ProtocolRequiredForMqAndStorage) {
  ExpectInvalid(ReplicaConfig(), "kafka://127.0.0.1:9092/topic", "required");
  ExpectInvalid(ReplicaConfig(), "file:///tmp/out", "required");
  EXPECT_TRUE(Validate(ReplicaConfig(), Uri("file:///tmp/out?protocol=csv")).ok());
}

TEST(SinkChecksTest, StorageTakesCsvOrCanalJson) {
  ReplicaConfig c;
  c.sink.protocol = "avro";
  ExpectInvalid(c, "s3://bucket/prefix", "csv or canal-json");
  c.sink.protocol = "canal-json";
  EXPECT_TRUE(Validate(c, Uri("s3://bucket/prefix")).ok());
}

TEST(SinkChecksTest, UriProtocolWins) {
  ReplicaConfig c;
  c.sink.protocol = "avro";
  auto r = ValidateAndAdjust(c, Uri("file:///tmp/out?protocol=canal-json"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sink.protocol, "canal-json");
  EXPECT_EQ(r->sink.file_index_width, 20);
}

TEST(SinkChecksTest, UriSafeModeAndAtomicityWin) {
  ReplicaConfig c;
  c.sink.safe_mode = false;
  auto r = ValidateAndAdjust(c, Uri("mysql://h:3306/?safe-mode=true&transaction-atomicity=table"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sink.safe_mode, true);
  EXPECT_EQ(r->sink.transaction_atomicity, "table");
  ExpectInvalid(c, "mysql://h:3306/?safe-mode=maybe", "safe-mode");
}

TEST(SinkChecksTest, ProtocolNotForMySql) {
  ReplicaConfig c;
  c.sink.protocol = "canal-json";
  ExpectInvalid(c, "tidb://h:4000/", "incompatible");
}

TEST(SinkChecksTest, OtherCrossChecks) {
  ReplicaConfig c;
  c.enable_sync_point = true;
  ExpectInvalid(c, "file:///x?protocol=csv", "enable-sync-point");
  // A MySQL downstream could take it, but syncpoints do not exist yet.
  EXPECT_EQ(Validate(c, Uri("mysql://h:3306/")).code(), Code::kNotSupported);

  ReplicaConfig d;
  d.sink.transaction_atomicity = "table";
  ExpectInvalid(d, "kafka://h:9092/t?protocol=canal-json", "atomicity");

  ReplicaConfig e;
  e.sink.delete_only_output_handle_key_columns = true;
  ExpectInvalid(e, "file:///x?protocol=csv", "delete-only-output-handle-key-columns");

  ReplicaConfig f;
  f.sink.csv.delimiter = "";
  ExpectInvalid(f, "mysql://h:3306/", "sink.csv.delimiter");

  ReplicaConfig g;
  g.integrity.integrity_check_level = "correctness";
  g.sink.column_selectors.push_back({{"a.*"}, {"x"}});
  ExpectInvalid(g, "kafka://h:9092/t?protocol=simple", "column-selectors");
  g.sink.column_selectors.clear();
  auto adjusted = ValidateAndAdjust(g, Uri("blackhole://"));
  ASSERT_TRUE(adjusted.ok());
  EXPECT_EQ(adjusted->integrity.integrity_check_level, "none");
}

TEST(SinkChecksTest, FilterMustCompile) {
  ReplicaConfig c;
  c.filter.event_filters.push_back({});
  c.filter.event_filters[0].matcher = {"a.*"};
  c.filter.event_filters[0].ignore_delete_value_expr = "id = 1";
  EXPECT_EQ(Validate(c, Uri("blackhole://")).code(), Code::kNotSupported);
  c.filter.event_filters[0].ignore_delete_value_expr.clear();
  c.filter.event_filters[0].ignore_event = {"no such event"};
  EXPECT_EQ(Validate(c, Uri("blackhole://")).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::config
