// MysqlSink against a real MariaDB/MySQL (SLUICE_TEST_MYSQL): every column
// type, ordering under parallel workers, safe mode, fatal errors, lost
// connections and back-pressure.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "common/lifecycle.h"
#include "common/test_util.h"
#include "event/value_format.h"
#include "simkv/sql_render.h"
#include "simkv/tidb_tables.h"
#include "sink/mysql/mysql_test_util.h"

namespace sluice::sink {
namespace {

namespace mt = codec::mysql_type;
using codec::Datum;
using testing::Col;
using testing::Delete;
using testing::Insert;
using testing::Txn;
using testing::Update;

class MysqlSinkTest : public testing::MysqlSinkFixture {
 protected:
  // A sink of `changefeed` written by maintainer generation `epoch`, whose
  // fence-refused writes wait `grace` for an adoption.
  std::unique_ptr<MysqlSink> SinkAtEpoch(const std::string& changefeed, uint64_t epoch,
                                         Clock::Duration grace = std::chrono::seconds(30)) {
    MysqlSinkOptions options = Options(changefeed, Ts());
    options.epoch = epoch;
    options.fence_adoption_grace = grace;
    Result<std::unique_ptr<MysqlSink>> sink = TryNewSink("", options);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(sink).value() : nullptr;
  }

  // Creates the kitchen-sink table (one column of every type) through the
  // sink's DDL path, from the SQL the simulator renders.
  event::TableSchemaPtr CreateKitchenSink(MysqlSink* sink) {
    model::TableInfo info = simkv::TableTemplate(simkv::TableShape::kKitchenSink, "all_types", {});
    info.id = 100;
    event::DdlEvent ddl = Ddl(model::ActionType::kCreateTable, simkv::CreateTableSql(info), 50, {},
                              {event::TableRef{1, 100, db_, "all_types"}});
    Status st = sink->WriteBlockEvent(ddl);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto schema = event::TableSchema::Make(db_, 1, info, Ts(50));
    EXPECT_TRUE(schema.ok());
    return *schema;
  }

  event::TableSchemaPtr CreateNarrow(std::string_view name, int64_t id) {
    model::TableInfo info = testing::IntHandleTable(id, name, {Col(0, "v", mt::kLonglong)});
    Exec(fmt::format("CREATE TABLE `{}`.`{}` (id BIGINT PRIMARY KEY, v BIGINT)", db_, name));
    return testing::Schema(db_, info);
  }

