#include "sink/storage/storage_sink.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <ctime>
#include <filesystem>

#include "codec/mysql_type.h"
#include "common/test_util.h"
#include "sink/codec/test_tables.h"
#include "sink/storage/local_fs.h"
#include "sink/storage/schema_file.h"

namespace sluice::sink::storage {
namespace {

namespace fs = std::filesystem;
using namespace sluice::sink::testing;  // NOLINT

std::string Slurp(const std::string& path) {
  auto r = ReadFileIfExists(path);
  return r.ok() && r->has_value() ? **r : std::string("<missing>");
}

// Every regular file under `root`, relative, sorted.
std::vector<std::string> AllFiles(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class StorageSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice-storage-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    if (sink_ != nullptr) sink_->Close();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A sink on root_ from URI parameters (protocol etc.).
  void Open(std::string params, WritePermit permit = nullptr) {
    auto uri = SinkUri::Parse("file://" + root_ + "?" + params);
    ASSERT_TRUE(uri.ok()) << uri.status().ToString();
    auto options = StorageSinkOptions::FromUri(*uri);
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    options->write_permit = std::move(permit);
    auto sink = StorageSink::Create(*options, &clock_);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    sink_ = std::move(sink).value();
  }

  // Adds an event that counts its PostFlush in flushed_.
  void Add(event::DmlEventPtr e) {
    e->AddPostFlush([this] { flushed_.fetch_add(1); });
    sink_->AddDmlEvent(std::move(e));
  }
  void WaitEncoded(uint64_t n) {
    ASSERT_TRUE(PollUntil([&] { return sink_->stats().events_encoded >= n; }));
  }
  void WaitFlushed(int n) {
    ASSERT_TRUE(PollUntil([&] { return flushed_.load() >= n; })) << flushed_.load();
  }
  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  std::string root_;
  ManualClock clock_;
  std::unique_ptr<StorageSink> sink_;
  std::atomic<int> flushed_{0};
};

constexpr char kFile1[] = "CDC00000000000000000001.csv";

TEST_F(StorageSinkTest, FilesAppearOnlyAfterTheFlushInterval) {
  Open("protocol=csv&date-separator=none&worker-count=2&csv-include-commit-ts=true");
  auto schema = KvSchema("db", "kv", 5);
  Add(Dml(schema, Ts(433305438660591626), {Insert(KvRow(1, "a")), Insert(KvRow(2, "b"))}));
  WaitEncoded(1);
  clock_.Advance(std::chrono::seconds(4));
  EXPECT_EQ(flushed_.load(), 0);
  EXPECT_TRUE(AllFiles(root_).empty());

  clock_.Advance(std::chrono::seconds(1));
  WaitFlushed(1);
  const std::string schema_rel = SchemaFile::ForTable(*schema, 100, false).Path();
  EXPECT_EQ(AllFiles(root_), (std::vector<std::string>{std::string("db/kv/100/") + kFile1,
                                                       "db/kv/100/meta/CDC.index", schema_rel}));
  EXPECT_EQ(Slurp(Path(std::string("db/kv/100/") + kFile1)),
            "\"I\",\"kv\",\"db\",433305438660591626,1,\"a\"\r\n"
            "\"I\",\"kv\",\"db\",433305438660591626,2,\"b\"\r\n");
  EXPECT_EQ(Slurp(Path("db/kv/100/meta/CDC.index")), std::string(kFile1) + "\n");
  EXPECT_EQ(Slurp(Path(schema_rel)), SchemaFile::ForTable(*schema, 100, false).Marshal());
  EXPECT_EQ(sink_->stats().rows_written, 2u);

  // The next flush takes the next index.
  Add(Dml(schema, Ts(433305438660591627), {Delete(KvRow(1, "a"))}));
  WaitEncoded(2);
  clock_.Advance(std::chrono::seconds(5));
  WaitFlushed(2);
  EXPECT_EQ(Slurp(Path("db/kv/100/CDC00000000000000000002.csv")),
            "\"D\",\"kv\",\"db\",433305438660591627,1,\"a\"\r\n");
  EXPECT_EQ(Slurp(Path("db/kv/100/meta/CDC.index")), "CDC00000000000000000002.csv\n");
  EXPECT_TRUE(sink_->status().ok());
}

// The write permit is asked before every file: once refused, no data,
// index, schema or metadata file appears and the sink fails, typed.
TEST_F(StorageSinkTest, ARefusedWritePermitPublishesNoFile) {
  std::atomic<bool> allowed{true};
  Open("protocol=csv&date-separator=none&worker-count=1",
       [&]() -> Status { return allowed.load() ? Status::Ok() : StaleOwner("session ended"); });
  auto schema = KvSchema("db", "kv", 5);
  Add(Dml(schema, Ts(433305438660591626), {Insert(KvRow(1, "a"))}));
  WaitEncoded(1);
  clock_.Advance(std::chrono::seconds(5));
  WaitFlushed(1);
  const std::vector<std::string> before = AllFiles(root_);
  ASSERT_FALSE(before.empty());

  allowed = false;
  Add(Dml(schema, Ts(433305438660591627), {Insert(KvRow(2, "b"))}));
  WaitEncoded(2);
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(PollUntil([&] { return !sink_->status().ok(); }));
  EXPECT_EQ(sink_->status().code(), Code::kStaleOwner) << sink_->status().ToString();
  EXPECT_EQ(flushed_.load(), 1);
  EXPECT_EQ(AllFiles(root_), before);
  EXPECT_EQ(Slurp(Path("db/kv/100/meta/CDC.index")), std::string(kFile1) + "\n");
}

TEST_F(StorageSinkTest, EmptyEventIsFlushedAtOnce) {
  Open("protocol=csv&worker-count=1");
  Add(Dml(KvSchema("db", "kv", 5), Ts(10), {}));
  WaitFlushed(1);
  EXPECT_TRUE(AllFiles(root_).empty());
}

TEST_F(StorageSinkTest, SizeLimitRollsOverWithoutWaiting) {
  Open("protocol=csv&date-separator=none&file-size=1024&file-index-width=6&worker-count=1");
  auto schema = KvSchema("db", "kv", 5);
  const std::string big(600, 'x');
  Add(Dml(schema, Ts(10), {Insert(KvRow(1, big))}));
  WaitEncoded(1);
  EXPECT_EQ(flushed_.load(), 0);
  Add(Dml(schema, Ts(11), {Insert(KvRow(2, big))}));  // Past 1 KiB: flushed now.
  WaitFlushed(2);
  Add(Dml(schema, Ts(12), {Insert(KvRow(3, "small"))}));
  WaitEncoded(3);
  EXPECT_EQ(AllFiles(root_).size(), 3u);  // Data, index, schema.
  std::string first = Slurp(Path("db/kv/100/CDC000001.csv"));
  EXPECT_NE(first.find(",1,\"x"), std::string::npos);
  EXPECT_NE(first.find(",2,\"x"), std::string::npos);
  clock_.Advance(std::chrono::seconds(5));
  WaitFlushed(3);
  EXPECT_EQ(Slurp(Path("db/kv/100/CDC000002.csv")), "\"I\",\"kv\",\"db\",3,\"small\"\r\n");
}

TEST_F(StorageSinkTest, DateAndPartitionDirectories) {
  Open("protocol=canal-json&worker-count=1");  // date-separator defaults to day.
  std::time_t secs = std::chrono::system_clock::to_time_t(clock_.WallNow());
  std::tm tm{};
  localtime_r(&secs, &tm);
  char date[16];
  std::strftime(date, sizeof(date), "%Y-%m-%d", &tm);

  model::TableInfo info = KvSchema("db", "p", 90)->info();
  info.partition.emplace();
  info.partition->enable = true;
  auto schema = *event::TableSchema::Make("db", 2, info, Ts(100));
  Add(Dml(schema, Ts(20), {Insert(KvRow(1, "a"))}, /*physical_table_id=*/91));
  Add(Dml(schema, Ts(21), {Insert(KvRow(2, "b"))}, /*physical_table_id=*/92));
  WaitEncoded(2);
  clock_.Advance(std::chrono::seconds(5));
  WaitFlushed(2);
  const std::string d = date;
  EXPECT_EQ(Slurp(Path("db/p/100/91/" + d + "/meta/CDC.index")), "CDC00000000000000000001.json\n");
  std::string json = Slurp(Path("db/p/100/92/" + d + "/CDC00000000000000000001.json"));
  EXPECT_TRUE(json.starts_with("{\"id\":0,\"database\":\"db\",\"table\":\"p\"")) << json;
  EXPECT_TRUE(json.ends_with("}\r\n"));
}

TEST_F(StorageSinkTest, DdlFlushesTheTableThenWritesItsSchemaFile) {
  Open("protocol=csv&date-separator=none&worker-count=2");
  auto v100 = KvSchema("db", "kv", 5, Ts(100));
  auto other = KvSchema("db", "other", 6, Ts(100));
  Add(Dml(v100, Ts(150), {Insert(KvRow(1, "a"))}));
  Add(Dml(other, Ts(151), {Insert(KvRow(9, "z"))}));
  WaitEncoded(2);

  event::DdlEvent ddl;
  ddl.type = model::ActionType::kModifyTableComment;
  ddl.schema_name = "db";
  ddl.table_name = "kv";
  ddl.table_id = 5;
  ddl.query = "ALTER TABLE `db`.`kv` COMMENT = 'c'";
  ddl.finished_ts = Ts(200);
  ddl.table_schema = KvSchema("db", "kv", 5, Ts(200));
  ddl.blocked.table_ids = {5};
  ASSERT_TRUE(sink_->WriteBlockEvent(ddl).ok());
  // kv's data went out before the DDL returned; `other` still waits.
  EXPECT_EQ(flushed_.load(), 1);
  EXPECT_EQ(Slurp(Path(std::string("db/kv/100/") + kFile1)), "\"I\",\"kv\",\"db\",1,\"a\"\r\n");
  SchemaFile ddl_file = SchemaFile::ForDdl(ddl, false);
  EXPECT_EQ(Slurp(Path(ddl_file.Path())), ddl_file.Marshal());
  EXPECT_NE(ddl_file.Marshal().find("\"Query\": \"ALTER TABLE `db`.`kv` COMMENT = 'c'\""),
            std::string::npos);
  EXPECT_NE(ddl_file.Marshal().find("\"Type\": 17"), std::string::npos);

  // Rows of the new version go to its own directory, under the DDL's file.
  Add(Dml(ddl.table_schema, Ts(250), {Insert(KvRow(2, "b"))}));
  WaitEncoded(3);
  clock_.Advance(std::chrono::seconds(5));
  WaitFlushed(3);
  EXPECT_EQ(Slurp(Path(std::string("db/kv/200/") + kFile1)), "\"I\",\"kv\",\"db\",2,\"b\"\r\n");
  std::vector<std::string> meta;
  auto listed = ListDir(Path("db/kv/meta"));
  ASSERT_TRUE(listed.ok());
  for (const auto& e : *listed) meta.push_back(e.name);
  ASSERT_EQ(meta.size(), 2u);  // schema_100_* and schema_200_*; no third one.
  EXPECT_TRUE(meta[0].starts_with("schema_100_"));
  EXPECT_TRUE(meta[1].starts_with("schema_200_"));

  event::DdlEvent create_db;
  create_db.type = model::ActionType::kCreateSchema;
  create_db.schema_name = "newdb";
  create_db.query = "CREATE DATABASE `newdb`";
  create_db.finished_ts = Ts(300);
  create_db.blocked.influence = event::InfluenceType::kAll;
  Add(Dml(v100, Ts(260), {Insert(KvRow(3, "c"))}));
  Add(Dml(other, Ts(261), {Insert(KvRow(8, "y"))}));
  WaitEncoded(5);
  ASSERT_TRUE(sink_->WriteBlockEvent(create_db).ok());
  EXPECT_EQ(flushed_.load(), 5);  // A cluster-wide DDL flushes every table first.
  EXPECT_TRUE(fs::exists(Path(SchemaFile::ForDdl(create_db, false).Path())));
  EXPECT_TRUE(SchemaFile::ForDdl(create_db, false).Path().starts_with("newdb/meta/schema_300_"));
}

TEST_F(StorageSinkTest, PublishesAtomicallyAndLeavesNoTempFiles) {
  Open("protocol=csv&date-separator=none&worker-count=1");
  auto schema = KvSchema("db", "kv", 5);
  for (int i = 0; i < 20; ++i) {
    Add(Dml(schema, Ts(100 + i), {Insert(KvRow(i, "v"))}));
    WaitEncoded(i + 1);
    clock_.Advance(std::chrono::seconds(5));
    WaitFlushed(i + 1);
  }
  std::vector<std::string> files = AllFiles(root_);
  EXPECT_EQ(files.size(), 22u);
  for (const std::string& f : files) EXPECT_FALSE(IsTempFileName(f)) << f;
  EXPECT_EQ(Slurp(Path("db/kv/100/meta/CDC.index")), "CDC00000000000000000020.csv\n");
}

TEST_F(StorageSinkTest, ANewSinkContinuesTheIndex) {
  Open("protocol=csv&date-separator=none&worker-count=1");
  auto schema = KvSchema("db", "kv", 5);
  Add(Dml(schema, Ts(10), {Insert(KvRow(1, "a"))}));
  sink_->Close();  // Close writes what is buffered.
  EXPECT_EQ(flushed_.load(), 1);
  sink_.reset();
  Open("protocol=csv&date-separator=none&worker-count=3");
  Add(Dml(schema, Ts(11), {Insert(KvRow(2, "b"))}));
  sink_->Close();
  EXPECT_EQ(flushed_.load(), 2);
  EXPECT_EQ(Slurp(Path("db/kv/100/CDC00000000000000000002.csv")),
            "\"I\",\"kv\",\"db\",2,\"b\"\r\n");
  EXPECT_EQ(AllFiles(root_).size(), 4u);  // One schema file, reused.
}

// TiCDC's CheckOrWriteSchema: a version without its own schema file reuses
// an older file with the same checksum; data older than an equal newer
// schema file is dropped (its PostFlush still runs).
TEST_F(StorageSinkTest, SchemaVersionsAreReusedLikeTiCdc) {
  Open("protocol=csv&date-separator=none&worker-count=1");
  Add(Dml(KvSchema("db", "kv", 5, Ts(100)), Ts(110), {Insert(KvRow(1, "a"))}));
  sink_->Close();
  sink_.reset();
  Open("protocol=csv&date-separator=none&worker-count=1");
  Add(Dml(KvSchema("db", "kv", 5, Ts(150)), Ts(160), {Insert(KvRow(2, "b"))}));
  Add(Dml(KvSchema("db", "kv", 5, Ts(50)), Ts(60), {Insert(KvRow(3, "c"))}));
  sink_->Close();
  EXPECT_EQ(flushed_.load(), 3);
  EXPECT_EQ(AllFiles(root_),
            (std::vector<std::string>{
                "db/kv/100/CDC00000000000000000001.csv", "db/kv/100/CDC00000000000000000002.csv",
                "db/kv/100/meta/CDC.index",
                SchemaFile::ForTable(*KvSchema("db", "kv", 5), 100, false).Path()}));
  EXPECT_EQ(Slurp(Path("db/kv/100/CDC00000000000000000002.csv")),
            "\"I\",\"kv\",\"db\",2,\"b\"\r\n");
  EXPECT_EQ(sink_->stats().rows_written, 1u);
}

TEST_F(StorageSinkTest, CheckpointGoesToMetadataAtMostEveryTwoSeconds) {
  Open("protocol=csv&worker-count=1");
  sink_->AddCheckpointTs(Ts(123));
  ASSERT_TRUE(clock_.AwaitWaiters(2));  // The worker and the checkpoint writer.
  EXPECT_FALSE(fs::exists(Path("metadata")));
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(PollUntil([&] { return Slurp(Path("metadata")) == "{\"checkpoint-ts\":123}"; }));
  sink_->AddCheckpointTs(Ts(100));  // Older: ignored.
  sink_->AddCheckpointTs(Ts(456));
  ASSERT_TRUE(clock_.AwaitWaiters(2));
  EXPECT_EQ(Slurp(Path("metadata")), "{\"checkpoint-ts\":123}");
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(PollUntil([&] { return Slurp(Path("metadata")) == "{\"checkpoint-ts\":456}"; }));
}

TEST_F(StorageSinkTest, UnusableRootIsAnIoError) {
  ASSERT_TRUE(PublishFile(Path("plain-file"), "x").ok());
  StorageSinkOptions o;
  o.root = Path("plain-file/sub");
  auto sink = StorageSink::Create(o, &clock_);
  ASSERT_FALSE(sink.ok());
  EXPECT_EQ(sink.status().code(), Code::kIoError);
  o.root = "";
  EXPECT_EQ(StorageSink::Create(o, &clock_).status().code(), Code::kInvalidArgument);
}

TEST_F(StorageSinkTest, WriteFailureIsStickyAndStopsFlushing) {
  Open("protocol=csv&date-separator=none&worker-count=1");
  ASSERT_TRUE(PublishFile(Path("db"), "not a directory").ok());
  auto schema = KvSchema("db", "kv", 5);
  Add(Dml(schema, Ts(10), {Insert(KvRow(1, "a"))}));
  WaitEncoded(1);
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(PollUntil([&] { return !sink_->status().ok(); }));
  EXPECT_EQ(sink_->status().code(), Code::kIoError);
  EXPECT_EQ(flushed_.load(), 0);
  Add(Dml(schema, Ts(11), {Insert(KvRow(2, "b"))}));
  event::DdlEvent ddl;
  ddl.schema_name = "x";
  EXPECT_EQ(sink_->WriteBlockEvent(ddl).code(), Code::kIoError);
  // Even with the disk usable again, a failed sink writes nothing more.
  fs::remove(Path("db"));
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  sink_->Close();
  EXPECT_TRUE(AllFiles(root_).empty());
  EXPECT_EQ(flushed_.load(), 0);
  EXPECT_EQ(sink_->stats().events_encoded, 1u);
}

TEST(StorageSinkOptionsTest, UriKeysDefaultsAndClamps) {
  auto parse = [](std::string uri) { return StorageSinkOptions::FromUri(*SinkUri::Parse(uri)); };
  auto d = parse("file:///data/out?protocol=csv");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->root, "/data/out");
  EXPECT_EQ(d->worker_count, 16);
  EXPECT_EQ(d->flush_interval, std::chrono::seconds(5));
  EXPECT_EQ(d->file_size, 64 << 20);
  EXPECT_EQ(d->date_separator, DateSeparator::kDay);
  EXPECT_EQ(d->file_index_width, 20);
  EXPECT_EQ(d->csv.terminator, "\r\n");
  EXPECT_EQ(d->csv.null_string, "\\N");
  EXPECT_EQ(d->extension(), ".csv");

  auto c = parse(
      "file:///o?protocol=canal-json&flush-interval=50ms&file-size=10&date-separator=MONTH&"
      "file-index-digit=3&worker-count=1000&enable-tidb-extension=true&terminator=%0A");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->flush_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(c->file_size, 1024);
  EXPECT_EQ(c->date_separator, DateSeparator::kMonth);
  EXPECT_EQ(c->file_index_width, 20);
  EXPECT_EQ(c->worker_count, 512);
  EXPECT_TRUE(c->canal.enable_tidb_extension);
  EXPECT_EQ(c->canal.terminator, "\n");
  EXPECT_EQ(c->extension(), ".json");

  EXPECT_EQ(parse("file:///o").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(parse("file:///o?protocol=avro").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(parse("s3://b/o?protocol=csv").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(parse("file:///o?protocol=csv&date-separator=week").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(parse("file:///o?protocol=csv&csv-delimiter=").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(parse("file:///o?protocol=csv&flush-interval=soon").status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::sink::storage
