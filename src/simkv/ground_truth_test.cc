#include "simkv/ground_truth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "simkv/mvcc_store.h"

namespace sluice::simkv {
namespace {

std::string EncodeInt(int64_t v) {
  uint64_t u = static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, u >>= 8) out[i] = static_cast<char>(u & 0xFF);
  return out;
}

// Concatenates pieces (avoids GCC 12's -Wrestrict false positive on
// "literal" + std::string at -O3).
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

std::string RowKey(int64_t table_id, int64_t handle) {
  return Cat({"t", EncodeInt(table_id), "_r", EncodeInt(handle)});
}

std::string IndexKey(int64_t table_id, int64_t index_id) {
  return Cat({"t", EncodeInt(table_id), "_i", EncodeInt(index_id), "\x03", EncodeInt(1)});
}

void Write(MvccStore& store, const std::vector<Mutation>& mutations, uint64_t start,
           uint64_t commit) {
  std::vector<std::string> keys;
  for (const Mutation& m : mutations) keys.push_back(m.key);
  ASSERT_TRUE(store.Prewrite(mutations, keys[0], Ts(start), 3000).ok());
  ASSERT_TRUE(store.Commit(keys, Ts(start), Ts(commit)).ok());
}

TEST(GroundTruthTest, RecordTableIdDecodesRecordKeysOnly) {
  EXPECT_EQ(GroundTruth::RecordTableId(RowKey(100, 1)), TableId(100));
  EXPECT_EQ(GroundTruth::RecordTableId(RowKey(-5, 1)), TableId(-5));
  // Common-handle row keys are record keys too.
  EXPECT_EQ(GroundTruth::RecordTableId(Cat({"t", EncodeInt(7), "_r\x01", "abc"})), TableId(7));
  EXPECT_EQ(GroundTruth::RecordTableId(IndexKey(100, 1)), std::nullopt);
  EXPECT_EQ(GroundTruth::RecordTableId(Cat({"t", EncodeInt(100), "_r"})), std::nullopt);  // Prefix.
  EXPECT_EQ(GroundTruth::RecordTableId("mDDLJobList"), std::nullopt);
  EXPECT_EQ(GroundTruth::RecordTableId(""), std::nullopt);
}

// Table 100: row 1 put v1@10, put v2@20, delete@30; row 2 put w@20.
// Table 200: row 1 put x@25 (1PC). Plus an index key, a meta key, a rollback.
void FillStore(MvccStore& store) {
  Write(store, {Mutation::Put(RowKey(100, 1), "v1"), Mutation::Put(IndexKey(100, 1), "i")}, 5, 10);
  Write(store, {Mutation::Put(RowKey(100, 1), "v2"), Mutation::Put(RowKey(100, 2), "w")}, 15, 20);
  ASSERT_TRUE(store.CommitOnePc({Mutation::Put(RowKey(200, 1), "x")}, Ts(24), Ts(25)).ok());
  Write(store, {Mutation::Delete(RowKey(100, 1)), Mutation::Put("mDDLJob", "j")}, 26, 30);
  ASSERT_TRUE(store.Prewrite({Mutation::Put(RowKey(100, 3), "gone")}, "p", Ts(31), 3000).ok());
  ASSERT_TRUE(store.Rollback({RowKey(100, 3)}, Ts(31)).ok());
  Write(store, {Mutation::Lock(RowKey(100, 2))}, 32, 33);
}

TEST(GroundTruthTest, ObservesCommitsOfRecordKeys) {
  MvccStore store;
  GroundTruth truth;
  store.AddObserver(&truth);
  FillStore(store);

  EXPECT_EQ(truth.Tables(), (std::vector<TableId>{TableId(100), TableId(200)}));
  EXPECT_EQ(truth.size(), 5u);
  std::vector<TruthChange> history = truth.History(TableId(100));
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].key, RowKey(100, 1));
  EXPECT_EQ(history[0].commit_ts, Ts(10));
  EXPECT_EQ(history[0].start_ts, Ts(5));
  EXPECT_FALSE(history[0].old_value.has_value());
  EXPECT_EQ(history[1].value, "v2");
  EXPECT_EQ(history[1].old_value, "v1");
  EXPECT_EQ(history[2].key, RowKey(100, 2));  // Same commit ts: key order.
  EXPECT_EQ(history[3].kind, WriteKind::kDelete);
  EXPECT_EQ(history[3].old_value, "v2");

  using State = std::map<std::string, std::string>;
  EXPECT_EQ(truth.StateAt(TableId(100), Ts(9)), State{});
  EXPECT_EQ(truth.StateAt(TableId(100), Ts(10)), (State{{RowKey(100, 1), "v1"}}));
  EXPECT_EQ(truth.StateAt(TableId(100), Ts(25)),
            (State{{RowKey(100, 1), "v2"}, {RowKey(100, 2), "w"}}));
  EXPECT_EQ(truth.StateAt(TableId(100), Ts(30)), (State{{RowKey(100, 2), "w"}}));
  EXPECT_EQ(truth.StateAt(TableId(200), Ts(24)), State{});
  EXPECT_EQ(truth.StateAt(TableId(200), Ts(25)), (State{{RowKey(200, 1), "x"}}));
  EXPECT_EQ(truth.StateAt(TableId(300), Ts(99)), State{});

  // The state matches the store's own view at every ts.
  for (uint64_t ts = 0; ts <= 40; ++ts) {
    auto scan = store.Scan(RowKey(100, 0), RowKey(100, 99), Ts(ts), 0);
    ASSERT_TRUE(scan.ok());
    State from_store;
    for (const KvPair& kv : scan.value()) from_store[kv.key] = kv.value;
    EXPECT_EQ(truth.StateAt(TableId(100), Ts(ts)), from_store) << "ts " << ts;
  }
  store.RemoveObserver(&truth);
}