  std::map<int64_t, std::string> NarrowRows(std::string_view name) {
    std::map<int64_t, std::string> out;
    for (const SqlRow& r : Query(fmt::format("SELECT id, v FROM `{}`.`{}`", db_, name))) {
      out[std::stoll(*r[0])] = r[1].value_or("NULL");
    }
    return out;
  }
};

std::vector<Datum> NarrowRow(int64_t id, int64_t v) { return {Datum::Int64(id), Datum::Int64(v)}; }

uint64_t Packed(int y, int mo, int d, int h = 0, int mi = 0, int s = 0, int us = 0) {
  return codec::ToPackedUint(codec::MysqlTime{y, mo, d, h, mi, s, us});
}

int64_t Nanos(int64_t h, int64_t m, int64_t s, int64_t frac_ns = 0) {
  return ((h * 60 + m) * 60 + s) * 1000000000LL + frac_ns;
}

// Values of the kitchen-sink columns by name, and what the server prints.
struct Cell {
  Datum datum;
  std::optional<std::string> printed;  // nullopt: NULL.
};

std::map<std::string, Cell> FirstRow(const std::string& json) {
  std::string binary(16, '\0');
  binary[1] = '\x01';
  binary[15] = '\xff';
  return {
      {"id", {Datum::Int64(1), "1"}},
      {"c_tinyint", {Datum::Int64(-128), "-128"}},
      {"c_tinyint_u", {Datum::Uint64(255), "255"}},
      {"c_smallint", {Datum::Int64(-32768), "-32768"}},
      {"c_smallint_u", {Datum::Uint64(65535), "65535"}},
      {"c_mediumint", {Datum::Int64(-8388608), "-8388608"}},
      {"c_mediumint_u", {Datum::Uint64(16777215), "16777215"}},
      {"c_int", {Datum::Int64(-2147483648LL), "-2147483648"}},
      {"c_int_u", {Datum::Uint64(4294967295ULL), "4294967295"}},
      {"c_bigint", {Datum::Int64(INT64_MIN), "-9223372036854775808"}},
      {"c_bigint_u", {Datum::Uint64(UINT64_MAX), "18446744073709551615"}},
      {"c_float", {Datum::Float32(1.5f), "1.5"}},
      {"c_double", {Datum::Float64(0.1), "0.1"}},
      {"c_decimal", {Datum::Decimal("-12345.678900", 20, 6), "-12345.678900"}},
      {"c_decimal0", {Datum::Decimal("42", 10, 0), "42"}},
      {"c_char", {Datum::Bytes("char"), "char"}},
      {"c_varchar", {Datum::Bytes("it's \"q\" \\ ☃ \x1a"), "it's \"q\" \\ ☃ \x1a"}},
      {"c_binary", {Datum::Bytes(binary), "000100000000000000000000000000FF"}},
      {"c_varbinary", {Datum::Bytes(std::string("\x00'\\\n", 4)), "00275C0A"}},
      {"c_tinytext", {Datum::Bytes("tiny"), "tiny"}},
      {"c_text", {Datum::Bytes("line1\nline2\r\n"), "line1\nline2\r\n"}},
      {"c_mediumtext", {Datum::Bytes(std::string(70000, 'm')), std::string(70000, 'm')}},
      {"c_longtext", {Datum::Bytes("long"), "long"}},
      {"c_tinyblob", {Datum::Bytes(std::string("\x00\x01", 2)), "0001"}},
      {"c_blob", {Datum::Bytes("\xff\xfe"), "FFFE"}},
      {"c_mediumblob", {Datum::Bytes(""), ""}},
      {"c_longblob", {Datum::Bytes("0"), "30"}},
      {"c_date", {Datum::Time(Packed(2024, 2, 29), mt::kDate, 0), "2024-02-29"}},
      {"c_datetime", {Datum::Time(Packed(1000, 1, 1), mt::kDatetime, 0), "1000-01-01 00:00:00"}},
      {"c_datetime3",
       {Datum::Time(Packed(2024, 2, 29, 23, 59, 58, 123000), mt::kDatetime, 3),
        "2024-02-29 23:59:58.123"}},
      {"c_datetime6",
       {Datum::Time(Packed(9999, 12, 31, 23, 59, 59, 999999), mt::kDatetime, 6),
        "9999-12-31 23:59:59.999999"}},
      {"c_timestamp",
       {Datum::Time(Packed(2021, 3, 4, 5, 6, 7), mt::kTimestamp, 0), "2021-03-04 05:06:07"}},
      {"c_timestamp6",
       {Datum::Time(Packed(1970, 1, 2, 0, 0, 0, 1), mt::kTimestamp, 6),
        "1970-01-02 00:00:00.000001"}},
      {"c_time", {Datum::Duration(-Nanos(838, 59, 59), 0), "-838:59:59"}},
      {"c_time2", {Datum::Duration(Nanos(12, 34, 56, 780000000), 2), "12:34:56.78"}},
      {"c_year", {Datum::Int64(2024), "2024"}},
      {"c_bit1", {Datum::Bit(1), "1"}},
      {"c_bit", {Datum::Bit(1000), "1000"}},
      {"c_bit64", {Datum::Bit(UINT64_MAX), "18446744073709551615"}},
      {"c_enum", {Datum::Enum(2), "green"}},
      {"c_set", {Datum::Set(0b101), "x,z"}},
      {"c_json", {Datum::Json(json), std::nullopt}},  // Compared as JSON below.
      {"c_notnull", {Datum::Int64(7), "7"}},
  };
}

// SELECT expression that prints `col` comparably: hex for binary data,
// numbers for BIT.
std::string Printable(const model::ColumnInfo& col) {
  std::string name = "`" + col.name.original + "`";
  if (col.type.tp == mt::kBit) return "CAST(" + name + " AS UNSIGNED)";
  if (event::IsBinaryColumn(col)) return "HEX(" + name + ")";
  return name;
}

std::vector<Datum> RowOf(const event::TableSchema& s, const std::map<std::string, Cell>& cells) {
  std::vector<Datum> row;
  for (const model::ColumnInfo& c : s.columns()) {
    auto it = cells.find(c.name.original);
    row.push_back(it == cells.end() ? Datum::Null() : it->second.datum);
  }
  return row;
}

TEST_F(MysqlSinkTest, EveryColumnTypeRoundTrips) {
  auto sink = NewSink("worker-count=2");
  ASSERT_NE(sink, nullptr);
  auto schema = CreateKitchenSink(sink.get());
  auto json = codec::JsonTextToBinary(R"({"a": [1, 2.5, null, true], "s": "q\"u'ote", "n": {}})");
  ASSERT_TRUE(json.ok());
  std::map<std::string, Cell> first = FirstRow(*json);
  std::map<std::string, Cell> nulls = {{"id", {Datum::Int64(2), "2"}},
                                       {"c_notnull", {Datum::Int64(0), "0"}}};
  std::map<std::string, Cell> third = first;
  third["id"] = {Datum::Int64(3), "3"};
  std::atomic<int> flushed{0};
  auto add = [&](event::DmlEventPtr e) {
    e->AddPostFlush([&] { ++flushed; });
    sink->AddDmlEvent(std::move(e));
  };
  add(Txn(schema, 100,
          {Insert(RowOf(*schema, first)), Insert(RowOf(*schema, nulls)),
           Insert(RowOf(*schema, third))}));
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 1)) << sink->status().ToString();

  auto check = [&](int64_t id, const std::map<std::string, Cell>& cells) {
    for (const model::ColumnInfo& c : schema->columns()) {
      auto v = Scalar(
          fmt::format("SELECT {} FROM `{}`.`all_types` WHERE id = {}", Printable(c), db_, id));
      auto it = cells.find(c.name.original);
      if (c.name.original == "c_json" && it != cells.end()) {
        ASSERT_TRUE(v.has_value());
        auto back = codec::JsonTextToBinary(*v);
        ASSERT_TRUE(back.ok()) << *v;
        EXPECT_EQ(*back, std::string(it->second.datum.bytes())) << *v;
        continue;
      }
      std::optional<std::string> want = it == cells.end() ? std::nullopt : it->second.printed;
      EXPECT_EQ(v, want) << "row " << id << " column " << c.name.original;
    }
  };
  check(1, first);
  check(2, nulls);
  check(3, third);

  // Update every column of row 1 to the NULL row's values and back; delete 3.
  std::map<std::string, Cell> first_as_nulls = nulls;
  first_as_nulls["id"] = first["id"];
  add(Txn(schema, 101,
          {Update(RowOf(*schema, first), RowOf(*schema, first_as_nulls)),
           Delete(RowOf(*schema, third))}));
  add(Txn(schema, 102, {Update(RowOf(*schema, nulls), RowOf(*schema, [&] {
                                 auto c = first;
                                 c["id"] = nulls["id"];
                                 return c;
                               }()))}));
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 3)) << sink->status().ToString();
  check(1, first_as_nulls);
  auto second = first;
  second["id"] = nulls["id"];
  check(2, second);
  EXPECT_EQ(Scalar(fmt::format("SELECT COUNT(*) FROM `{}`.`all_types`", db_)), "2");
  EXPECT_TRUE(sink->status().ok());
  sink->Close();
}

