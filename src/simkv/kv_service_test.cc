// Conformance: the Tikv snapshot reads (KvGet, KvScan) of each store over
// real gRPC, with the region errors TiKV answers and its lock and range
// semantics (raw keys in requests, memcomparable region boundaries).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/memcomparable.h"
#include "common/tso.h"
#include "simkv/proto_convert.h"
#include "simkv/simkv_test_util.h"
#include "tikvpb.grpc.pb.h"

namespace sluice::simkv::testing {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

class KvServiceTest : public SimKvTest {
 protected:
  void SetUp() override { StartCluster(); }

  // The context addressing `region` on `store` (its peer there, if any).
  static kvrpcpb::Context ContextFor(const RegionInfo& region, StoreId store) {
    kvrpcpb::Context context;
    context.set_region_id(region.id.value());
    *context.mutable_region_epoch() = ToProto(region.epoch);
    context.mutable_peer()->set_store_id(store.value());
    for (const Peer& peer : region.peers) {
      if (peer.store_id == store) context.mutable_peer()->set_id(peer.id);
    }
    return context;
  }

  kvrpcpb::ScanRequest ScanRequestFor(const RegionInfo& region, std::string start, std::string end,
                                      Ts version, uint32_t limit = 100) {
    kvrpcpb::ScanRequest request;
    *request.mutable_context() = ContextFor(region, region.leader);
    request.set_start_key(std::move(start));
    request.set_end_key(std::move(end));
    request.set_version(version.value());
    request.set_limit(limit);
    return request;
  }

  std::unique_ptr<tikvpb::Tikv::Stub> StubFor(StoreId store) {
    return tikvpb::Tikv::NewStub(
        grpc::CreateChannel(cluster_->store_address(store), grpc::InsecureChannelCredentials()));
  }

  // Sends the scan to `store` (default: the context's peer store).
  kvrpcpb::ScanResponse Scan(const kvrpcpb::ScanRequest& request, StoreId store = StoreId()) {
    if (store.value() == 0) store = StoreId(request.context().peer().store_id());
    if (store.value() == 0) store = StoreId(1);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    kvrpcpb::ScanResponse response;
    grpc::Status status = StubFor(store)->KvScan(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  kvrpcpb::GetResponse Get(const RegionInfo& region, std::string key, Ts version) {
    kvrpcpb::GetRequest request;
    *request.mutable_context() = ContextFor(region, region.leader);
    request.set_key(std::move(key));
    request.set_version(version.value());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    kvrpcpb::GetResponse response;
    grpc::Status status = StubFor(region.leader)->KvGet(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static Pairs PairsOf(const kvrpcpb::ScanResponse& response) {
    Pairs out;
    for (const kvrpcpb::KvPair& pair : response.pairs()) out.emplace_back(pair.key(), pair.value());
    return out;
  }

  Ts Now() {
    Result<Ts> ts = cluster_->tso().Allocate();
    EXPECT_TRUE(ts.ok());
    return ts.ok() ? *ts : Ts();
  }
};

TEST_F(KvServiceTest, ScanReadsTheSnapshotAtItsVersionWithinTheRegion) {
  // Region ["b", "m"): "a" and "m" lie in the neighbours.
  Ts first = Put({{"a", "0"}, {"c", "1"}, {"d", "1"}, {"m", "1"}});
  Ts second = Put({{"c", "2"}, {"e", "2"}});
  RegionInfo region = RegionFor("c");

  kvrpcpb::ScanResponse at_first = Scan(ScanRequestFor(region, "b", "", first));
  EXPECT_FALSE(at_first.has_region_error());
  EXPECT_FALSE(at_first.has_error());
  EXPECT_EQ(PairsOf(at_first), (Pairs{{"c", "1"}, {"d", "1"}}));  // Ends at the region's end.
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "b", "", second))),
            (Pairs{{"c", "2"}, {"d", "1"}, {"e", "2"}}));
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "c\x01", "e", second))), (Pairs{{"d", "1"}}));
  EXPECT_TRUE(Scan(ScanRequestFor(region, "b", "", Ts(first.value() - 1))).pairs().empty());
}

TEST_F(KvServiceTest, ScanHonoursLimitAndKeyOnly) {
  Ts ts = Put({{"c", "1"}, {"d", "2"}, {"e", "3"}});
  RegionInfo region = RegionFor("c");
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "b", "", ts, 2))), (Pairs{{"c", "1"}, {"d", "2"}}));
  EXPECT_TRUE(Scan(ScanRequestFor(region, "b", "", ts, 0)).pairs().empty());  // As TiKV.
  kvrpcpb::ScanRequest keys = ScanRequestFor(region, "b", "", ts);
  keys.set_key_only(true);
  EXPECT_EQ(PairsOf(Scan(keys)), (Pairs{{"c", ""}, {"d", ""}, {"e", ""}}));
}

