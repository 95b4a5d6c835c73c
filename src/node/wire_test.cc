// The wire adapters: every message survives struct -> proto -> bytes ->
// proto -> struct unchanged (bad input: wire_bad_input_test.cc).
#include "node/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/wire_test_util.h"

namespace sluice::node {
namespace {

using namespace wire_testing;  // NOLINT: the test vocabulary.

// --- Round trips ------------------------------------------------------------------

TEST(WireRoundTripTest, Status) {
  for (int c = 1; c < kNumCodes; ++c) {
    Status original(static_cast<Code>(c), "message \xff" + std::to_string(c));
    pb::RunningError p;
    ToProto(original, &p);
    EXPECT_EQ(p.code(), CodeName(original.code()));
    Status decoded;
    ASSERT_TRUE(FromProto(ThroughBytes(p), &decoded).ok());
    EXPECT_EQ(decoded, original);
  }
}

TEST(WireRoundTripTest, SharedShapes) {
  auto config = RoundTrip<pb::DispatcherConfig>(SampleConfig(1));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(Same(*config, SampleConfig(1)));

  dm::DispatcherStatus status{SampleConfig(2), dm::ComponentState::kStopping, Ts(5)};
  auto span = RoundTrip<pb::BootstrapTableSpan>(status);
  ASSERT_TRUE(span.ok()) << span.status().ToString();
  EXPECT_TRUE(Same(*span, status));

  auto schema = RoundTrip<pb::SchemaInfo>(SampleSchema(4));
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_TRUE(Same(*schema, SampleSchema(4)));
}

TEST(WireRoundTripTest, TableTriggerConfigKeepsTheWholeKeySpace) {
  dm::DispatcherConfig trigger =
      dm::TableTriggerConfig(DispatcherId{1, 9}, dm::DispatcherMode::kDefault, Ts(3));
  auto decoded = RoundTrip<pb::DispatcherConfig>(trigger);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, trigger));
}

TEST(WireRoundTripTest, BootstrapRequest) {
  auto decoded = RoundTrip<pb::MaintainerBootstrapRequest>(SampleBootstrap());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, SampleBootstrap()));

  dm::BootstrapRequest no_triggers = SampleBootstrap();
  no_triggers.table_trigger_id.reset();
  no_triggers.redo_trigger_id.reset();
  no_triggers.replace_trigger_id.reset();
  no_triggers.replace_redo_trigger_id.reset();
  no_triggers.epoch = MaintainerEpoch(0);  // Pre-epoch peers are allowed here.
  decoded = RoundTrip<pb::MaintainerBootstrapRequest>(no_triggers);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, no_triggers));
}

TEST(WireRoundTripTest, BootstrapResponse) {
  auto decoded = RoundTrip<pb::MaintainerBootstrapResponse>(SampleBootstrapResponse());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, SampleBootstrapResponse()));

  dm::BootstrapResponse ok = SampleBootstrapResponse();
  ok.status = Status::Ok();
  decoded = RoundTrip<pb::MaintainerBootstrapResponse>(ok);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(decoded->status.ok());
  EXPECT_TRUE(Same(*decoded, ok));
}

TEST(WireRoundTripTest, PostBootstrap) {
  auto request = RoundTrip<pb::MaintainerPostBootstrapRequest>(SamplePostBootstrap());
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_TRUE(Same(*request, SamplePostBootstrap()));

  dm::PostBootstrapResponse response{kFeed, kEpoch, DispatcherId{5, 6},
                                     Status(Code::kAborted, "trigger of another owner")};
  auto decoded = RoundTrip<pb::MaintainerPostBootstrapResponse>(response);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, response));
}

TEST(WireRoundTripTest, Schedule) {
  for (dm::ScheduleAction action : {dm::ScheduleAction::kCreate, dm::ScheduleAction::kRemove}) {
    dm::ScheduleRequest request = SampleSchedule(7);
    request.action = action;
    auto decoded = RoundTrip<pb::ScheduleDispatcherRequest>(request);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(Same(*decoded, request));
  }
  dm::ScheduleResponse response{kFeed, kEpoch, DispatcherId{7, 8}, dm::ComponentState::kStopped,
                                Status(Code::kInvalidArgument, "bad span")};
  auto decoded = RoundTrip<pb::ScheduleDispatcherResponse>(response);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, response));
}

TEST(WireRoundTripTest, Close) {
  dm::CloseRequest request{kFeed, kNode, kEpoch, /*removed=*/true};
  auto decoded_request = RoundTrip<pb::MaintainerCloseRequest>(request);
  ASSERT_TRUE(decoded_request.ok()) << decoded_request.status().ToString();
  EXPECT_TRUE(Same(*decoded_request, request));

  dm::CloseResponse response{kFeed, kEpoch, /*success=*/true, /*superseded=*/true,
                             Status(Code::kStaleOwner, "newer owner")};
  auto decoded = RoundTrip<pb::MaintainerCloseResponse>(response);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, response));
}

TEST(WireRoundTripTest, ChangefeedIdStrings) {
  for (const std::string id : {"feed", "ns/feed", "a/b/c", "/x", "x/", "ns\xff/f\x00"}) {
    dm::CloseRequest request{id, kNode, kEpoch, false};
    auto decoded = RoundTrip<pb::MaintainerCloseRequest>(request);
    ASSERT_TRUE(decoded.ok()) << id << ": " << decoded.status().ToString();
    EXPECT_EQ(decoded->changefeed_id, id);
  }
}