TEST_F(MysqlSinkTest, VectorColumnsBecomeText) {
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  ASSERT_TRUE(sink->WriteBlockEvent(Ddl(model::ActionType::kCreateTable,
                                        "CREATE TABLE vec (id BIGINT PRIMARY KEY, "
                                        "v VECTOR(3) /*T![vector] COMMENT 'x' */)",
                                        50))
                  .ok());
  model::TableInfo info = testing::IntHandleTable(7, "vec", {Col(0, "v", mt::kVectorFloat32)});
  auto schema = testing::Schema(db_, info);
  std::string raw(4 + 12, '\0');
  uint32_t dim = 3;
  float vals[3] = {1, 2.5f, -3};
  std::memcpy(raw.data(), &dim, 4);
  std::memcpy(raw.data() + 4, vals, 12);
  std::atomic<int> flushed{0};
  auto e = Txn(schema, 60, {Insert({Datum::Int64(1), Datum::VectorFloat32View(raw)})});
  e->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(e);
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 1)) << sink->status().ToString();
  EXPECT_EQ(Scalar(fmt::format("SELECT v FROM `{}`.vec", db_)), "[1,2.5,-3]");
}

TEST_F(MysqlSinkTest, ConflictingTransactionsKeepOrderAcrossWorkers) {
  auto sink = NewSink("worker-count=8&max-txn-row=4");
  ASSERT_NE(sink, nullptr);
  auto schema = CreateNarrow("t", 10);
  constexpr int kKeys = 5, kTxns = 300;
  std::map<DispatcherId, std::vector<int>> flush_order;
  Mutex mu;
  std::atomic<int> flushed{0};
  std::vector<int64_t> last(kKeys, -1);
  for (int i = 0; i < kTxns; ++i) {
    int key = i % kKeys;
    DispatcherId d{0, static_cast<uint64_t>(1 + i % 2)};
    std::vector<event::RowChange> rows;
    if (last[key] < 0) {
      rows.push_back(Insert(NarrowRow(key, i)));
    } else {
      rows.push_back(Update(NarrowRow(key, last[key]), NarrowRow(key, i)));
    }
    // Plus a row of its own, so non-conflicting work is spread too.
    rows.push_back(Insert(NarrowRow(1000 + i, i)));
    last[key] = i;
    auto e = Txn(schema, 100 + i, std::move(rows), d);
    e->AddPostFlush([&, d, i] {
      MutexLock lock(&mu);
      flush_order[d].push_back(i);
      ++flushed;
    });
    sink->AddDmlEvent(e);
  }
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, kTxns)) << sink->status().ToString();
  std::map<int64_t, std::string> rows = NarrowRows("t");
  for (int k = 0; k < kKeys; ++k) EXPECT_EQ(rows[k], std::to_string(last[k])) << "key " << k;
  EXPECT_EQ(rows.size(), static_cast<size_t>(kKeys + kTxns));
  MutexLock lock(&mu);
  for (const auto& [d, order] : flush_order) {
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "dispatcher " << d;
  }
  EXPECT_GT(sink->stats().batches_written, 0u);
  EXPECT_EQ(sink->stats().txns_written, static_cast<uint64_t>(kTxns));
}