TEST_F(KvServiceTest, KeysAreRawAndBoundariesComparable) {
  // Keys with bytes that the memcomparable encoding escapes, around a
  // split point with such bytes.
  const std::string split("k\x00\xff", 3);
  ASSERT_TRUE(cluster_->Split(RegionFor("k").id, split).ok());
  const std::string below("k\x00", 2);
  const std::string above("k\x00\xff\x00", 4);
  Ts ts = Put({{below, "lo"}, {split, "at"}, {above, "hi"}});
  RegionInfo left = RegionFor(below);
  RegionInfo right = RegionFor(split);
  ASSERT_NE(left.id, right.id);
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(left, "k", "", ts))), (Pairs{{below, "lo"}}));
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(right, split, "", ts))),
            (Pairs{{split, "at"}, {above, "hi"}}));
  // A start key outside the region: KeyNotInRegion with comparable keys.
  kvrpcpb::ScanResponse outside = Scan(ScanRequestFor(left, split, "", ts));
  ASSERT_TRUE(outside.region_error().has_key_not_in_region()) << outside.DebugString();
  EXPECT_EQ(outside.region_error().key_not_in_region().key(), memcomparable::EncodeBytes(split));
  EXPECT_EQ(outside.region_error().key_not_in_region().region_id(), left.id.value());
  EXPECT_EQ(outside.region_error().key_not_in_region().end_key(), left.end_key);
}

TEST_F(KvServiceTest, GetReadsOneKey) {
  Ts ts = Put({{"c", "1"}});
  RegionInfo region = RegionFor("c");
  kvrpcpb::GetResponse found = Get(region, "c", ts);
  EXPECT_EQ(found.value(), "1");
  EXPECT_FALSE(found.not_found());
  EXPECT_TRUE(Get(region, "d", ts).not_found());
  EXPECT_TRUE(Get(region, "c", Ts(ts.value() - 1)).not_found());
  EXPECT_TRUE(Get(region, "z", ts).region_error().has_key_not_in_region());
}

TEST_F(KvServiceTest, ALockAtOrBelowTheVersionBlocksTheRead) {
  Put({{"c", "1"}});
  Txn txn = Prewrite({{"d", "2"}});
  RegionInfo region = RegionFor("c");

  kvrpcpb::ScanResponse below =
      Scan(ScanRequestFor(region, "b", "", Ts(txn.start_ts().value() - 1)));
  EXPECT_FALSE(below.has_error());
  EXPECT_EQ(PairsOf(below), (Pairs{{"c", "1"}}));

  kvrpcpb::ScanResponse blocked = Scan(ScanRequestFor(region, "b", "", Now()));
  ASSERT_TRUE(blocked.error().has_locked()) << blocked.DebugString();
  EXPECT_EQ(blocked.error().locked().key(), "d");
  EXPECT_EQ(blocked.error().locked().primary_lock(), "d");
  EXPECT_EQ(blocked.error().locked().lock_version(), txn.start_ts().value());
  EXPECT_EQ(blocked.error().locked().lock_type(), kvrpcpb::Put);
  ASSERT_EQ(blocked.pairs_size(), 1);  // The error again, as TiKV answers a failed scan.
  EXPECT_EQ(blocked.pairs(0).error().locked().key(), "d");
  EXPECT_TRUE(Get(region, "d", Now()).error().has_locked());

  ASSERT_TRUE(cluster_->txn().Commit(txn).ok());
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "b", "", Now()))), (Pairs{{"c", "1"}, {"d", "2"}}));
}

