#include "sink/storage/storage_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>

#include "common/test_util.h"
#include "sink/codec/test_tables.h"
#include "sink/storage/local_fs.h"
#include "sink/storage/storage_sink.h"

namespace sluice::sink::storage {
namespace {

namespace fs = std::filesystem;
using codec::RowOp;
using namespace sluice::sink::testing;  // NOLINT

class StorageReaderTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice-reader-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Writes `events` through a sink with `params`, flushing after each
  // group, and returns the options it used.
  StorageSinkOptions Write(const std::string& params,
                           const std::vector<std::vector<event::DmlEventPtr>>& groups,
                           const event::DdlEvent* ddl_after_first = nullptr) {
    auto options = StorageSinkOptions::FromUri(*SinkUri::Parse("file://" + root_ + "?" + params));
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    auto sink = StorageSink::Create(*options, &clock_);
    EXPECT_TRUE(sink.ok());
    std::atomic<int> flushed{0};
    int added = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (const auto& e : groups[g]) {
        e->AddPostFlush([&flushed] { flushed.fetch_add(1); });
        (*sink)->AddDmlEvent(e);
      }
      added += static_cast<int>(groups[g].size());
      EXPECT_TRUE(PollUntil([&] { return (*sink)->stats().events_encoded >= uint64_t(added); }));
      clock_.Advance(std::chrono::seconds(5));
      EXPECT_TRUE(PollUntil([&] { return flushed.load() >= added; }));
      if (g == 0 && ddl_after_first != nullptr) {
        EXPECT_TRUE((*sink)->WriteBlockEvent(*ddl_after_first).ok());
      }
    }
    (*sink)->AddCheckpointTs(Ts(999));
    (*sink)->Close();
    EXPECT_TRUE((*sink)->status().ok());
    return *options;
  }

  std::string root_;
  ManualClock clock_;
};

TEST_P(StorageReaderTest, ReadsBackWhatTheSinkWrote) {
  const std::string params = GetParam();
  auto kv = KvSchema("db", "kv", 5, Ts(100));
  auto kv2 = KvSchema("db", "kv", 5, Ts(200));
  auto all = AllTypesSchema(Ts(100));
  event::DdlEvent ddl;
  ddl.type = model::ActionType::kModifyTableComment;
  ddl.schema_name = "db";
  ddl.table_name = "kv";
  ddl.query = "ALTER TABLE kv COMMENT 'x'";
  ddl.finished_ts = Ts(200);
  ddl.table_schema = kv2;
  ddl.blocked.table_ids = {5};
  StorageSinkOptions options =
      Write(params,
            {{Dml(kv, Ts(110), {Insert(KvRow(1, "a")), Insert(KvRow(2, "b"))}),
              Dml(all, Ts(111), {Insert(AllTypesRow(1))})},
             {Dml(kv2, Ts(210), {Update(KvRow(1, "a"), KvRow(1, "a2"))}),
              Dml(all, Ts(211), {Delete(AllTypesNullRow(1))})},
             {Dml(kv2, Ts(220), {Delete(KvRow(2, "b"))})}},
            &ddl);
  // A half-written file of an unfinished publish must not be read.
  ASSERT_TRUE(MakeDirs(root_ + "/db/kv/200").ok());
  ASSERT_TRUE(PublishFile(root_ + "/db/kv/200/CDC00000000000000000099" +
                              std::string(options.extension()) + ".tmp.0123",
                          "garbage")
                  .ok());

  auto contents = ReadStorage(root_, ReaderOptions::FromSinkOptions(options));
  ASSERT_TRUE(contents.ok()) << contents.status().ToString();
  EXPECT_EQ(contents->checkpoint_ts, std::optional<uint64_t>(999));
  ASSERT_EQ(contents->tables.size(), 2u);
  const TableData& t_all = contents->tables[0];
  const TableData& t_kv = contents->tables[1];
  EXPECT_EQ(t_all.table, "all_types");
  EXPECT_EQ(t_kv.table, "kv");
  EXPECT_EQ(t_kv.versions.size(), 2u);
  ASSERT_EQ(t_kv.rows.size(), 4u);
  EXPECT_EQ(t_kv.rows[0].row.op, RowOp::kInsert);
  EXPECT_EQ(t_kv.rows[0].table_version, 100u);
  EXPECT_EQ(t_kv.rows[2].row.op, RowOp::kUpdate);
  EXPECT_EQ(t_kv.rows[2].table_version, 200u);
  EXPECT_EQ(t_kv.rows[2].row.columns[1].value, "a2");
  EXPECT_EQ(t_kv.rows[3].row.op, RowOp::kDelete);
  EXPECT_EQ(t_kv.rows[3].row.columns[0].value, "2");

  ASSERT_EQ(t_all.rows.size(), 2u);
  const auto& cols = t_all.rows[0].row.columns;
  ASSERT_EQ(cols.size(), 27u);
  EXPECT_EQ(cols[14].value, std::string("\x05\x07\n\x0f$2+cx<&\xff\xfe-7F", 16));
  EXPECT_EQ(cols[22].value, "b");    // ENUM by name in both protocols.
  EXPECT_EQ(cols[23].value, "a,c");  // SET too.
  EXPECT_EQ(cols[9].name, "c_double");
  for (size_t i = 1; i < 27; ++i) EXPECT_EQ(t_all.rows[1].row.columns[i].value, std::nullopt);

  // The DDL's schema file is among the definitions, with its query.
  bool found = false;
  for (const SchemaFile& f : contents->schema_files) {
    found = found || (f.table_version == 200 && f.query == ddl.query);
  }
  EXPECT_TRUE(found);
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, StorageReaderTest,
    ::testing::Values("protocol=csv&worker-count=2&csv-include-commit-ts=true",
                      "protocol=csv&date-separator=none&csv-quote=&csv-delimiter=%7C",
                      "protocol=canal-json&worker-count=1&enable-tidb-extension=true",
                      "protocol=canal-json&date-separator=year"));

TEST_F(StorageReaderTest, MissingSchemaFileOrBadDataIsCorruption) {
  ReaderOptions o;
  o.date_separator = DateSeparator::kNone;
  ASSERT_TRUE(PublishFile(root_ + "/db/t/5/CDC000001.csv", "\"I\",\"t\",\"db\",1\r\n").ok());
  EXPECT_EQ(ReadStorage(root_, o).status().code(), Code::kCorruption);
  SchemaFile f = SchemaFile::ForTable(*KvSchema("db", "t", 7, Ts(5)), 5, false);
  ASSERT_TRUE(PublishFile(root_ + "/" + f.Path(), f.Marshal()).ok());
  // Three fields short of (op, table, schema) + two columns.
  EXPECT_EQ(ReadStorage(root_, o).status().code(), Code::kCorruption);
  ASSERT_TRUE(PublishFile(root_ + "/db/t/5/CDC000001.csv", "\"I\",\"t\",\"db\",1,\"v\"\r\n").ok());
  auto ok = ReadStorage(root_, o);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->tables.size(), 1u);
  EXPECT_EQ(ok->tables[0].rows.size(), 1u);
  EXPECT_TRUE(ReadStorage(root_ + "/nothing-here", o)->tables.empty());
}

}  // namespace
}  // namespace sluice::sink::storage
