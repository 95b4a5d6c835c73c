// Conformance: incremental scan, INITIALIZED, and live rows, as a CDC client
// sees them.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "common/lifecycle.h"
#include "common/memcomparable.h"
#include "common/test_util.h"
#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

using cdcpb::Event;

class CdcScanTest : public SimKvTest {
 protected:
  void SetUp() override { StartCluster(); }

  const RegionLog& Log(const CdcTestClient& client, uint64_t request_id, const RegionInfo& region) {
    snapshot_ = client.Snapshot();
    const RegionLog* log = snapshot_.Find(request_id, region.id.value());
    EXPECT_NE(log, nullptr);
    static const RegionLog kEmpty;
    return log == nullptr ? kEmpty : *log;
  }

  StreamLog snapshot_;
};

TEST_F(CdcScanTest, IncrementalScanSendsCommittedAfterCheckpointThenInitialized) {
  Ts first = Put({{"c1", "v1"}, {"c2", "w1"}});
  Ts second = Put({{"c1", "v2"}});
  Ts third = Put({{"c3", "x"}});
  Put({{"a1", "outside"}, {"n1", "outside"}});
  RegionInfo region = RegionFor("c");

  auto client = Subscribe(region, 7, first);
  const RegionLog& log = Log(*client, 7, region);
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.rows.back().type(), Event::INITIALIZED);
  std::vector<Row> committed = log.RowsOfType(Event::COMMITTED);
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].key(), "c1");  // Raw keys, key order.
  EXPECT_EQ(committed[0].commit_ts(), second.value());
  EXPECT_EQ(committed[0].value(), "v2");
  EXPECT_EQ(committed[0].old_value(), "v1");
  EXPECT_EQ(committed[0].op_type(), Row::PUT);
  EXPECT_EQ(committed[1].key(), "c3");
  EXPECT_EQ(committed[1].commit_ts(), third.value());
  EXPECT_TRUE(committed[1].old_value().empty());
  ExpectNoViolations(*client);
}

// A region whose scan fills many batches (each up to kEventMaxBytes): they
// are sent while the snapshot is still being read, and every row arrives
// once, in key order, before INITIALIZED.
TEST_F(CdcScanTest, AScanOfManyBatchesArrivesWholeAndInKeyOrder) {
  const std::string value(300, 'v');
  auto key = [](int k) {
    std::string out = "c";
    out += std::to_string(10000 + k);
    return out;
  };
  Ts before = Put({{"c0", "first"}});
  constexpr int kKeys = 1000;  // ~300 KB of values: about ten batches.
  for (int i = 0; i < kKeys; i += 100) {
    std::vector<std::pair<std::string, std::string>> kvs;
    for (int k = i; k < i + 100; ++k) kvs.push_back({key(k), value});
    Put(kvs);
  }
  RegionInfo region = RegionFor("c");

  auto client = Subscribe(region, 9, before);
  const RegionLog& log = Log(*client, 9, region);
  ASSERT_FALSE(log.rows.empty());
  EXPECT_EQ(log.rows.back().type(), Event::INITIALIZED);
  std::vector<Row> committed = log.RowsOfType(Event::COMMITTED);
  ASSERT_EQ(committed.size(), static_cast<size_t>(kKeys));
  for (int k = 0; k < kKeys; ++k) {
    EXPECT_EQ(committed[k].key(), key(k)) << k;
    EXPECT_EQ(committed[k].value(), value);
  }
  ExpectNoViolations(*client);
}

// Stopping the cluster while a client that does not read holds every scan
// worker (their batches wait for room in a small stream budget) and more
// scans are queued behind them: the scans' readers and workers all end, and
// Stop() returns.
TEST_F(CdcScanTest, StopEndsScansBlockedOnASlowClientAndThoseQueued) {
  RestartCluster([](SimClusterOptions* o) { o->sink.max_bytes = 64 * 1024; });
  const std::string value(1024, 'v');
  for (int i = 0; i < 40; ++i) {  // ~4 MB in one region: far above the budget.
    std::vector<std::pair<std::string, std::string>> kvs;
    for (int k = 0; k < 100; ++k) {
      std::string key = "c";
      key += std::to_string(i * 100 + k);
      kvs.push_back({key, value});
    }
    Put(kvs);
  }
  RegionInfo region = RegionFor("c");
  auto slow = ConnectPaused(region);
  constexpr uint64_t kRequests = 6;  // Three times the store's scan workers.
  for (uint64_t id = 1; id <= kRequests; ++id) {
    ASSERT_TRUE(slow->Send(RegisterRequest(cluster_id(), region, id, Ts(0))));
  }
  ASSERT_TRUE(PollUntil([&] { return cluster_->NumSubscriptions(region.leader) == kRequests; }));
  // A hang here fails the test at its time limit; the sanitizer builds
  // check the hand-over between workers and readers on the way down.
  cluster_->Stop();
}