// ScanLock, CheckTxnStatus and ResolveLock on a transaction whose writer
// died with its primary in one region and a secondary in the next.
TEST_F(KvServiceTest, LockResolutionCallsFollowTiKV) {
  if (RegionFor("c").id == RegionFor("p").id) {
    ASSERT_TRUE(cluster_->Split(RegionFor("m").id, "m").ok());
  }
  Txn txn = Prewrite({{"c", "1"}, {"p", "2"}});
  const Ts start = txn.start_ts();
  RegionInfo left = RegionFor("c");
  RegionInfo right = RegionFor("p");
  ASSERT_NE(left.id, right.id);
  auto call = [&](auto method, const RegionInfo& region, auto request, auto* response) {
    *request.mutable_context() = ContextFor(region, region.leader);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = (StubFor(region.leader).get()->*method)(&context, request, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  };
  auto scan_locks = [&](const RegionInfo& region, Ts max_version) {
    kvrpcpb::ScanLockRequest request;
    request.set_max_version(max_version.value());
    kvrpcpb::ScanLockResponse response;
    call(&tikvpb::Tikv::Stub::KvScanLock, region, request, &response);
    return response;
  };
  auto check = [&](const RegionInfo& region, Ts lock_ts, Ts current, bool rollback) {
    kvrpcpb::CheckTxnStatusRequest request;
    request.set_primary_key("c");
    request.set_lock_ts(lock_ts.value());
    request.set_current_ts(current.value());
    request.set_rollback_if_not_exist(rollback);
    kvrpcpb::CheckTxnStatusResponse response;
    call(&tikvpb::Tikv::Stub::KvCheckTxnStatus, region, request, &response);
    return response;
  };

  kvrpcpb::ScanLockResponse right_locks = scan_locks(right, Now());
  ASSERT_EQ(right_locks.locks_size(), 1) << right_locks.DebugString();
  EXPECT_EQ(right_locks.locks(0).key(), "p");
  EXPECT_EQ(right_locks.locks(0).primary_lock(), "c");
  EXPECT_EQ(right_locks.locks(0).lock_version(), start.value());
  EXPECT_EQ(scan_locks(right, Ts(start.value() - 1)).locks_size(), 0);

  // The primary lives in the left region only.
  EXPECT_TRUE(check(right, start, Now(), false).region_error().has_key_not_in_region());
  kvrpcpb::CheckTxnStatusResponse alive = check(left, start, Now(), false);
  EXPECT_GT(alive.lock_ttl(), 0u) << alive.DebugString();
  EXPECT_EQ(alive.lock_info().key(), "c");
  const Ts late = tso::Compose(tso::Physical(start) + 60'000, 0);
  kvrpcpb::CheckTxnStatusResponse expired = check(left, start, late, false);
  EXPECT_EQ(expired.action(), kvrpcpb::TTLExpireRollback) << expired.DebugString();
  EXPECT_EQ(expired.lock_ttl(), 0u);
  EXPECT_EQ(expired.commit_version(), 0u);
  EXPECT_EQ(scan_locks(left, Now()).locks_size(), 0);
  kvrpcpb::CheckTxnStatusResponse unknown = check(left, Ts(start.value() - 1), late, false);
  EXPECT_TRUE(unknown.error().has_txn_not_found()) << unknown.DebugString();
  EXPECT_EQ(check(left, Ts(start.value() - 1), late, true).action(), kvrpcpb::LockNotExistRollback);

  kvrpcpb::ResolveLockRequest batch;
  batch.add_txn_infos()->set_txn(start.value());
  kvrpcpb::ResolveLockResponse refused;
  call(&tikvpb::Tikv::Stub::KvResolveLock, right, batch, &refused);
  EXPECT_FALSE(refused.error().abort().empty());
  kvrpcpb::ResolveLockRequest resolve;
  resolve.set_start_version(start.value());
  kvrpcpb::ResolveLockResponse resolved;
  call(&tikvpb::Tikv::Stub::KvResolveLock, right, resolve, &resolved);
  EXPECT_FALSE(resolved.has_error()) << resolved.DebugString();
  EXPECT_FALSE(resolved.has_region_error());
  EXPECT_EQ(scan_locks(right, Now()).locks_size(), 0);
  EXPECT_TRUE(Get(right, "p", Now()).not_found());
}

TEST_F(KvServiceTest, RegionErrorsFollowTiKV) {
  Ts ts = Put({{"c", "1"}});
  RegionInfo region = RegionFor("c");
  StoreId follower = FollowerStore(region);

  // Addressed to the leader's peer but sent to another store.
  kvrpcpb::ScanResponse wrong_store = Scan(ScanRequestFor(region, "c", "", ts), follower);
  ASSERT_TRUE(wrong_store.region_error().has_store_not_match()) << wrong_store.DebugString();
  EXPECT_EQ(wrong_store.region_error().store_not_match().request_store_id(), region.leader.value());
  EXPECT_EQ(wrong_store.region_error().store_not_match().actual_store_id(), follower.value());

  kvrpcpb::ScanRequest to_follower = ScanRequestFor(region, "c", "", ts);
  *to_follower.mutable_context() = ContextFor(region, follower);
  kvrpcpb::ScanResponse not_leader = Scan(to_follower);
  ASSERT_TRUE(not_leader.region_error().has_not_leader()) << not_leader.DebugString();
  EXPECT_EQ(not_leader.region_error().not_leader().leader().store_id(), region.leader.value());
  EXPECT_EQ(not_leader.region_error().not_leader().leader().id(), region.LeaderPeer()->id);

  kvrpcpb::ScanRequest unknown = ScanRequestFor(region, "c", "", ts);
  unknown.mutable_context()->set_region_id(987654);
  EXPECT_EQ(Scan(unknown).region_error().region_not_found().region_id(), 987654u);

  kvrpcpb::ScanRequest wrong_peer = ScanRequestFor(region, "c", "", ts);
  wrong_peer.mutable_context()->mutable_peer()->set_id(424242);
  kvrpcpb::ScanResponse mismatch = Scan(wrong_peer);
  ASSERT_TRUE(mismatch.region_error().has_mismatch_peer_id()) << mismatch.DebugString();
  EXPECT_EQ(mismatch.region_error().mismatch_peer_id().store_peer_id(), region.LeaderPeer()->id);
}

TEST_F(KvServiceTest, StaleEpochAfterASplitIsEpochNotMatchWithBothHalves) {
  Ts ts = Put({{"c", "1"}, {"h", "2"}});
  RegionInfo before = RegionFor("c");
  auto parts = cluster_->Split(before.id, "f");
  ASSERT_TRUE(parts.ok());
  kvrpcpb::ScanResponse stale = Scan(ScanRequestFor(before, "c", "", ts));
  ASSERT_TRUE(stale.region_error().has_epoch_not_match()) << stale.DebugString();
  const auto& current = stale.region_error().epoch_not_match().current_regions();
  ASSERT_EQ(current.size(), 2);
  EXPECT_EQ(current[0].id(), parts->first.id.value());
  EXPECT_EQ(current[0].end_key(), memcomparable::EncodeBytes("f"));
  EXPECT_EQ(current[1].id(), parts->second.id.value());
  // The current epoch reads the left half only; a conf change alone is not
  // checked on reads.
  ASSERT_TRUE(cluster_->BumpEpoch(before.id).ok());
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(parts->first, "c", "", ts))), (Pairs{{"c", "1"}}));
}

