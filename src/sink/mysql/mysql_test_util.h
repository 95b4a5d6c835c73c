// Test helpers for the MySQL sink: schemas, rows and transactions built by
// hand, a connection to the test server named by SLUICE_TEST_MYSQL, and a
// fixture that gives each test its own database there.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "event/events.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/mysql/mysql_sink.h"

namespace sluice::sink::testing {

// A public column; strings get utf8mb4_bin, everything else the binary
// charset. `id` doubles as offset + 1.
model::ColumnInfo Col(int64_t id, std::string_view name, uint8_t tp, uint64_t flag = 0);
model::IndexInfo Index(int64_t id, std::string_view name, std::vector<std::string> cols,
                       bool primary, bool unique);
// `id BIGINT PRIMARY KEY` (the handle) followed by `columns`.
model::TableInfo IntHandleTable(int64_t table_id, std::string_view name,
                                std::vector<model::ColumnInfo> columns);
event::TableSchemaPtr Schema(std::string db, model::TableInfo info);

event::RowChange Insert(std::vector<::sluice::codec::Datum> row);
event::RowChange Delete(std::vector<::sluice::codec::Datum> pre);
event::RowChange Update(std::vector<::sluice::codec::Datum> pre,
                        std::vector<::sluice::codec::Datum> row);
event::DmlEventPtr Txn(const event::TableSchemaPtr& schema, uint64_t commit_ts,
                       std::vector<event::RowChange> rows, DispatcherId dispatcher = {0, 1});

// The SLUICE_TEST_MYSQL URI, or nullopt (tests then GTEST_SKIP naming it).
std::optional<std::string> TestMysqlUri();
Result<std::unique_ptr<MysqlConnection>> ConnectTestServer();
// A name unique in this process and run ("prefix_<pid>_<n>").
std::string UniqueName(std::string_view prefix);

// A database of its own on the SLUICE_TEST_MYSQL server per test (dropped
// afterwards), a plain connection to check results, and sinks built on it.
// Skips the test when SLUICE_TEST_MYSQL is not set.
class MysqlSinkFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A sink on the test server with extra URI parameters ("worker-count=2").
  // An empty changefeed id is replaced by a new unique one; replicating_ts
  // defaults to 1: no automatic safe mode.
  std::unique_ptr<MysqlSink> NewSink(std::string_view params = "", std::string_view changefeed = "",
                                     Ts replicating_ts = Ts(1));
  MysqlSinkOptions Options(std::string_view changefeed, Ts replicating_ts);
  Result<std::unique_ptr<MysqlSink>> TryNewSink(std::string_view params, MysqlSinkOptions options);

  void Exec(std::string_view sql);
  std::vector<SqlRow> Query(std::string_view sql);
  // The single value of a one-row, one-column query.
  std::optional<std::string> Scalar(std::string_view sql);
  // A DDL event running `query` in this test's database.
  event::DdlEvent Ddl(model::ActionType type, std::string query, uint64_t ts,
                      std::vector<int64_t> blocked = {}, std::vector<event::TableRef> add = {});

  std::string uri_;
  std::string db_;
  std::unique_ptr<MysqlConnection> conn_;
};

// Waits until `n` PostFlush callbacks counted into `flushed`, or the sink
// failed; returns whether they did.
bool WaitFlushed(const MysqlSink& sink, const std::atomic<int>& flushed, int n);

}  // namespace sluice::sink::testing
