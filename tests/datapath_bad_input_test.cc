// Bad input on the changefeed data path, end to end against simkv and a real
// MariaDB, on the shipping node (real maintainer and changefeed path): a row
// that does not decode with its table info, a DDL job row that does not
// parse, and a DDL the downstream refuses for good. Each must become the
// changefeed's typed error, naming the commit ts it could not pass; nothing
// crashes, the checkpoint never passes the failing ts, and the tables
// TiCDC's semantics leave running keep going until the coordinator acts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <thread>

#include "checker/mysql_reader.h"
#include "codec/rowcodec_v2.h"
#include "datapath/scenario_fixture.h"
#include "simkv/ddl_job_row.h"
#include "simkv/row_writer.h"
#include "simkv/tidb_tables.h"
#include "simkv/txn_client.h"
#include "sink/sink_uri.h"

namespace sluice {
namespace {

using testing::DataPathScenario;
constexpr auto kWait = std::chrono::seconds(60);
const char kDatabase[] = "badinput";

// Bounded wait on a condition of the running path.
bool WaitFor(const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Commits `value` at `key` (a delete when nullopt) in one transaction;
// returns its commit ts.
Ts CommitRaw(DataPathScenario& sc, std::string key, std::optional<std::string> value) {
  simkv::TxnClient& txn_client = sc.env().cluster->txn();
  auto txn = txn_client.Begin();
  EXPECT_TRUE(txn.ok());
  if (!txn.ok()) return Ts();
  if (value.has_value()) {
    txn->Put(std::move(key), std::move(*value));
  } else {
    txn->Delete(std::move(key));
  }
  auto commit = txn_client.Commit(*txn);
  EXPECT_TRUE(commit.ok()) << commit.status().ToString();
  return commit.ok() ? *commit : Ts();
}

std::string DumpErrors(const std::vector<Status>& errors) {
  std::string out;
  for (const Status& e : errors) out += e.ToString() + "\n";
  return out;
}

// The commit ts an error message names after `prefix` ("... at ts N").
std::optional<uint64_t> TsAfter(std::string_view message, std::string_view prefix) {
  const size_t at = message.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  uint64_t ts = 0;
  size_t i = at + prefix.size();
  for (; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    ts = ts * 10 + static_cast<uint64_t>(message[i] - '0');
  }
  if (i == at + prefix.size()) return std::nullopt;
  return ts;
}

class DataPathBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* uri = std::getenv("SLUICE_TEST_MYSQL");
    if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
    uri_ = uri;
    sc_ = std::make_unique<DataPathScenario>(7, testing::PlainScenarioWorkload(7, kDatabase));
    sc_->SetUpCluster();
    ASSERT_TRUE(sc_->PrepareMysql(uri_).ok());
    tables_ = sc_->workload().Tables();
    ASSERT_EQ(tables_.size(), 2u);
  }
  void TearDown() override {
    if (path_ != nullptr) path_->Stop();
    if (sc_ != nullptr) sc_->TearDown();
  }
  void StartPath(const std::string& uri) {
    auto path = sc_->StartPath(uri, sc_->start());
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    path_ = std::move(path).value();
  }
  // The ground truth of the table named `name` at `ts`, and MariaDB's copy.
  void ExpectTableMatches(const std::string& name, Ts ts) {
    auto expected = sc_->ExpectedTables(ts, [&](const checker::TableName& t) {
      return t == checker::TableName{sc_->database(), name};
    });
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    ASSERT_EQ(expected->size(), 1u);
    auto actual = checker::ReadMysqlState(uri_, *expected, {sc_->database()});
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    std::erase_if(*actual, [&](const auto& table) { return expected->count(table.first) == 0; });
    checker::DiffReport report = checker::Compare(*expected, *actual);
    std::ostringstream out;
    report.Print(out);
    EXPECT_TRUE(report.ok()) << out.str();
    EXPECT_GT(report.rows_compared, 0u);
  }
  int64_t TableId(size_t i) const { return tables_[i].info.id; }
  std::string TableName(size_t i) const { return tables_[i].info.name.lower; }