std::vector<event::DmlEventPtr> ReplayedEvents(const event::TableSchemaPtr& s) {
  return {Txn(s, 50, {Insert(NarrowRow(1, 1)), Insert(NarrowRow(2, 2)), Insert(NarrowRow(3, 3))}),
          Txn(s, 60, {Update(NarrowRow(2, 2), NarrowRow(2, 20)), Delete(NarrowRow(3, 3))}),
          Txn(s, 70, {Insert(NarrowRow(3, 30))})};
}

TEST_F(MysqlSinkTest, SafeModeAfterRestartAbsorbsReplayedEvents) {
  auto schema = CreateNarrow("t", 10);
  const std::string cf = testing::UniqueName("default/replay");
  std::atomic<int> flushed{0};
  {
    auto sink = NewSink("", cf, Ts(1));
    ASSERT_NE(sink, nullptr);
    EXPECT_FALSE(sink->in_startup_safe_mode());
    for (auto& e : ReplayedEvents(schema)) {
      e->AddPostFlush([&] { ++flushed; });
      sink->AddDmlEvent(e);
    }
    ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 3)) << sink->status().ToString();
    EXPECT_EQ(sink->stats().safe_mode_batches, 0u);
    sink->Close();
  }
  // "Restart" from an older checkpoint: the same events arrive again, below
  // the replicating ts, and are written as REPLACE / DELETE + REPLACE.
  auto sink = NewSink("worker-count=4", cf, Ts(100));
  ASSERT_NE(sink, nullptr);
  EXPECT_TRUE(sink->in_startup_safe_mode());
  for (auto& e : ReplayedEvents(schema)) {
    e->AddPostFlush([&] { ++flushed; });
    sink->AddDmlEvent(e);
  }
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 6)) << sink->status().ToString();
  EXPECT_GT(sink->stats().safe_mode_batches, 0u);
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}, {2, "20"}, {3, "30"}}));
  sink->AddCheckpointTs(Ts(100));
  EXPECT_FALSE(sink->in_startup_safe_mode());
  EXPECT_TRUE(sink->status().ok());
}