TEST(GroundTruthTest, ExportImportRoundTrip) {
  MvccStore store;
  GroundTruth truth;
  store.AddObserver(&truth);
  FillStore(store);
  store.RemoveObserver(&truth);

  std::stringstream text;
  ASSERT_TRUE(truth.Export(text).ok());
  std::string exported = text.str();
  EXPECT_EQ(exported.substr(0, exported.find('\n')),
            R"({"format":"sluice-simkv-ground-truth","version":1})");
  EXPECT_EQ(std::count(exported.begin(), exported.end(), '\n'), 6);

  auto changes = GroundTruth::Read(text);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(changes.value(), truth.AllChanges());

  std::string path = ::testing::TempDir() + "/ground_truth_round_trip.jsonl";
  ASSERT_TRUE(truth.ExportToFile(path).ok());
  GroundTruth copy;
  ASSERT_TRUE(copy.ImportFromFile(path).ok());
  EXPECT_EQ(copy.AllChanges(), truth.AllChanges());
  for (uint64_t ts : {9, 10, 20, 25, 30}) {
    EXPECT_EQ(copy.StateAt(TableId(100), Ts(ts)), truth.StateAt(TableId(100), Ts(ts)));
  }
  std::remove(path.c_str());
  EXPECT_EQ(copy.ImportFromFile(path).code(), Code::kIoError);
}

TEST(GroundTruthTest, ReadRejectsMalformedInput) {
  const std::string header = R"({"format":"sluice-simkv-ground-truth","version":1})";
  const std::string key =
      "748000000000000064"
      "5f72"
      "8000000000000001";  // Table 100.
  auto read = [](const std::string& text) {
    std::istringstream in(text);
    return GroundTruth::Read(in).status();
  };
  auto line = [&](const std::string& fields) {
    return header + "\n" + R"({"table_id":100,"commit_ts":2,"start_ts":1,)" + fields + "}\n";
  };
  EXPECT_TRUE(read(line(R"("op":"put","key":")" + key + R"(","value":"00")")).ok());
  EXPECT_TRUE(read(line(R"("op":"delete","key":")" + key + R"(","old_value":"")")).ok());
  EXPECT_TRUE(read(header + "\n").ok());

  for (const std::string& bad : {
           std::string(""),  // No header.
           std::string(R"({"format":"other","version":1})") + "\n",
           std::string(R"({"format":"sluice-simkv-ground-truth","version":2})") + "\n",
           std::string(R"({"format":7})") + "\n",
           line(R"("op":"put","key":")" + key + R"(","value":"0g")"),
           line(R"("op":"put","key":")" + key + R"(")"),  // Put without value.
           line(R"("op":"upsert","key":")" + key + R"(","value":"00")"),
           line(R"("op":"delete","key":")" + key + R"(","value":"00")"),
           line(R"("op":"put","key":"7480","value":"00")"),  // Not a record key.
           line(R"("op":"put","key":"abc","value":"00")"),   // Odd hex.
           header + "\n{\"table_id\":\"100\"}\n", header + "\nnot json\n",
           line(R"("op":"put","key":")" + key + R"(","value":"00"})"),  // Stray brace.
       }) {
    Status status = read(bad);
    EXPECT_EQ(status.code(), Code::kCorruption) << bad << " -> " << status.ToString();
  }
  Status located = read(header + "\n\nnot json\n");
  EXPECT_NE(located.message().find("line 3"), std::string_view::npos) << located.ToString();
}

}  // namespace
}  // namespace sluice::simkv