TEST_F(KvServiceTest, BusyStoreAndDownStore) {
  Ts ts = Put({{"c", "1"}});
  RegionInfo region = RegionFor("c");
  ASSERT_TRUE(cluster_->SetStoreBusy(region.leader, "read pool full", 30).ok());
  kvrpcpb::ScanResponse busy = Scan(ScanRequestFor(region, "c", "", ts));
  EXPECT_EQ(busy.region_error().server_is_busy().reason(), "read pool full");
  EXPECT_EQ(busy.region_error().server_is_busy().backoff_ms(), 30u);
  ASSERT_TRUE(cluster_->ClearStoreBusy(region.leader).ok());
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "c", "", ts))), (Pairs{{"c", "1"}}));
  EXPECT_GE(cluster_->NumKvRequests(region.leader), 2u);

  ASSERT_TRUE(cluster_->StoreDown(region.leader).ok());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  kvrpcpb::ScanResponse response;
  grpc::Status status =
      StubFor(region.leader)->KvScan(&context, ScanRequestFor(region, "c", "", ts), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  ASSERT_TRUE(cluster_->StoreRestart(region.leader).ok());
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "c", "", ts))), (Pairs{{"c", "1"}}));
}

TEST_F(KvServiceTest, VersionBelowTheGcSafePointIsAborted) {
  Ts old = Put({{"c", "1"}});
  Put({{"c", "2"}});
  Result<Ts> safe_point = cluster_->RunGc();
  ASSERT_TRUE(safe_point.ok()) << safe_point.status().ToString();
  ASSERT_GT(safe_point->value(), old.value());
  RegionInfo region = RegionFor("c");
  kvrpcpb::ScanResponse scan = Scan(ScanRequestFor(region, "b", "", old));
  EXPECT_NE(scan.error().abort().find("below the GC safe point"), std::string::npos)
      << scan.DebugString();
  EXPECT_NE(Get(region, "c", old).error().abort().find("below the GC safe point"),
            std::string::npos);
  EXPECT_EQ(PairsOf(Scan(ScanRequestFor(region, "b", "", *safe_point))), (Pairs{{"c", "2"}}));
}

TEST_F(KvServiceTest, ReverseScanIsRefused) {
  Ts ts = Put({{"c", "1"}});
  kvrpcpb::ScanRequest request = ScanRequestFor(RegionFor("c"), "d", "b", ts);
  request.set_reverse(true);
  kvrpcpb::ScanResponse response = Scan(request);
  EXPECT_FALSE(response.error().abort().empty());
  EXPECT_TRUE(response.pairs().empty());
}

}  // namespace
}  // namespace sluice::simkv::testing