TEST_F(MysqlSinkTest, SafeModeUriParameterTurnsUpdatesIntoReplace) {
  auto schema = CreateNarrow("t", 10);
  std::atomic<int> flushed{0};
  for (bool safe : {false, true}) {
    auto sink = NewSink(safe ? "safe-mode=true" : "");
    ASSERT_NE(sink, nullptr);
    // The row is not downstream: a plain UPDATE changes nothing, the safe
    // mode DELETE + REPLACE creates it.
    auto e = Txn(schema, 80, {Update(NarrowRow(5, 1), NarrowRow(5, safe ? 2 : 3))});
    e->AddPostFlush([&] { ++flushed; });
    sink->AddDmlEvent(e);
    ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, safe ? 2 : 1)) << sink->status().ToString();
    EXPECT_EQ(sink->stats().safe_mode_batches, safe ? 1u : 0u);
  }
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{5, "2"}}));
}

TEST_F(MysqlSinkTest, DuplicateKeyRetriesInSafeMode) {
  auto schema = CreateNarrow("t", 10);
  Exec(fmt::format("INSERT INTO `{}`.t VALUES (1, 0)", db_));
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  std::atomic<int> flushed{0};
  auto e = Txn(schema, 90, {Insert(NarrowRow(1, 11)), Insert(NarrowRow(2, 22))});
  e->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(e);
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 1)) << sink->status().ToString();
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "11"}, {2, "22"}}));
  EXPECT_EQ(sink->stats().safe_mode_batches, 1u);
}

TEST_F(MysqlSinkTest, MissingTableIsAStickyFatalErrorNamingTheCommitTs) {
  model::TableInfo info = testing::IntHandleTable(11, "missing", {Col(0, "v", mt::kLonglong)});
  auto schema = testing::Schema(db_, info);
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  std::atomic<int> flushed{0};
  auto e = Txn(schema, 12345, {Insert(NarrowRow(1, 1))});
  e->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(e);
  ASSERT_TRUE(PollUntil([&] { return !sink->status().ok(); }, std::chrono::seconds(30)));
  Status st = sink->status();
  EXPECT_EQ(st.code(), Code::kNotFound) << st.ToString();
  EXPECT_FALSE(st.retryable());
  EXPECT_NE(st.message().find("commit ts 12345"), std::string_view::npos) << st.ToString();
  EXPECT_NE(st.message().find("1146"), std::string_view::npos) << st.ToString();
  EXPECT_EQ(sink->stats().retries, 0u);  // Fatal: not retried.
  // Sticky: later work is refused with the same error.
  EXPECT_EQ(
      sink->WriteBlockEvent(Ddl(model::ActionType::kCreateTable, "CREATE TABLE x (a INT)", 13000)),
      st);
  auto later = Txn(schema, 12346, {Insert(NarrowRow(2, 2))});
  later->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(later);
  sink->Close();
  EXPECT_EQ(flushed.load(), 0);
  EXPECT_EQ(sink->status(), st);
}

