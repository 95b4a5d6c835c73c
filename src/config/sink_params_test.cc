// Every [sink] key that reaches a sink does so as the sink URI parameter it
// names (the URI's own parameter winning), and every key whose feature does
// not exist is refused at create and update naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config/replica_config.h"

namespace sluice::config {
namespace {

using ::testing::HasSubstr;

ReplicaConfig FromToml(const std::string& toml) {
  Result<ReplicaConfig> c = ParseReplicaConfigToml(toml);
  EXPECT_TRUE(c.ok()) << toml << ": " << c.status().ToString();
  return c.ok() ? *c : ReplicaConfig{};
}

struct Applied {
  std::string toml;
  std::string scheme;
  std::string param;
  std::string value;
};

TEST(SinkParamsTest, EachAppliedKeyBecomesItsSinkParameter) {
  const std::vector<Applied> cases = {
      {"[sink]\nprotocol = \"canal-json\"", "file", "protocol", "canal-json"},
      {"[sink]\ndate-separator = \"month\"", "file", "date-separator", "month"},
      {"[sink]\nenable-partition-separator = false", "file", "enable-partition-separator", "false"},
      {"[sink]\nfile-index-digit = 8", "file", "file-index-digit", "8"},
      {"[sink]\nterminator = \"\\n\"", "file", "terminator", "\n"},
      {"[sink]\nonly-output-updated-columns = true", "file", "only-output-updated-columns", "true"},
      {"[sink.csv]\ndelimiter = \"|\"", "file", "csv-delimiter", "|"},
      {"[sink.csv]\nquote = \"'\"", "file", "csv-quote", "'"},
      {"[sink.csv]\nnull = \"NULL\"", "file", "csv-null", "NULL"},
      {"[sink.csv]\ninclude-commit-ts = true", "file", "csv-include-commit-ts", "true"},
      {"[sink.csv]\noutput-old-value = true", "file", "csv-output-old-value", "true"},
      {"[sink.csv]\noutput-field-header = true", "file", "csv-output-field-header", "true"},
      {"[sink.csv]\nbinary-encoding-method = \"hex\"", "file", "csv-binary-encoding-method", "hex"},
      {"[sink]\nsafe-mode = true", "mysql", "safe-mode", "true"},
      {"[sink.mysql-config]\nworker-count = 4", "mysql", "worker-count", "4"},
      {"[sink.mysql-config]\nmax-txn-row = 64", "tidb", "max-txn-row", "64"},
      {"[sink.mysql-config]\nenable-batch-dml = false", "mysql", "batch-dml-enable", "false"},
      {"[sink.mysql-config]\nenable-multi-statement = false", "mysql", "multi-stmt-enable",
       "false"},
      {"[sink.mysql-config]\nread-timeout = \"3s\"", "mysql", "read-timeout", "3s"},
      {"[sink.mysql-config]\nwrite-timeout = \"4s\"", "mysql", "write-timeout", "4s"},
      {"[sink.mysql-config]\ntimeout = \"5s\"", "mysql", "timeout", "5s"},
      {"[sink.mysql-config]\nssl-ca = \"/ca.pem\"", "mysql+ssl", "ssl-ca", "/ca.pem"},
      {"[sink.mysql-config]\nssl-cert = \"/c.pem\"", "mysql+ssl", "ssl-cert", "/c.pem"},
      {"[sink.mysql-config]\nssl-key = \"/k.pem\"", "mysql+ssl", "ssl-key", "/k.pem"},
  };
  for (const Applied& c : cases) {
    std::map<std::string, std::string> params = SinkParams(FromToml(c.toml), c.scheme);
    auto it = params.find(c.param);
    ASSERT_NE(it, params.end()) << c.toml;
    EXPECT_EQ(it->second, c.value) << c.toml;
  }
}

TEST(SinkParamsTest, DefaultsAreTheSinksAndOtherSchemesGetNone) {
  std::map<std::string, std::string> file = SinkParams(ReplicaConfig{}, "file");
  EXPECT_EQ(file.at("date-separator"), "day");
  EXPECT_EQ(file.at("enable-partition-separator"), "true");
  EXPECT_EQ(file.count("file-index-digit"), 0u);  // The sink's own (20).
  EXPECT_EQ(file.at("csv-delimiter"), ",");
  // Unset MySQL settings leave the URI and the sink's defaults alone.
  EXPECT_TRUE(SinkParams(ReplicaConfig{}, "mysql").empty());
  EXPECT_TRUE(
      SinkParams(FromToml("[sink.mysql-config]\nworker-count = 4"), "file").count("worker-count") ==
      0);
  EXPECT_TRUE(SinkParams(FromToml("[sink]\ndate-separator = \"none\""), "blackhole").empty());
}

TEST(SinkParamsTest, KeysWithoutTheirFeatureAreRefusedNamingThem) {
  struct Refused {
    std::string toml;
    std::string key;
  };
  const std::vector<Refused> cases = {
      {"enable-sync-point = true", "enable-sync-point"},
      {"bdr-mode = true", "bdr-mode"},
      {"enable-table-monitor = true", "enable-table-monitor"},
      {"[scheduler]\nenable-table-across-nodes = true", "scheduler.enable-table-across-nodes"},
      {"[consistent]\nlevel = \"eventual\"\nstorage = \"file:///tmp/redo\"", "consistent.level"},
      {"[[sink.column-selectors]]\nmatcher = [\"a.*\"]\ncolumns = [\"c\"]",
       "sink.column-selectors"},
      {"[sink]\ndelete-only-output-handle-key-columns = true",
       "sink.delete-only-output-handle-key-columns"},
      {"[sink.csv]\noutput-handle-key = true", "sink.csv.output-handle-key"},
      {"[sink.mysql-config]\nmax-multi-update-row-size = 1024",
       "sink.mysql-config.max-multi-update-row-size"},
      {"[sink.mysql-config]\nmax-multi-update-row = 40", "sink.mysql-config.max-multi-update-row"},
      {"[sink.mysql-config]\ntidb-txn-mode = \"pessimistic\"", "sink.mysql-config.tidb-txn-mode"},
      {"[sink.mysql-config]\ntime-zone = \"UTC\"", "sink.mysql-config.time-zone"},
      {"[sink.mysql-config]\nenable-cache-prepared-statement = true",
       "sink.mysql-config.enable-cache-prepared-statement"},
  };
  Result<sink::SinkUri> uri = sink::SinkUri::Parse("mysql://root@127.0.0.1:3306/");
  ASSERT_TRUE(uri.ok());
  for (const Refused& c : cases) {
    Status st = Validate(FromToml(c.toml), *uri);
    ASSERT_FALSE(st.ok()) << c.toml;
    EXPECT_EQ(st.code(), Code::kNotSupported) << st.ToString();
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.key)) << st.ToString();
  }
  EXPECT_TRUE(Validate(ReplicaConfig{}, *uri).ok());
}

}  // namespace
}  // namespace sluice::config