TEST(WireRoundTripTest, Heartbeat) {
  mt::Watermark watermark{Ts(10), Ts(20), 30};
  auto decoded_watermark = RoundTrip<pb::Watermark>(watermark);
  ASSERT_TRUE(decoded_watermark.ok());
  EXPECT_TRUE(Same(*decoded_watermark, watermark));

  mt::SpanStatus status{DispatcherId{3, 3}, dm::ComponentState::kStopping, Ts(40)};
  auto decoded_status = RoundTrip<pb::TableSpanStatus>(status);
  ASSERT_TRUE(decoded_status.ok()) << decoded_status.status().ToString();
  EXPECT_TRUE(Same(*decoded_status, status));

  mt::HeartbeatRequest request{kFeed,
                               {status, {DispatcherId{4, 4}, dm::ComponentState::kStopped, Ts(41)}},
                               watermark,
                               Status::Ok()};
  auto decoded = RoundTrip<pb::HeartBeatRequest>(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, request));

  request.watermark.reset();
  decoded = RoundTrip<pb::HeartBeatRequest>(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_FALSE(decoded->watermark.has_value());
  EXPECT_TRUE(Same(*decoded, request));

  // A node's data path error travels with its heartbeat, code intact.
  request.error = StaleOwner("the changefeed is written by another generation");
  decoded = RoundTrip<pb::HeartBeatRequest>(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->error.code(), Code::kStaleOwner);
  EXPECT_TRUE(Same(*decoded, request));
}

TEST(WireRoundTripTest, BlockStatusBatch) {
  BlockStatusBatch batch{"ns/cf", {SampleBlockReport(), SampleBlockReport()}};
  batch.reports[1].stage = dispatcher::BlockStage::kDone;
  auto decoded = RoundTrip<pb::BlockStatusRequest>(batch);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->changefeed_id, "ns/cf");
  ASSERT_EQ(decoded->reports.size(), 2u);
  EXPECT_TRUE(Same(decoded->reports[0], batch.reports[0]));
  EXPECT_TRUE(Same(decoded->reports[1], batch.reports[1]));
  pb::BlockStatusRequest no_id;
  EXPECT_EQ(FromProto(no_id).status().code(), Code::kInvalidArgument);
}

TEST(WireRoundTripTest, BlockReport) {
  auto decoded = RoundTrip<pb::TableSpanBlockStatus>(SampleBlockReport());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, SampleBlockReport()));

  for (auto stage : {dispatcher::BlockStage::kNone, dispatcher::BlockStage::kDone}) {
    mt::BlockReport report = SampleBlockReport();
    report.stage = stage;
    report.tables_to_drop.clear();
    report.blocked_tables = event::BlockedTables{event::InfluenceType::kAll, {}, 0};
    decoded = RoundTrip<pb::TableSpanBlockStatus>(report);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(Same(*decoded, report));
  }
}

TEST(WireRoundTripTest, BarrierAction) {
  auto decoded = RoundTrip<pb::HeartBeatResponse>(SampleBarrier());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, SampleBarrier()));

  mt::BarrierActionRequest pass = SampleBarrier();
  pass.action = dispatcher::BarrierAction::kPass;
  pass.is_syncpoint = false;
  decoded = RoundTrip<pb::HeartBeatResponse>(pass);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, pass));
}

TEST(WireRoundTripTest, AddAndRemoveMaintainer) {
  pb::AddMaintainerRequest add;
  ToProto(kNode, SampleAdd(), &add);
  EXPECT_EQ(add.config(), SampleInfo().config_json);
  auto decoded = FromProto(ThroughBytes(add));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->from, kNode);
  EXPECT_TRUE(Same(decoded->message, SampleAdd()));

  co::RemoveMaintainerRequest remove{meta::ChangefeedId{"ks1", "feed-a"}, kEpoch, true, true};
  pb::RemoveMaintainerRequest p;
  ToProto(kNode, remove, &p);
  auto decoded_remove = FromProto(ThroughBytes(p));
  ASSERT_TRUE(decoded_remove.ok()) << decoded_remove.status().ToString();
  EXPECT_EQ(decoded_remove->from, kNode);
  EXPECT_TRUE(Same(decoded_remove->message, remove));
}

TEST(WireRoundTripTest, MaintainerStatusAndHeartbeat) {
  auto decoded = RoundTrip<pb::MaintainerStatus>(SampleMaintainerStatus(1));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, SampleMaintainerStatus(1)));

  co::MaintainerStatus working = SampleMaintainerStatus(2);
  working.state = co::MaintainerState::kWorking;
  working.error = Status::Ok();
  std::vector<co::MaintainerStatus> statuses = {SampleMaintainerStatus(1), working};
  pb::MaintainerHeartbeat heartbeat;
  ToProto(kNode, statuses, &heartbeat);
  auto decoded_heartbeat = FromProto(ThroughBytes(heartbeat));
  ASSERT_TRUE(decoded_heartbeat.ok()) << decoded_heartbeat.status().ToString();
  EXPECT_EQ(decoded_heartbeat->from, kNode);
  EXPECT_TRUE(SameAll(decoded_heartbeat->message, statuses));
}

}  // namespace
}  // namespace sluice::node