// The write permit (the node's session check) is asked before every
// transaction and DDL: a refusal writes nothing, is not retried and sticks.
TEST_F(MysqlSinkTest, ARefusedWritePermitWritesNothing) {
  auto schema = CreateNarrow("t", 10);
  std::atomic<bool> allowed{true};
  std::atomic<int> asked{0};
  MysqlSinkOptions options = Options("", Ts());
  options.write_permit = [&]() -> Status {
    ++asked;
    return allowed.load() ? Status::Ok() : StaleOwner("session ended");
  };
  Result<std::unique_ptr<MysqlSink>> opened = TryNewSink("", options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<MysqlSink> sink = std::move(opened).value();
  std::atomic<int> flushed{0};
  auto first = Txn(schema, 100, {Insert(NarrowRow(1, 1))});
  first->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(first);
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 1)) << sink->status().ToString();
  EXPECT_GE(asked.load(), 1);

  allowed = false;
  auto second = Txn(schema, 200, {Insert(NarrowRow(2, 2))});
  second->AddPostFlush([&] { ++flushed; });
  sink->AddDmlEvent(second);
  ASSERT_TRUE(PollUntil([&] { return !sink->status().ok(); }, std::chrono::seconds(30)));
  EXPECT_EQ(sink->status().code(), Code::kStaleOwner) << sink->status().ToString();
  EXPECT_EQ(sink->stats().retries, 0u);
  EXPECT_EQ(
      sink->WriteBlockEvent(Ddl(model::ActionType::kCreateTable, "CREATE TABLE x (a INT)", 300))
          .code(),
      Code::kStaleOwner);
  sink->Close();
  EXPECT_EQ(flushed.load(), 1);
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}}));
}

// The epoch fence: once a later generation opened its sink, no transaction
// or DDL of an earlier one commits, and an earlier one cannot open again.
TEST_F(MysqlSinkTest, AnOlderGenerationCommitsNothingOnceANewerOneOpened) {
  auto schema = CreateNarrow("t", 10);
  const std::string changefeed = testing::UniqueName("default/fenced");
  MysqlSinkOptions old_options = Options(changefeed, Ts());
  old_options.epoch = 5;
  old_options.fence_adoption_grace = Clock::Duration::zero();  // Nobody adopts it.
  std::unique_ptr<MysqlSink> old_sink = std::move(TryNewSink("", old_options)).value();
  std::atomic<int> flushed{0};
  auto first = Txn(schema, 100, {Insert(NarrowRow(1, 1))});
  first->AddPostFlush([&] { ++flushed; });
  old_sink->AddDmlEvent(first);
  ASSERT_TRUE(testing::WaitFlushed(*old_sink, flushed, 1)) << old_sink->status().ToString();

  MysqlSinkOptions new_options = Options(changefeed, Ts());
  new_options.epoch = 6;
  Result<std::unique_ptr<MysqlSink>> new_sink = TryNewSink("", new_options);
  ASSERT_TRUE(new_sink.ok()) << new_sink.status().ToString();

  // The old generation does not know yet; its next transaction is refused
  // downstream, in the same round trip as its COMMIT.
  auto second = Txn(schema, 200, {Insert(NarrowRow(2, 2))});
  second->AddPostFlush([&] { ++flushed; });
  old_sink->AddDmlEvent(second);
  ASSERT_TRUE(PollUntil([&] { return !old_sink->status().ok(); }, std::chrono::seconds(30)));
  EXPECT_EQ(old_sink->status().code(), Code::kStaleOwner) << old_sink->status().ToString();
  old_sink->Close();
  EXPECT_EQ(flushed.load(), 1);
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}}));

  // The new one writes; an even older one cannot open.
  auto third = Txn(schema, 300, {Insert(NarrowRow(3, 3))});
  third->AddPostFlush([&] { ++flushed; });
  (*new_sink)->AddDmlEvent(third);
  ASSERT_TRUE(testing::WaitFlushed(**new_sink, flushed, 2)) << (*new_sink)->status().ToString();
  MysqlSinkOptions older = Options(changefeed, Ts());
  older.epoch = 4;
  EXPECT_EQ(TryNewSink("", older).status().code(), Code::kStaleOwner);
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}, {3, "3"}}));
}

