// Concurrent Percolator transactions against one MvccStore: threads write
// disjoint (private) and overlapping (shared) keys with a shared TSO, abort on
// conflicts, and the final state must equal a replay of what committed.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/tso_allocator.h"

namespace sluice::simkv {
namespace {

constexpr int kThreads = 6;
constexpr int kTxnsPerThread = 150;
constexpr int kKeysPerPool = 8;
constexpr int64_t kSharedTable = 1;
constexpr int64_t kFirstPrivateTable = 10;
constexpr uint64_t kSeed = 20240601;

std::string RowKey(int64_t table_id, int64_t handle) {
  std::string key = "t";
  for (uint64_t v : {static_cast<uint64_t>(table_id), static_cast<uint64_t>(handle)}) {
    v ^= uint64_t{1} << 63;
    for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(v >> shift));
    if (key.size() == 9) key += "_r";
  }
  return key;
}

struct CommittedTxn {
  Ts commit_ts;
  std::vector<Mutation> mutations;
};

class Client {
 public:
  Client(int id, MvccStore* store, TsoAllocator* tso, std::barrier<>* round)
      : id_(id), store_(store), tso_(tso), round_(round), rng_(kSeed + id) {}

  void Run() {
    for (int i = 0; i < kTxnsPerThread; ++i) RunOne(i);
  }
  const std::vector<CommittedTxn>& committed() const { return committed_; }
  int conflicts() const { return conflicts_; }

 private:
  std::vector<Mutation> RandomMutations(int txn, bool* private_only) {
    std::map<std::string, Mutation> by_key;
    *private_only = true;
    int count = 1 + static_cast<int>(rng_() % 4);
    for (int n = 0; n < count; ++n) {
      bool shared = rng_() % 2 == 0;
      *private_only &= !shared;
      int64_t table = shared ? kSharedTable : kFirstPrivateTable + id_;
      std::string key = RowKey(table, static_cast<int64_t>(rng_() % kKeysPerPool));
      uint64_t dice = rng_() % 10;
      std::string value = std::to_string(id_) + "-" + std::to_string(txn) + "-" + std::to_string(n);
      by_key[key] = dice == 0  ? Mutation::Lock(key)
                    : dice < 3 ? Mutation::Delete(key)
                               : Mutation::Put(key, value);
    }
    std::vector<Mutation> out;
    for (auto& [key, m] : by_key) out.push_back(std::move(m));
    std::shuffle(out.begin(), out.end(), rng_);
    return out;
  }

  void RunOne(int txn) {
    bool private_only = false;
    std::vector<Mutation> mutations = RandomMutations(txn, &private_only);
    std::vector<std::string> keys;
    for (const Mutation& m : mutations) keys.push_back(m.key);
    Ts start_ts = *tso_->Allocate(1);
    // Every client takes its start ts before any writes in this round, so
    // shared keys see both lock conflicts and write conflicts.
    round_->arrive_and_wait();
    if (rng_() % 5 == 0) return RunOnePc(mutations, start_ts, private_only);
    TxnStatus prewrite = store_->Prewrite(mutations, keys[0], start_ts, 3000);
    if (!prewrite.ok()) {
      EXPECT_FALSE(private_only) << prewrite.error().ToString();
      ExpectConflict(prewrite.error());
      EXPECT_TRUE(store_->Rollback(keys, start_ts).ok());
      return;
    }
    if (rng_() % 10 == 0) {  // The client gives up after prewriting.
      EXPECT_TRUE(store_->Rollback(keys, start_ts).ok());
      return;
    }
    Ts commit_ts = *tso_->Allocate(1);
    TxnStatus primary = store_->Commit({keys[0]}, start_ts, commit_ts);
    ASSERT_TRUE(primary.ok()) << primary.error().ToString();
    if (keys.size() > 1) {
      std::vector<std::string> secondaries(keys.begin() + 1, keys.end());
      TxnStatus rest = store_->Commit(secondaries, start_ts, commit_ts);
      ASSERT_TRUE(rest.ok()) << rest.error().ToString();
    }
    committed_.push_back(CommittedTxn{commit_ts, std::move(mutations)});
  }

