#include "eventstore/key_format.h"

#include <gtest/gtest.h>

#include <string>

#include "common/span.h"

namespace sluice::eventstore {
namespace {

RawKvEntry Entry(TableId table, uint64_t commit, uint64_t start, KvOp op, std::string old_value) {
  RawKvEntry e;
  e.op = op;
  e.key = TablePrefix(table) + "_r" + std::string(8, '\x01');
  e.value = op == KvOp::kPut ? "row-value" : "";
  e.old_value = std::move(old_value);
  e.start_ts = Ts(start);
  e.commit_ts = Ts(commit);
  e.region_id = RegionId(77);
  return e;
}

std::string KeyOf(uint64_t sub, const RawKvEntry& e) {
  std::string key;
  AppendStoreKey(sub, EntryTableId(e.key, TableId(0)), e, &key);
  return key;
}

TEST(KeyFormatTest, RoundTripsEveryField) {
  RawKvEntry e = Entry(TableId(42), 1000, 990, KvOp::kPut, "old");
  std::string key = KeyOf(5, e);
  std::string value;
  AppendStoreValue(e, &value);
  RawKvEntry out;
  ASSERT_TRUE(DecodeEntry(key, value, &out).ok());
  EXPECT_EQ(out, e);
  Result<StoreKey> k = DecodeStoreKey(key);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->store_sub_id, 5u);
  EXPECT_EQ(k->table_id, TableId(42));
  EXPECT_EQ(k->dml_order, DmlOrder::kUpdate);
}

TEST(KeyFormatTest, TableIdComesFromTheRawKeyOrTheFallback) {
  EXPECT_EQ(EntryTableId(TablePrefix(TableId(-3)) + "_r", TableId(9)), TableId(-3));
  EXPECT_EQ(EntryTableId("mDDLJobList", TableId(9)), TableId(9));
}

TEST(KeyFormatTest, OrdersByTableThenCommitStartAndDmlOrder) {
  // Negative table ids sort before positive ones (sign bit flipped).
  EXPECT_LT(KeyOf(1, Entry(TableId(-1), 9, 1, KvOp::kPut, "")),
            KeyOf(1, Entry(TableId(1), 1, 1, KvOp::kPut, "")));
  EXPECT_LT(KeyOf(1, Entry(TableId(1), 9, 8, KvOp::kPut, "")),
            KeyOf(1, Entry(TableId(1), 256, 1, KvOp::kPut, "")));
  EXPECT_LT(KeyOf(1, Entry(TableId(1), 9, 1, KvOp::kPut, "")),
            KeyOf(1, Entry(TableId(1), 9, 2, KvOp::kDelete, "")));
  std::string del = KeyOf(1, Entry(TableId(1), 9, 1, KvOp::kDelete, ""));
  std::string upd = KeyOf(1, Entry(TableId(1), 9, 1, KvOp::kPut, "o"));
  std::string ins = KeyOf(1, Entry(TableId(1), 9, 1, KvOp::kPut, ""));
  EXPECT_LT(del, upd);
  EXPECT_LT(upd, ins);
}

TEST(KeyFormatTest, BoundsBracketTheRightKeys) {
  std::string key = KeyOf(3, Entry(TableId(7), 100, 90, KvOp::kPut, ""));
  EXPECT_LE(CommitTsBound(3, TableId(7), Ts(100)), key);
  EXPECT_GT(CommitTsBound(3, TableId(7), Ts(101)), key);
  EXPECT_LT(key, CommitTsUpperBound(3, TableId(7), Ts(100)));
  EXPECT_GE(key, CommitTsUpperBound(3, TableId(7), Ts(99)));
  EXPECT_LT(key, StartTsUpperBound(3, TableId(7), Ts(100), Ts(90)));
  EXPECT_GE(key, StartTsUpperBound(3, TableId(7), Ts(100), Ts(89)));
  EXPECT_LT(key, TableEnd(3, TableId(7)));
  EXPECT_LT(key, SubscriptionEnd(3));
  EXPECT_EQ(key.substr(0, 8), SubscriptionPrefix(3));
  EXPECT_EQ(SubscriptionEnd(3), SubscriptionPrefix(4));
  EXPECT_EQ(CommitTsUpperBound(3, TableId(7), Ts(UINT64_MAX)), TableEnd(3, TableId(7)));
}

TEST(KeyFormatTest, CorruptBytesAreCorruptionNotACrash) {
  RawKvEntry e = Entry(TableId(42), 1000, 990, KvOp::kPut, "");
  std::string key = KeyOf(5, e);
  std::string value;
  AppendStoreValue(e, &value);
  RawKvEntry out;
  EXPECT_EQ(DecodeEntry(key.substr(0, 20), value, &out).code(), Code::kCorruption);
  std::string bad_order = key;
  bad_order[32] = 9;
  EXPECT_EQ(DecodeEntry(bad_order, value, &out).code(), Code::kCorruption);
  // Every truncation, a bad version, a bad op, trailing bytes.
  for (size_t n = 0; n < value.size(); ++n) {
    EXPECT_EQ(DecodeEntry(key, value.substr(0, n), &out).code(), Code::kCorruption) << n;
  }
  std::string v = value;
  v[0] = 2;
  EXPECT_EQ(DecodeEntry(key, v, &out).code(), Code::kCorruption);
  v = value;
  v[1] = 7;
  EXPECT_EQ(DecodeEntry(key, v, &out).code(), Code::kCorruption);
  EXPECT_EQ(DecodeEntry(key, value + "x", &out).code(), Code::kCorruption);
  // A length far beyond the buffer.
  v = std::string("\x01\x01\x05\xff\xff\xff\xff\x0f", 8);
  EXPECT_EQ(DecodeEntry(key, v, &out).code(), Code::kCorruption);
  // A delete in the value under an insert key.
  RawKvEntry del = e;
  del.op = KvOp::kDelete;
  del.value.clear();
  std::string del_value;
  AppendStoreValue(del, &del_value);
  EXPECT_EQ(DecodeEntry(key, del_value, &out).code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::eventstore
