#include "simkv/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "codec/tablecodec.h"
#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/workload_test_util.h"

namespace sluice::simkv {
namespace {

// A store with a ground-truth recorder and a TSO that repeats across runs.
struct Harness {
  Harness() { store.AddObserver(&truth); }
  ~Harness() { store.RemoveObserver(&truth); }

  std::string Export() const {
    std::ostringstream out;
    EXPECT_TRUE(truth.Export(out).ok());
    return out.str();
  }

  MvccStore store;
  GroundTruth truth;
  std::unique_ptr<TsoAllocator> tso = testutil::FixedTso();
};

WorkloadOptions EveryShape(uint64_t seed) {
  WorkloadOptions o;
  o.seed = seed;
  o.narrow_tables = 2;
  o.clustered_table = true;
  o.partitioned_tables = true;
  o.dml.key_space = 60;  // Small, so rows are updated and deleted too.
  o.dml.rows_per_txn = 3;
  o.row_width = 24;
  o.record_intents = true;
  return o;
}

void Steps(Workload& w, int n) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(w.Step().ok()) << "step " << i;
}

TEST(WorkloadTest, SameSeedGivesTheSameGroundTruth) {
  auto run = [](uint64_t seed) {
    Harness h;
    WorkloadOptions o = EveryShape(seed);
    o.ddl_every = 6;
    o.long_txn_fraction = 0.1;
    o.long_txn_hold = 4;
    o.abort_fraction = 0.05;
    o.one_pc_fraction = 0.2;
    Workload w(&h.store, h.tso.get(), o);
    Steps(w, 80);
    EXPECT_TRUE(w.CommitLongTxns().ok());
    return h.Export();
  };
  std::string first = run(42);
  EXPECT_GT(first.size(), 10000u);
  EXPECT_EQ(first, run(42));
  EXPECT_NE(first, run(43));
}

TEST(WorkloadTest, EveryRowDecodesToTheIntendedValues) {
  Harness h;
  WorkloadOptions o = EveryShape(7);
  o.ddl_every = 5;
  o.long_txn_fraction = 0.1;
  o.one_pc_fraction = 0.3;
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 150);
  ASSERT_TRUE(w.CommitLongTxns().ok());
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
  WorkloadStats stats = w.stats();
  EXPECT_EQ(checked, stats.rows_inserted + stats.rows_updated + stats.rows_deleted);
  EXPECT_GT(stats.rows_updated, 0u);
  EXPECT_GT(stats.rows_deleted, 0u);
  EXPECT_GT(stats.one_pc, 0u);
  EXPECT_GT(stats.ddls, 8u);  // The setup's and the scheduled ones.
}

TEST(WorkloadTest, KitchenSinkCoversEveryColumnType) {
  Harness h;
  WorkloadOptions o = EveryShape(3);
  o.narrow_tables = 0;
  o.clustered_table = false;
  o.partitioned_tables = false;
  o.dml.values.null_fraction = 0.3;
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 40);
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
  // Every column saw a null and a non-null value.
  auto table = w.FindTable("workload", "kitchen_sink");
  ASSERT_TRUE(table.has_value());
  std::map<int64_t, std::pair<bool, bool>> seen;  // column id -> (null, value)
  for (const TxnIntent& txn : w.intents()) {
    for (const RowIntent& row : txn.rows) {
      for (size_t i = 0; i < row.values.size(); ++i) {
        (row.values[i].is_null() ? seen[row.column_ids[i]].first : seen[row.column_ids[i]].second) =
            true;
      }
    }
  }
  for (const model::ColumnInfo& c : table->info.columns) {
    bool nullable = !c.type.HasFlag(codec::mysql_flag::kNotNull) && c.name.lower != "pad";
    EXPECT_TRUE(seen[c.id].second) << c.name.original;
    if (nullable) {
      EXPECT_TRUE(seen[c.id].first) << c.name.original;
    }
  }
}

TEST(WorkloadTest, HotKeysConcentrateWrites) {
  auto hot_share = [](KeyDistribution distribution) {
    Harness h;
    WorkloadOptions o;
    o.narrow_tables = 1;
    o.kitchen_sink_table = false;
    o.dml.rows_per_txn = 1;
    o.dml.key_space = 100000;
    o.dml.distribution = distribution;
    o.dml.hot_fraction = 0.9;
    o.dml.hot_keys = 4;
    Workload w(&h.store, h.tso.get(), o);
    Steps(w, 300);
    size_t hot = 0;
    size_t total = 0;
    for (const TruthChange& c : h.truth.AllChanges()) {
      if (c.table_id.value() == kDdlJobTableId) continue;
      ++total;
      if (testutil::HandleOf(c.key).value() <= 4) ++hot;
    }
    EXPECT_EQ(total, 300u);
    return static_cast<double>(hot) / static_cast<double>(total);
  };
  EXPECT_GT(hot_share(KeyDistribution::kHot), 0.8);
  EXPECT_LT(hot_share(KeyDistribution::kUniform), 0.02);
}

