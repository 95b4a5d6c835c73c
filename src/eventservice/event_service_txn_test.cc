// Event service tests around transactions: pieces under a memory budget,
// back-pressure, and updates split into delete + insert.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eventservice/event_service.h"
#include "eventservice/service_fixture.h"

namespace sluice::eventservice {
namespace {

using testing::BigRowValue;
using testing::Disp;
using testing::EventServiceFixture;
using testing::IntHandleSchema;
using testing::Put;
using testing::Recorder;
using testing::RowValue;

class EventServiceTxnTest : public EventServiceFixture {
 protected:
  // Acks whatever is in flight until `done` holds (the sink flushing).
  void AckUntil(Recorder* rec, const std::function<bool()>& done) {
    ASSERT_TRUE(PollUntil(
        [&] {
          rec->AckAll();
          return done();
        },
        std::chrono::seconds(20)))
        << rec->Summary();
  }

  // Every DML event of the recorder flattened to (kind, handle) pairs, with
  // the pieces of each transaction checked on the way.
  static std::vector<std::pair<event::RowKind, int64_t>> Rows(const Recorder& rec) {
    std::vector<std::pair<event::RowKind, int64_t>> out;
    uint32_t expect_piece = 0;
    for (const auto& item : rec.items()) {
      if (item.kind != 'M') continue;
      EXPECT_EQ(item.dml->piece, expect_piece);
      EXPECT_FALSE(item.dml->rows.empty());
      expect_piece = item.dml->last_piece ? 0 : expect_piece + 1;
      for (const auto& r : item.dml->rows) {
        const auto& image = r.kind == event::RowKind::kDelete ? r.pre_row : r.row;
        out.emplace_back(r.kind, image[0].int64());
      }
    }
    EXPECT_EQ(expect_piece, 0u) << "a transaction did not end with its last piece";
    return out;
  }
};

TEST_F(EventServiceTxnTest, LargeTransactionComesInPiecesWithinTheBudget) {
  StartService();
  constexpr size_t kBudget = 4096;
  constexpr int kRows = 120;
  Recorder rec(Disp(1), /*auto_ack=*/false);
  auto kv = Register(&rec, Disp(1), Ts(10), kBudget);
  KvBatch batch;
  for (int i = 0; i < kRows; ++i)
    batch.push_back(Put(kTable, i, BigRowValue(i, 300 + i % 7), 20, 15));
  batch.push_back(Put(kTable, 1000, RowValue("after", 1), 30, 25));
  Persist(kv.get(), std::move(batch));
  kv->AdvanceResolvedTs(Ts(40));
  AckUntil(&rec, [&] { return rec.HasResolved(Ts(40)); });

  auto rows = Rows(rec);
  ASSERT_EQ(rows.size(), static_cast<size_t>(kRows + 1));
  for (int i = 0; i < kRows; ++i) EXPECT_EQ(rows[i].second, i);
  EXPECT_EQ(rows.back().second, 1000);
  auto items = rec.items();
  size_t pieces = 0;
  for (const auto& item : items) {
    if (item.kind == 'M' && item.dml->commit_ts == Ts(20)) ++pieces;
  }
  EXPECT_GT(pieces, 5u);  // 120 rows of ~300 bytes cannot fit in 4 KiB.
  EXPECT_LE(rec.peak(), kBudget + rec.max_row()) << "peak " << rec.peak();
  EXPECT_EQ(items.back().kind, 'R');
}

TEST_F(EventServiceTxnTest, StopsAtTheBudgetUntilAcked) {
  StartService();
  constexpr size_t kBudget = 2048;
  Recorder rec(Disp(1), /*auto_ack=*/false);
  auto kv = Register(&rec, Disp(1), Ts(10), kBudget);
  KvBatch batch;
  for (int i = 0; i < 20; ++i)
    batch.push_back(Put(kTable, i, BigRowValue(i, 500), 20 + i * 2, 19 + i * 2));
  Persist(kv.get(), std::move(batch));
  kv->AdvanceResolvedTs(Ts(100));
  ASSERT_TRUE(PollUntil([&] { return rec.in_flight() >= kBudget; })) << rec.Summary();
  size_t delivered = rec.count('M');
  EXPECT_LT(delivered, 20u);
  // A keep-alive mark proves the worker looked again and still held back.
  clock_.Advance(std::chrono::seconds(3));
  ASSERT_TRUE(PollUntil([&] { return rec.count('R') >= 1; })) << rec.Summary();
  EXPECT_EQ(rec.count('M'), delivered);
  EXPECT_LE(rec.in_flight(), kBudget + rec.max_row());
  EXPECT_EQ(service_->UnackedBytes(Disp(1)), rec.in_flight());
  // The consumer acks: the rest comes.
  AckUntil(&rec, [&] { return rec.HasResolved(Ts(100)); });
  EXPECT_EQ(rec.count('M'), 20u);
  EXPECT_LE(rec.peak(), kBudget + rec.max_row());
  EXPECT_EQ(Rows(rec).size(), 20u);
}

// t(id PK, name UNIQUE, v): a transaction swapping two names and touching a
// third row's v. The swap must reach the sink as both deletes first, then
// both inserts, or the downstream would hit a duplicate key.
KvBatch SwapTxn() {
  return {Put(100, 1, RowValue("b", 1), 20, 15, RowValue("a", 1)),
          Put(100, 2, RowValue("a", 2), 20, 15, RowValue("b", 2)),
          Put(100, 3, RowValue("c", 9), 20, 15, RowValue("c", 3)),
          Put(100, 4, RowValue("d", 4), 20, 15), Put(100, 5, RowValue("e", 5), 30, 25)};
}

std::vector<std::pair<event::RowKind, int64_t>> SwapExpected() {
  using K = event::RowKind;
  return {{K::kDelete, 1}, {K::kDelete, 2}, {K::kUpdate, 3}, {K::kInsert, 4},
          {K::kInsert, 1}, {K::kInsert, 2}, {K::kInsert, 5}};
}

TEST_F(EventServiceTxnTest, UpdateChangingAUniqueKeyIsSplitDeletesFirst) {
  schema_.AddSchema(kTable, IntHandleSchema(kTable, Ts(2), false, /*unique_name=*/true));
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  Persist(kv.get(), SwapTxn());
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(40)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 M30 R40");
  EXPECT_EQ(Rows(rec), SwapExpected());
  auto items = rec.items();
  EXPECT_EQ(items[0].dml->rows[4].row[1], codec::Datum::Bytes("b"));  // Insert half of row 1.
  EXPECT_EQ(service_->stats().split_updates, 2u);
}

TEST_F(EventServiceTxnTest, SplitTransactionInPiecesKeepsTheOrder) {
  schema_.AddSchema(kTable, IntHandleSchema(kTable, Ts(2), false, /*unique_name=*/true));
  StartService();
  Recorder rec(Disp(1), /*auto_ack=*/false);
  auto kv = Register(&rec, Disp(1), Ts(10), /*budget=*/1);  // One row per piece.
  Persist(kv.get(), SwapTxn());
  kv->AdvanceResolvedTs(Ts(40));
  AckUntil(&rec, [&] { return rec.HasResolved(Ts(40)); });
  EXPECT_EQ(Rows(rec), SwapExpected());
  EXPECT_EQ(rec.count('M'), 7u);
}

TEST_F(EventServiceTxnTest, ManyTransactionsAtOneCommitTsResumeBetweenThem) {
  StartService();
  Recorder rec(Disp(1), /*auto_ack=*/false);
  auto kv = Register(&rec, Disp(1), Ts(10), /*budget=*/600);
  KvBatch batch;
  for (int i = 0; i < 10; ++i) batch.push_back(Put(kTable, i, BigRowValue(i, 400), 20, 11 + i));
  Persist(kv.get(), std::move(batch));
  kv->AdvanceResolvedTs(Ts(30));
  AckUntil(&rec, [&] { return rec.HasResolved(Ts(30)); });
  auto rows = Rows(rec);
  ASSERT_EQ(rows.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rows[i].second, i);
  for (const auto& item : rec.items()) {
    if (item.kind == 'M') {
      EXPECT_TRUE(item.dml->last_piece);
    }
  }
}

}  // namespace
}  // namespace sluice::eventservice
