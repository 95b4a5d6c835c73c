// The reader's reactions to TiKV's answers, case by case, without a network.
#include "kvclient/read_errors.h"

#include <gtest/gtest.h>

namespace sluice::kvclient {
namespace {

const RegionId kRegion(7);

TEST(RegionErrorPlanTest, NotLeaderWithALeaderMovesTheLeaderAndRetriesNow) {
  errorpb::Error error;
  error.mutable_not_leader()->set_region_id(7);
  error.mutable_not_leader()->mutable_leader()->set_id(71);
  error.mutable_not_leader()->mutable_leader()->set_store_id(3);
  RegionErrorPlan plan = PlanForRegionError(error, kRegion);
  EXPECT_TRUE(plan.update_leader);
  EXPECT_EQ(plan.leader_store, StoreId(3));
  EXPECT_EQ(plan.leader_peer_id, 71u);
  EXPECT_TRUE(plan.retry_now);
  EXPECT_FALSE(plan.invalidate_region);
  EXPECT_EQ(plan.status.code(), Code::kUnavailable);
}

TEST(RegionErrorPlanTest, NotLeaderWithoutALeaderReloads) {
  errorpb::Error error;
  error.mutable_not_leader()->set_region_id(7);
  RegionErrorPlan plan = PlanForRegionError(error, kRegion);
  EXPECT_FALSE(plan.update_leader);
  EXPECT_TRUE(plan.invalidate_region);
  EXPECT_FALSE(plan.retry_now);
}

TEST(RegionErrorPlanTest, StaleRegionsAreReloadedAfterABackoff) {
  std::vector<errorpb::Error> errors(6);
  errors[0].mutable_epoch_not_match();
  errors[1].mutable_region_not_found()->set_region_id(7);
  errors[2].mutable_key_not_in_region()->set_key("k");
  errors[3].mutable_mismatch_peer_id()->set_request_peer_id(1);
  errors[4].mutable_stale_command();
  errors[5].set_message("something new");
  for (const errorpb::Error& error : errors) {
    SCOPED_TRACE(error.ShortDebugString());
    RegionErrorPlan plan = PlanForRegionError(error, kRegion);
    EXPECT_TRUE(plan.invalidate_region);
    EXPECT_FALSE(plan.invalidate_store);
    EXPECT_FALSE(plan.retry_now);
    EXPECT_FALSE(plan.update_leader);
    EXPECT_FALSE(plan.status.ok());
    EXPECT_TRUE(plan.status.retryable());
  }
}

TEST(RegionErrorPlanTest, StoreNotMatchAlsoDropsTheStoreAddress) {
  errorpb::Error error;
  error.mutable_store_not_match()->set_request_store_id(2);
  error.mutable_store_not_match()->set_actual_store_id(3);
  RegionErrorPlan plan = PlanForRegionError(error, kRegion);
  EXPECT_TRUE(plan.invalidate_region);
  EXPECT_TRUE(plan.invalidate_store);
}

TEST(RegionErrorPlanTest, ServerIsBusyWaitsAtLeastWhatItAsks) {
  errorpb::Error error;
  error.mutable_server_is_busy()->set_reason("\xff busy");  // Not UTF-8: still fine.
  error.mutable_server_is_busy()->set_backoff_ms(250);
  RegionErrorPlan plan = PlanForRegionError(error, kRegion);
  EXPECT_EQ(plan.status.code(), Code::kBusy);
  EXPECT_EQ(plan.min_backoff, std::chrono::milliseconds(250));
  EXPECT_FALSE(plan.invalidate_region);
  error.mutable_server_is_busy()->set_backoff_ms(UINT64_MAX);
  EXPECT_EQ(PlanForRegionError(error, kRegion).min_backoff, std::chrono::milliseconds(60000));
}

TEST(KeyErrorStatusTest, EachKind) {
  kvrpcpb::KeyError locked;
  locked.mutable_locked()->set_key("k");
  locked.mutable_locked()->set_lock_version(42);
  EXPECT_TRUE(IsLocked(locked));
  EXPECT_EQ(KeyErrorStatus(locked).code(), Code::kTimeout);
  EXPECT_NE(KeyErrorStatus(locked).message().find("42"), std::string_view::npos);

  kvrpcpb::KeyError abort;
  abort.set_abort("gone");
  EXPECT_FALSE(IsLocked(abort));
  EXPECT_EQ(KeyErrorStatus(abort).code(), Code::kAborted);

  kvrpcpb::KeyError retryable;
  retryable.set_retryable("try again");
  EXPECT_EQ(KeyErrorStatus(retryable).code(), Code::kUnavailable);

  kvrpcpb::KeyError conflict;
  conflict.mutable_conflict()->set_start_ts(1);
  EXPECT_EQ(KeyErrorStatus(conflict).code(), Code::kProtocolViolation);
  EXPECT_EQ(KeyErrorStatus(kvrpcpb::KeyError()).code(), Code::kProtocolViolation);
}

kvrpcpb::ScanResponse WithKeys(std::initializer_list<const char*> keys) {
  kvrpcpb::ScanResponse response;
  for (const char* key : keys) response.add_pairs()->set_key(key);
  return response;
}

TEST(CheckScanPairsTest, KeysMustBeIncreasingInsideTheRangeAndWithinTheLimit) {
  EXPECT_TRUE(CheckScanPairs(WithKeys({"b", "c", "d"}), "b", "e", 3).ok());
  EXPECT_TRUE(CheckScanPairs(WithKeys({"b", "zzz"}), "b", "", 3).ok());
  EXPECT_TRUE(CheckScanPairs(WithKeys({}), "b", "e", 3).ok());
  EXPECT_EQ(CheckScanPairs(WithKeys({"b", "c", "d"}), "b", "e", 2).code(),
            Code::kProtocolViolation);
  EXPECT_EQ(CheckScanPairs(WithKeys({"c", "b"}), "a", "e", 3).code(), Code::kProtocolViolation);
  EXPECT_EQ(CheckScanPairs(WithKeys({"c", "c"}), "a", "e", 3).code(), Code::kProtocolViolation);
  EXPECT_EQ(CheckScanPairs(WithKeys({"a"}), "b", "e", 3).code(), Code::kProtocolViolation);
  EXPECT_EQ(CheckScanPairs(WithKeys({"e"}), "b", "e", 3).code(), Code::kProtocolViolation);
}

}  // namespace
}  // namespace sluice::kvclient