TEST_F(CdcScanTest, ScanCoversOnlyTheRequestedRangeWithinTheRegion) {
  Put({{"c1", "1"}, {"d1", "2"}, {"e1", "3"}});
  RegionInfo region = RegionFor("c");
  auto client = Connect(LeaderAddress(region));
  auto request = RegisterRequest(cluster_id(), region, 1, Ts(0));
  request.set_start_key(memcomparable::EncodeBytes("d"));
  request.set_end_key(memcomparable::EncodeBytes("zzz"));  // Beyond the region: clipped.
  ASSERT_TRUE(client->Send(request));
  ASSERT_TRUE(client->WaitInitialized(1, region.id.value()));
  std::vector<Row> committed = Log(*client, 1, region).RowsOfType(Event::COMMITTED);
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].key(), "d1");
  EXPECT_EQ(committed[1].key(), "e1");
  Put({{"c2", "not observed"}, {"d2", "observed"}});
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(1, region.id.value())->CountType(Event::COMMIT) == 1;
  }));
  EXPECT_EQ(Log(*client, 1, region).RowsOfType(Event::COMMIT)[0].key(), "d2");
  ExpectNoViolations(*client);
}

TEST_F(CdcScanTest, OpenLocksAreScannedAsPrewritesAndTheirCommitMatches) {
  Txn txn = Prewrite({{"c5", "locked"}});
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  std::vector<Row> prewrites = Log(*client, 1, region).RowsOfType(Event::PREWRITE);
  ASSERT_EQ(prewrites.size(), 1u);
  EXPECT_EQ(prewrites[0].start_ts(), txn.start_ts().value());
  EXPECT_EQ(prewrites[0].value(), "locked");
  Result<Ts> commit = cluster_->txn().Commit(txn);
  ASSERT_TRUE(commit.ok());
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(1, region.id.value())->CountType(Event::COMMIT) == 1;
  }));
  Row row = Log(*client, 1, region).RowsOfType(Event::COMMIT)[0];
  EXPECT_EQ(row.commit_ts(), commit->value());
  EXPECT_EQ(row.start_ts(), txn.start_ts().value());
  ExpectNoViolations(*client);  // The COMMIT matched the scanned PREWRITE.
}

TEST_F(CdcScanTest, LivePrewriteCommitPairsCarryIndexAndOldValue) {
  Put({{"c1", "old"}});
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 3, cluster_->tso().Max());
  Ts commit = Put({{"c1", "new"}, {"c2", "fresh"}});
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(3, region.id.value())->CountType(Event::COMMIT) == 2;
  }));
  const RegionLog& log = Log(*client, 3, region);
  std::vector<Row> prewrites = log.RowsOfType(Event::PREWRITE);
  ASSERT_EQ(prewrites.size(), 2u);
  EXPECT_EQ(prewrites[0].key(), "c1");
  EXPECT_EQ(prewrites[0].old_value(), "old");
  EXPECT_EQ(prewrites[1].key(), "c2");
  EXPECT_TRUE(prewrites[1].old_value().empty());
  for (const Row& row : log.RowsOfType(Event::COMMIT)) {
    EXPECT_EQ(row.commit_ts(), commit.value());
    EXPECT_EQ(row.start_ts(), prewrites[0].start_ts());
  }
  // Live rows carry the apply index; it never goes back.
  for (size_t i = 0; i < log.rows.size(); ++i) {
    if (log.rows[i].type() == Event::INITIALIZED) continue;
    EXPECT_GT(log.indexes[i], 0u);
    if (i > 0) {
      EXPECT_GE(log.indexes[i], log.indexes[i - 1]);
    }
  }
  ExpectNoViolations(*client);
}

TEST_F(CdcScanTest, WithoutReadOldValueNoOldValuesAreSent) {
  Put({{"c1", "old"}});
  Put({{"c1", "mid"}});
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1, Ts(0), /*old_value=*/false);
  Put({{"c1", "new"}});
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(1, region.id.value())->CountType(Event::COMMIT) == 1;
  }));
  for (const Row& row : Log(*client, 1, region).rows) EXPECT_TRUE(row.old_value().empty());
  ExpectNoViolations(*client);
}