  void RunOnePc(std::vector<Mutation>& mutations, Ts start_ts, bool private_only) {
    Ts commit_ts = *tso_->Allocate(1);
    TxnStatus status = store_->CommitOnePc(mutations, start_ts, commit_ts);
    if (!status.ok()) {
      EXPECT_FALSE(private_only) << status.error().ToString();
      ExpectConflict(status.error());
      return;
    }
    committed_.push_back(CommittedTxn{commit_ts, std::move(mutations)});
  }

  void ExpectConflict(const TxnError& error) {
    ++conflicts_;
    EXPECT_TRUE(error.kind == TxnErrorKind::kWriteConflict ||
                error.kind == TxnErrorKind::kKeyIsLocked)
        << error.ToString();
  }

  const int id_;
  MvccStore* const store_;
  TsoAllocator* const tso_;
  std::barrier<>* const round_;
  std::mt19937_64 rng_;
  std::vector<CommittedTxn> committed_;
  int conflicts_ = 0;
};

TEST(MvccConcurrencyTest, FinalStateEqualsCommittedHistory) {
  MvccStore store;
  GroundTruth truth;
  store.AddObserver(&truth);
  TsoAllocator tso([] { return int64_t{1'700'000'000'000}; });  // A stalled clock.
  std::vector<Client> clients;
  std::barrier<> round(kThreads);
  for (int i = 0; i < kThreads; ++i) clients.emplace_back(i, &store, &tso, &round);
  std::vector<std::thread> threads;
  for (Client& client : clients) threads.emplace_back([&client] { client.Run(); });
  for (std::thread& thread : threads) thread.join();
  store.RemoveObserver(&truth);

  // Replay every committed transaction in commit-ts order.
  std::vector<CommittedTxn> all;
  int conflicts = 0;
  for (const Client& client : clients) {
    all.insert(all.end(), client.committed().begin(), client.committed().end());
    conflicts += client.conflicts();
  }
  RecordProperty("conflicts", conflicts);
  EXPECT_GT(conflicts, 0);
  std::sort(all.begin(), all.end(),
            [](const CommittedTxn& a, const CommittedTxn& b) { return a.commit_ts < b.commit_ts; });
  EXPECT_GT(all.size(), static_cast<size_t>(kThreads * kTxnsPerThread / 4));
  std::map<std::string, std::string> expected;
  size_t data_changes = 0;
  for (const CommittedTxn& txn : all) {
    for (const Mutation& m : txn.mutations) {
      if (m.op == MutationOp::kPut) expected[m.key] = m.value;
      if (m.op == MutationOp::kDelete) expected.erase(m.key);
      if (m.op != MutationOp::kLock) ++data_changes;
    }
  }

  EXPECT_TRUE(store.Locks("", "").empty());
  auto scan = store.Scan("", "", kMaxTs, 0);
  ASSERT_TRUE(scan.ok());
  std::map<std::string, std::string> actual;
  for (const KvPair& kv : scan.value()) actual[kv.key] = kv.value;
  EXPECT_EQ(actual, expected);

  // The ground truth saw exactly the committed changes, with old values that
  // chain per key.
  EXPECT_EQ(truth.size(), data_changes);
  std::map<std::string, std::string> from_truth;
  for (const TruthChange& change : truth.AllChanges()) {
    auto previous = from_truth.find(change.key);
    std::optional<std::string> old_value;
    if (previous != from_truth.end()) old_value = previous->second;
    EXPECT_EQ(change.old_value, old_value);
    if (change.kind == WriteKind::kPut) {
      from_truth[change.key] = change.value;
    } else {
      from_truth.erase(change.key);
    }
  }
  EXPECT_EQ(from_truth, expected);
  auto incremental = store.ScanCommitted("", "", Ts(0), kMaxTs);
  ASSERT_TRUE(incremental.ok());
  EXPECT_EQ(incremental->rows.size(), data_changes);
}

}  // namespace
}  // namespace sluice::simkv