  std::string uri_;
  std::unique_ptr<DataPathScenario> sc_;
  std::vector<simkv::WorkloadTable> tables_;
  std::unique_ptr<testing::ChangefeedRunner> path_;
};

TEST_F(DataPathBadInputTest, UndecodableRowFailsItsTableAtItsTsAndOthersGoOn) {
  StartPath(uri_);
  sc_->RunWorkload(30, nullptr, /*faults=*/false);
  // A row of the first table whose value is not a row at all.
  simkv::RowWriter writer(tables_[0].info);
  auto key = writer.Key(1'000'000);
  ASSERT_TRUE(key.ok());
  const Ts bad = CommitRaw(*sc_, *key, std::string("\x80\x00garbage", 9));
  sc_->RunWorkload(30, nullptr, /*faults=*/false);
  CommitRaw(*sc_, *key, std::nullopt);  // So the ground truth decodes again.
  auto end = sc_->env().pd->GetTs();
  ASSERT_TRUE(end.ok());

  // The other table goes past the bad row and through the end.
  ASSERT_TRUE(WaitFor([&] { return path_->TableCheckpoint(TableId(1)).value_or(Ts()) >= *end; }))
      << path_->status().ToString();
  // The changefeed's error is the failed table's, at the bad row.
  ASSERT_TRUE(WaitFor([&] { return !path_->status().ok(); }));
  const Status status = path_->status();
  EXPECT_EQ(status.code(), Code::kCorruption) << status.ToString();
  EXPECT_EQ(path_->errors().size(), 1u) << DumpErrors(path_->errors());
  const std::string message(status.message());
  EXPECT_NE(message.find(fmt::format("dispatcher of table {} ", TableId(0))), std::string::npos)
      << message;
  EXPECT_EQ(TsAfter(message, "failed at ts "), bad.value()) << message;
  // The failed table and the changefeed stay before the bad row.
  EXPECT_LT(path_->TableCheckpoint(TableId(0)).value_or(Ts()), bad);
  EXPECT_LT(path_->checkpoint(), bad);
  Ts other = *path_->TableCheckpoint(TableId(1));
  path_->Stop();
  ExpectTableMatches(TableName(1), other);
}

TEST_F(DataPathBadInputTest, DdlJobThatDoesNotParseStopsTheChangefeedBeforeIt) {
  StartPath(uri_);
  sc_->RunWorkload(30, nullptr, /*faults=*/false);
  // A job row whose job_meta is cut in the middle of the JSON document.
  model::TableInfo job_table = simkv::DdlJobTableInfo();
  const int64_t ids[] = {job_table.FindColumnByName("job_meta")->id};
  const codec::Datum values[] = {codec::Datum::Bytes("{\"id\": 9999, \"type\": ")};
  std::string value;
  ASSERT_TRUE(codec::EncodeRowV2(ids, values, &value).ok());
  const Ts bad = CommitRaw(*sc_, simkv::DdlJobRowKey(9999), value);
  sc_->RunWorkload(30, nullptr, /*faults=*/false);

  // Everything before the job reaches the downstream; nothing after it.
  const Ts last_good(bad.value() - 1);
  ASSERT_TRUE(WaitFor([&] { return path_->checkpoint() >= last_good; }))
      << "checkpoint " << path_->checkpoint().value() << "\n"
      << path_->status().ToString();
  ASSERT_TRUE(WaitFor([&] { return !path_->status().ok(); }));
  const Status status = path_->status();
  EXPECT_EQ(status.code(), Code::kCorruption) << status.ToString();
  EXPECT_EQ(path_->errors().size(), 1u) << DumpErrors(path_->errors());
  EXPECT_EQ(TsAfter(status.message(), "schema store failed at ts "), bad.value())
      << status.ToString();
  EXPECT_EQ(path_->checkpoint(), last_good);
  path_->Stop();
  ExpectTableMatches(TableName(0), last_good);
  ExpectTableMatches(TableName(1), last_good);
}

TEST_F(DataPathBadInputTest, DdlTheDownstreamRefusesIsAFatalErrorAtItsTs) {
  // A sink user that may change rows but not create tables.
  auto root = sink::SinkUri::Parse(uri_);
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(
      checker::ExecSql(uri_, {"CREATE USER IF NOT EXISTS 'sluice_nocreate'@'%' IDENTIFIED BY 'pw'",
                              "GRANT ALL PRIVILEGES ON `tidb_cdc`.* TO 'sluice_nocreate'@'%'",
                              fmt::format("GRANT SELECT, INSERT, UPDATE, DELETE ON `{}`.* TO "
                                          "'sluice_nocreate'@'%'",
                                          sc_->database())})
          .ok());
  StartPath(
      fmt::format("mysql://sluice_nocreate:pw@{}:{}/", root->host, root->port.value_or(3306)));
  sc_->RunWorkload(20, nullptr, /*faults=*/false);
  simkv::DdlRequest create;
  create.kind = simkv::DdlKind::kCreateTable;
  auto job = sc_->workload().RunDdl(create);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  sc_->RunWorkload(10, nullptr, /*faults=*/false);

  ASSERT_TRUE(WaitFor([&] { return !path_->status().ok(); }));
  const Status status = path_->status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status.ToString();
  EXPECT_FALSE(status.retryable()) << status.ToString();
  // The table trigger (table 0) owns the DDL and fails on it: the sink's
  // error names the job, the DDL's commit ts and the server's error. The
  // trigger reports the ts it could not pass: the DDL's, or (when its sink
  // check saw the sticky sink error first) its checkpoint's next ts.
  const std::string message(status.message());
  EXPECT_NE(message.find("dispatcher of table 0 "), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("job {}", job->id)), std::string::npos) << message;
  const std::optional<uint64_t> ddl_ts = TsAfter(message, "commit ts ");
  ASSERT_TRUE(ddl_ts.has_value()) << message;
  EXPECT_GE(*ddl_ts, job->binlog->finished_ts);
  EXPECT_NE(message.find("1142"), std::string::npos) << message;
  const std::optional<uint64_t> failed_at = TsAfter(message, "failed at ts ");
  ASSERT_TRUE(failed_at.has_value()) << message;
  EXPECT_LE(*failed_at, *ddl_ts) << message;
  EXPECT_LT(path_->checkpoint(), Ts(*ddl_ts));
  for (const Status& e : path_->errors()) {
    EXPECT_FALSE(e.retryable()) << DumpErrors(path_->errors());
    const std::optional<uint64_t> at = TsAfter(e.message(), "failed at ts ");
    if (at.has_value()) {
      EXPECT_LE(*at, *ddl_ts) << DumpErrors(path_->errors());
    }
  }
  ASSERT_TRUE(checker::ExecSql(uri_, {"DROP USER 'sluice_nocreate'@'%'"}).ok());
}

}  // namespace
}  // namespace sluice