TEST(WorkloadTest, LongTransactionsHoldLocksUntilDue) {
  Harness h;
  WorkloadOptions o;
  o.narrow_tables = 1;
  o.kitchen_sink_table = false;
  o.long_txn_fraction = 1;
  o.long_txn_hold = 3;
  o.record_intents = true;
  Workload w(&h.store, h.tso.get(), o);
  ASSERT_TRUE(w.Setup().ok());
  EXPECT_EQ(h.store.MinLockStartTs("", ""), std::nullopt);
  ASSERT_TRUE(w.Step().ok());  // Step 1 opens a transaction due at step 4.
  std::optional<Ts> first = h.store.MinLockStartTs("", "");
  ASSERT_TRUE(first.has_value());
  auto table = w.FindTable("workload", "t1");
  ASSERT_TRUE(table.has_value());
  Span span = TableRecordSpan(TableId(table->info.id));
  EXPECT_EQ(h.store.MinLockStartTs(span.start, span.end), first);
  Steps(w, 2);
  EXPECT_EQ(h.store.MinLockStartTs("", ""), first);
  EXPECT_EQ(w.stats().long_committed, 0u);
  ASSERT_TRUE(w.Step().ok());  // Step 4 commits it first.
  EXPECT_EQ(w.stats().long_committed, 1u);
  EXPECT_GT(h.store.MinLockStartTs("", ""), first);
  ASSERT_TRUE(w.CommitLongTxns().ok());
  EXPECT_EQ(h.store.MinLockStartTs("", ""), std::nullopt);
  WorkloadStats stats = w.stats();
  EXPECT_EQ(stats.long_opened, 4u);
  EXPECT_EQ(stats.long_committed, 4u);
  size_t checked = 0;
  Status st = testutil::CheckRowsAgainstIntents(h.store, h.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(WorkloadTest, WriteConflictsAreRetried) {
  Harness h;
  WorkloadOptions o;
  o.narrow_tables = 1;
  o.kitchen_sink_table = false;
  o.dml.rows_per_txn = 1;
  bool injected = false;
  std::string conflicted_key;
  o.before_prewrite = [&](Ts, const std::vector<Mutation>& m) {
    std::optional<TableId> table = GroundTruth::RecordTableId(m[0].key);
    if (injected || !table.has_value() || table->value() == kDdlJobTableId) return;
    injected = true;
    conflicted_key = m[0].key;
    Ts start = h.tso->Allocate().value();
    Ts commit = h.tso->Allocate().value();
    ASSERT_TRUE(h.store.CommitOnePc({Mutation::Put(m[0].key, "other")}, start, commit).ok());
  };
  o.record_intents = true;
  Workload w(&h.store, h.tso.get(), o);
  ASSERT_TRUE(w.Step().ok());
  EXPECT_TRUE(injected);
  EXPECT_EQ(w.stats().conflict_retries, 1u);
  EXPECT_EQ(w.stats().txns, 1u);
  auto value = h.store.Get(conflicted_key, h.tso->Allocate().value());
  ASSERT_TRUE(value.ok());
  ASSERT_TRUE(value.value().has_value());
  EXPECT_NE(*value.value(), "other");
}

// Sequential handles with an insert-only mix: every row is new, and each
// table's rows commit in handle order.
TEST(WorkloadTest, SequentialKeysInsertNewRowsInKeyOrder) {
  Harness h;
  WorkloadOptions o;
  o.narrow_tables = 3;
  o.kitchen_sink_table = false;
  o.dml.rows_per_txn = 5;
  o.dml.key_space = 10;  // Ignored: more rows than that are written.
  o.dml.distribution = KeyDistribution::kSequential;
  o.dml.insert_weight = 1;
  o.dml.update_weight = 0;
  o.dml.delete_weight = 0;
  Workload w(&h.store, h.tso.get(), o);
  Steps(w, 60);
  EXPECT_EQ(w.stats().rows_inserted, 300u);
  EXPECT_EQ(w.stats().rows_updated, 0u);
  // By table: (commit ts, handle) of every change, in commit order.
  std::map<int64_t, std::vector<std::pair<Ts, int64_t>>> changes;
  for (const TruthChange& c : h.truth.AllChanges()) {
    if (c.table_id.value() == kDdlJobTableId) continue;
    changes[c.table_id.value()].emplace_back(c.commit_ts, testutil::HandleOf(c.key).value());
  }
  EXPECT_EQ(changes.size(), 3u);
  for (auto& [table, list] : changes) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_GT(list[i].second, list[i - 1].second) << "table " << table << " change " << i;
    }
  }
}

TEST(WorkloadTest, PregeneratedTransactionsApplyLikeSteps) {
  WorkloadOptions o = EveryShape(11);
  Harness stepped;
  {
    Workload w(&stepped.store, stepped.tso.get(), o);
    Steps(w, 40);
  }
  Harness applied;
  Workload w(&applied.store, applied.tso.get(), o);
  auto txns = w.Pregenerate(40);
  ASSERT_TRUE(txns.ok()) << txns.status().ToString();
  ASSERT_EQ(txns->size(), 40u);
  for (const PreparedTxn& txn : *txns) ASSERT_TRUE(w.Apply(txn).ok());
  EXPECT_EQ(w.stats().txns, 40u);
  EXPECT_EQ(stepped.Export(), applied.Export());
  size_t checked = 0;
  Status st =
      testutil::CheckRowsAgainstIntents(applied.store, applied.truth, w.intents(), &checked);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(WorkloadTest, RunsOnItsOwnThread) {
  Harness h;
  WorkloadOptions o;
  o.narrow_tables = 1;
  o.kitchen_sink_table = false;
  Workload w(&h.store, h.tso.get(), o);
  w.Start(RunLimit{.steps = 25});
  EXPECT_TRUE(w.Wait().ok());
  EXPECT_EQ(w.stats().steps, 25u);
  w.Start(RunLimit{});  // Unlimited: runs until stopped.
  EXPECT_TRUE(w.Stop().ok());
  EXPECT_GE(w.stats().steps, 25u);
  // A cancelled token stops Run() before any step.
  CancelSource cancel;
  cancel.Cancel();
  uint64_t before = w.stats().steps;
  EXPECT_TRUE(w.Run(RunLimit{.steps = 10}, cancel.token()).ok());
  EXPECT_EQ(w.stats().steps, before);
}

}  // namespace
}  // namespace sluice::simkv