// A surviving sink adopted by a newer generation (its dispatchers taken
// over by a new maintainer on another node) claims that epoch and keeps
// committing; the generation in between is fenced off by it, and a claim
// below the row's epoch is refused.
TEST_F(MysqlSinkTest, ASinkAdoptedByANewerGenerationCommitsUnderItsEpoch) {
  auto schema = CreateNarrow("t", 10);
  const std::string changefeed = testing::UniqueName("default/adopted");
  std::unique_ptr<MysqlSink> survivor = SinkAtEpoch(changefeed, 5);
  std::unique_ptr<MysqlSink> middle = SinkAtEpoch(changefeed, 6, Clock::Duration::zero());
  ASSERT_NE(survivor, nullptr);
  ASSERT_NE(middle, nullptr);
  ASSERT_TRUE(survivor->AdoptEpoch(7).ok());
  ASSERT_TRUE(survivor->AdoptEpoch(6).ok());  // Older: nothing to do.
  std::atomic<int> flushed{0};
  auto mine = Txn(schema, 100, {Insert(NarrowRow(1, 1))});
  mine->AddPostFlush([&] { ++flushed; });
  survivor->AddDmlEvent(mine);
  ASSERT_TRUE(testing::WaitFlushed(*survivor, flushed, 1)) << survivor->status().ToString();
  auto theirs = Txn(schema, 200, {Insert(NarrowRow(2, 2))});
  middle->AddDmlEvent(theirs);
  ASSERT_TRUE(PollUntil([&] { return !middle->status().ok(); }, std::chrono::seconds(30)));
  EXPECT_EQ(middle->status().code(), Code::kStaleOwner) << middle->status().ToString();
  middle->Close();
  // Another generation moved on to 9: adopting 8 is refused, nothing commits.
  ASSERT_NE(SinkAtEpoch(changefeed, 9), nullptr);
  EXPECT_EQ(survivor->AdoptEpoch(8).code(), Code::kStaleOwner);
  survivor->Close();
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}}));
}

// The new generation's own sink may claim the changefeed before the
// surviving sinks are adopted: a surviving sink's transaction refused
// meanwhile waits, commits nothing, and goes through once it is adopted.
TEST_F(MysqlSinkTest, AWriteRefusedBeforeTheAdoptionGoesThroughAfterIt) {
  auto schema = CreateNarrow("t", 10);
  const std::string changefeed = testing::UniqueName("default/adopting");
  std::unique_ptr<MysqlSink> survivor = SinkAtEpoch(changefeed, 5);
  std::unique_ptr<MysqlSink> next = SinkAtEpoch(changefeed, 6);
  ASSERT_NE(survivor, nullptr);
  ASSERT_NE(next, nullptr);
  std::atomic<int> flushed{0};
  auto waiting = Txn(schema, 100, {Insert(NarrowRow(1, 1))});
  waiting->AddPostFlush([&] { ++flushed; });
  survivor->AddDmlEvent(waiting);
  // Refused downstream, and held: nothing committed, the sink not failed.
  ASSERT_TRUE(PollUntil([&] { return survivor->stats().fence_waits > 0; }));
  EXPECT_EQ(flushed.load(), 0);
  EXPECT_TRUE(survivor->status().ok()) << survivor->status().ToString();
  EXPECT_TRUE(NarrowRows("t").empty());
  ASSERT_TRUE(survivor->AdoptEpoch(6).ok());
  ASSERT_TRUE(testing::WaitFlushed(*survivor, flushed, 1)) << survivor->status().ToString();
  EXPECT_EQ(NarrowRows("t"), (std::map<int64_t, std::string>{{1, "1"}}));
  survivor->Close();
  next->Close();
}