TEST_F(CdcScanTest, RollbackIsSentAfterItsPrewrite) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  Txn txn = Prewrite({{"c9", "doomed"}});
  ASSERT_TRUE(cluster_->txn().Rollback(txn).ok());
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(1, region.id.value())->CountType(Event::ROLLBACK) == 1;
  }));
  Row rollback = Log(*client, 1, region).RowsOfType(Event::ROLLBACK)[0];
  EXPECT_EQ(rollback.key(), "c9");
  EXPECT_EQ(rollback.start_ts(), txn.start_ts().value());
  EXPECT_EQ(rollback.commit_ts(), 0u);
  EXPECT_EQ(rollback.op_type(), Row::UNKNOWN);
  ExpectNoViolations(*client);
}

TEST_F(CdcScanTest, DeletesAreSentAsDeleteOps) {
  Put({{"c1", "v"}});
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1, cluster_->tso().Max());
  Result<Txn> txn = cluster_->txn().Begin();
  ASSERT_TRUE(txn.ok());
  txn->Delete("c1");
  ASSERT_TRUE(cluster_->txn().Commit(*txn).ok());
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(1, region.id.value())->CountType(Event::COMMIT) == 1;
  }));
  const RegionLog& log = Log(*client, 1, region);
  EXPECT_EQ(log.RowsOfType(Event::PREWRITE)[0].op_type(), Row::DELETE);
  EXPECT_EQ(log.RowsOfType(Event::PREWRITE)[0].old_value(), "v");
  EXPECT_EQ(log.RowsOfType(Event::COMMIT)[0].op_type(), Row::DELETE);
  ExpectNoViolations(*client);
}

// Writes race with the subscription: whatever the interleaving, the client
// must see every change exactly once (scan or live) and no COMMIT without
// its PREWRITE.
TEST_F(CdcScanTest, ScanAndLiveEventsStitchWithoutGapsOrDuplicates) {
  RegionInfo region = RegionFor("c");
  std::atomic<int> written{0};
  OwnedThread writer;
  writer.Start("test-writer", [&](StopToken token) {
    for (int i = 0; !token.cancelled() && i < 400; ++i) {
      std::string key = "c";
      key += std::to_string(i % 17);
      std::string value = "v";
      value += std::to_string(i);
      Put({{key, value}});
      written.fetch_add(1);
    }
  });
  ASSERT_TRUE(PollUntil([&] { return written.load() > 20; }));
  auto client = Subscribe(region, 1);
  writer.Join();
  Ts last = cluster_->tso().Max();
  cluster_->AdvanceResolvedTs();
  ASSERT_TRUE(client->WaitResolvedAbove(1, region.id.value(), last.value()).has_value());

  // Replay what the client saw: COMMITTED rows, and COMMITs with the value of
  // their PREWRITE, keyed by (key, commit ts) so a duplicate would show.
  const RegionLog& log = Log(*client, 1, region);
  std::map<std::pair<std::string, uint64_t>, std::string> changes;
  std::map<std::pair<uint64_t, std::string>, std::string> prewrites;
  size_t seen = 0;
  for (const Row& row : log.rows) {
    if (row.type() == Event::PREWRITE) prewrites[{row.start_ts(), row.key()}] = row.value();
    if (row.type() == Event::COMMITTED) {
      changes[{row.key(), row.commit_ts()}] = row.value();
      ++seen;
    }
    if (row.type() == Event::COMMIT) {
      changes[{row.key(), row.commit_ts()}] = prewrites[{row.start_ts(), row.key()}];
      ++seen;
    }
  }
  EXPECT_EQ(seen, changes.size());  // No duplicates.
  EXPECT_EQ(changes.size(), 400u);  // No gaps.
  std::map<std::string, std::string> final_state;
  for (const auto& [key_ts, value] : changes) final_state[key_ts.first] = value;
  auto expected = cluster_->mvcc().Scan("b", "m", cluster_->tso().Max(), 0);
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(final_state.size(), expected.value().size());
  for (const KvPair& pair : expected.value()) EXPECT_EQ(final_state[pair.key], pair.value);
  ExpectNoViolations(*client);
}

}  // namespace
}  // namespace sluice::simkv::testing
