// The changefeed config's sink settings reach the sink the server opens:
// merged under the sink URI's own parameters, which win.
#include "node/sink_opener.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/replica_config.h"
#include "sink/mysql/mysql_config.h"
#include "sink/storage/storage_sink.h"

namespace sluice::node {
namespace {

config::ReplicaConfig FromToml(const std::string& toml) {
  Result<config::ReplicaConfig> c = config::ParseReplicaConfigToml(toml);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : config::ReplicaConfig{};
}

TEST(SinkOpenerTest, TheStorageSinkTakesTheConfigsSettingsUnderItsUri) {
  const std::string dir = ::testing::TempDir() + "/sink_opener_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const config::ReplicaConfig config = FromToml(
      "[sink]\nprotocol = \"csv\"\ndate-separator = \"none\"\nfile-index-digit = 8\n"
      "enable-partition-separator = false\n"
      "[sink.csv]\ndelimiter = \"|\"\nnull = \"NULL\"\ninclude-commit-ts = true\n");
  SinkOpenOptions options;
  options.sink_uri = "file://" + dir + "?date-separator=year";  // The URI wins here.
  options.config = config;
  Result<std::unique_ptr<sink::Sink>> opened = OpenSink(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto* storage = dynamic_cast<sink::storage::StorageSink*>(opened->get());
  ASSERT_NE(storage, nullptr);
  const sink::storage::StorageSinkOptions& o = storage->options();
  EXPECT_EQ(o.protocol, sink::storage::Protocol::kCsv);
  EXPECT_EQ(o.date_separator, sink::storage::DateSeparator::kYear);
  EXPECT_EQ(o.file_index_width, 8);
  EXPECT_FALSE(o.enable_partition_separator);
  EXPECT_EQ(o.csv.delimiter, "|");
  EXPECT_EQ(o.csv.null_string, "NULL");
  EXPECT_TRUE(o.csv.include_commit_ts);
  (*opened)->Close();
  std::filesystem::remove_all(dir);
}

TEST(SinkOpenerTest, TheMysqlSinkTakesTheConfigsSettingsUnderItsUri) {
  const config::ReplicaConfig config = FromToml(
      "[sink]\nsafe-mode = true\n"
      "[sink.mysql-config]\nworker-count = 3\nmax-txn-row = 7\nenable-batch-dml = false\n"
      "enable-multi-statement = false\nread-timeout = \"9s\"\n");
  SinkOpenOptions options;
  options.sink_uri = "mysql://root@127.0.0.1:3306/?worker-count=5";
  options.config = config;
  Result<sink::SinkUri> uri = EffectiveSinkUri(options);
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  Result<sink::MysqlSinkConfig> c = sink::MysqlSinkConfig::FromUri(*uri);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->worker_count, 5);  // The URI's.
  EXPECT_EQ(c->max_txn_row, 7);
  EXPECT_TRUE(c->safe_mode);
  EXPECT_FALSE(c->batch_dml);
  EXPECT_FALSE(c->multi_stmt);
  EXPECT_EQ(c->connect.read_timeout, std::chrono::seconds(9));
}

TEST(SinkOpenerTest, ABadConfigValueIsRefusedWhenTheSinkOpens) {
  SinkOpenOptions options;
  options.sink_uri = "file:///tmp/never?protocol=csv";
  options.config.sink.date_separator = "fortnight";  // Never validated here.
  Result<std::unique_ptr<sink::Sink>> opened = OpenSink(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("date-separator"), std::string::npos)
      << opened.status().ToString();
}

}  // namespace
}  // namespace sluice::node