TEST_F(MysqlSinkTest, ReconnectsAfterTheServerKillsItsSessions) {
  auto schema = CreateNarrow("t", 10);
  auto sink = NewSink("worker-count=2");
  ASSERT_NE(sink, nullptr);
  std::atomic<int> flushed{0};
  auto add = [&](event::DmlEventPtr e) {
    e->AddPostFlush([&] { ++flushed; });
    sink->AddDmlEvent(std::move(e));
  };
  add(Txn(schema, 100, {Insert(NarrowRow(1, 1))}));
  add(Txn(schema, 101, {Insert(NarrowRow(2, 2))}));
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 2)) << sink->status().ToString();
  std::vector<uint64_t> ids = sink->ConnectionIds();
  ASSERT_GE(ids.size(), 2u);  // Control plus at least one worker.
  for (uint64_t id : ids) Exec(fmt::format("KILL {}", id));
  for (int i = 0; i < 6; ++i) add(Txn(schema, 200 + i, {Insert(NarrowRow(10 + i, i))}));
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 8)) << sink->status().ToString();
  EXPECT_EQ(NarrowRows("t").size(), 8u);
  EXPECT_GE(sink->stats().reconnects, 1u);
  EXPECT_GE(sink->stats().retries, 1u);
  // The DDL connection comes back too.
  Status st = sink->WriteBlockEvent(
      Ddl(model::ActionType::kAddColumn, "ALTER TABLE t ADD COLUMN extra INT", 300, {10}));
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Scalar(fmt::format("SELECT COUNT(*) FROM information_schema.columns WHERE "
                               "table_schema = '{}' AND column_name = 'extra'",
                               db_)),
            "1");
  // The control connection and every worker that wrote since are new. A
  // worker left idle (transactions of one table stay on one worker) finds
  // its session gone when it next writes.
  std::vector<uint64_t> now = sink->ConnectionIds();
  auto renewed = std::count_if(now.begin(), now.end(), [&](uint64_t id) {
    return std::count(ids.begin(), ids.end(), id) == 0;
  });
  EXPECT_GE(renewed, 2) << fmt::format("before {} after {}", fmt::join(ids, ","),
                                       fmt::join(now, ","));
}

TEST_F(MysqlSinkTest, AddBlocksWhileTooManyRowsAreQueued) {
  auto schema = CreateNarrow("t", 10);
  Exec(fmt::format("INSERT INTO `{}`.t VALUES (1, 0)", db_));
  MysqlSinkOptions options = Options("", Ts(1));
  options.max_queued_rows = 4;
  auto created = TryNewSink("worker-count=1", options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto sink = std::move(*created);
  // Hold row 1 so that the only worker waits on it.
  auto locker = testing::ConnectTestServer();
  ASSERT_TRUE(locker.ok());
  ASSERT_TRUE((*locker)->Execute("BEGIN").ok());
  ASSERT_TRUE(
      (*locker)->Query(fmt::format("SELECT * FROM `{}`.t WHERE id = 1 FOR UPDATE", db_)).ok());
  std::atomic<int> added{0}, flushed{0};
  OwnedThread producer;
  producer.Start("producer", [&](StopToken) {
    for (int i = 0; i < 10; ++i) {
      auto e = i == 0 ? Txn(schema, 100, {Update(NarrowRow(1, 0), NarrowRow(1, 1))})
                      : Txn(schema, 100 + i, {Insert(NarrowRow(100 + i, i))});
      e->AddPostFlush([&] { ++flushed; });
      sink->AddDmlEvent(e);
      ++added;
    }
  });
  ASSERT_TRUE(PollUntil([&] { return added.load() >= 4; }));
  // Four rows are in flight; the fifth add waits for room.
  EXPECT_FALSE(PollUntil([&] { return added.load() > 4; }, std::chrono::milliseconds(300)));
  EXPECT_EQ(flushed.load(), 0);
  ASSERT_TRUE((*locker)->Execute("ROLLBACK").ok());
  ASSERT_TRUE(testing::WaitFlushed(*sink, flushed, 10)) << sink->status().ToString();
  producer.Stop();
  EXPECT_EQ(added.load(), 10);
  EXPECT_EQ(NarrowRows("t").size(), 10u);
}

}  // namespace
}  // namespace sluice::sink
