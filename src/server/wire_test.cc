// The wire adapters: every message survives struct -> proto -> bytes ->
// proto -> struct unchanged, bad input is a typed error naming the field,
// and random bytes never crash a decoder.
#include "server/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meta/model.h"

namespace sluice::server {
namespace {

namespace dm = ::sluice::dispatchermanager;
namespace mt = ::sluice::maintainer;
namespace co = ::sluice::coordinator;

using ::testing::HasSubstr;

// --- Equality ----------------------------------------------------------------

// Declared up front so SameAll() finds every overload.
bool Same(const dm::DispatcherConfig& a, const dm::DispatcherConfig& b);
bool Same(const dm::DispatcherStatus& a, const dm::DispatcherStatus& b);
bool Same(const dm::TableInfo& a, const dm::TableInfo& b);
bool Same(const dm::SchemaInfo& a, const dm::SchemaInfo& b);
bool Same(const dm::ScheduleRequest& a, const dm::ScheduleRequest& b);
bool Same(const mt::SpanStatus& a, const mt::SpanStatus& b);
bool Same(const co::MaintainerStatus& a, const co::MaintainerStatus& b);

template <typename T>
bool SameAll(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Same(a[i], b[i])) return false;
  }
  return true;
}

bool Same(const dm::DispatcherConfig& a, const dm::DispatcherConfig& b) {
  return a.id == b.id && a.table_id == b.table_id && a.schema_id == b.schema_id &&
         a.span == b.span && a.start_ts == b.start_ts && a.mode == b.mode;
}

bool Same(const dm::DispatcherStatus& a, const dm::DispatcherStatus& b) {
  return Same(a.config, b.config) && a.state == b.state && a.checkpoint_ts == b.checkpoint_ts;
}

bool Same(const dm::TableInfo& a, const dm::TableInfo& b) {
  return a.id == b.id && a.name == b.name;
}

bool Same(const dm::SchemaInfo& a, const dm::SchemaInfo& b) {
  return a.id == b.id && a.name == b.name && SameAll(a.tables, b.tables);
}

bool Same(const dm::ScheduleRequest& a, const dm::ScheduleRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.action == b.action && Same(a.config, b.config);
}

bool Same(const dm::BootstrapRequest& a, const dm::BootstrapRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.start_ts == b.start_ts && a.is_new_changefeed == b.is_new_changefeed &&
         a.redo_enabled == b.redo_enabled && a.table_trigger_id == b.table_trigger_id &&
         a.redo_trigger_id == b.redo_trigger_id;
}

bool Same(const dm::BootstrapResponse& a, const dm::BootstrapResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch && a.status == b.status &&
         SameAll(a.spans, b.spans) && a.checkpoint_ts == b.checkpoint_ts &&
         a.redo_checkpoint_ts == b.redo_checkpoint_ts && SameAll(a.operators, b.operators);
}

bool Same(const dm::PostBootstrapRequest& a, const dm::PostBootstrapRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.table_trigger_id == b.table_trigger_id && SameAll(a.schemas, b.schemas) &&
         SameAll(a.redo_schemas, b.redo_schemas);
}

bool Same(const dm::PostBootstrapResponse& a, const dm::PostBootstrapResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch &&
         a.table_trigger_id == b.table_trigger_id && a.status == b.status;
}

bool Same(const dm::ScheduleResponse& a, const dm::ScheduleResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch &&
         a.dispatcher_id == b.dispatcher_id && a.state == b.state && a.status == b.status;
}

bool Same(const dm::CloseRequest& a, const dm::CloseRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.removed == b.removed;
}

bool Same(const dm::CloseResponse& a, const dm::CloseResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch && a.success == b.success &&
         a.superseded == b.superseded && a.status == b.status;
}

bool Same(const mt::Watermark& a, const mt::Watermark& b) {
  return a.checkpoint_ts == b.checkpoint_ts && a.resolved_ts == b.resolved_ts && a.seq == b.seq;
}

bool Same(const mt::SpanStatus& a, const mt::SpanStatus& b) {
  return a.id == b.id && a.state == b.state && a.checkpoint_ts == b.checkpoint_ts;
}

bool Same(const mt::HeartbeatRequest& a, const mt::HeartbeatRequest& b) {
  if (a.watermark.has_value() != b.watermark.has_value()) return false;
  if (a.watermark && !Same(*a.watermark, *b.watermark)) return false;
  return a.changefeed_id == b.changefeed_id && SameAll(a.statuses, b.statuses);
}

bool Same(const event::BlockedTables& a, const event::BlockedTables& b) {
  return a.influence == b.influence && a.table_ids == b.table_ids && a.schema_id == b.schema_id;
}

bool Same(const mt::BlockReport& a, const mt::BlockReport& b) {
  return a.dispatcher_id == b.dispatcher_id && a.block_ts == b.block_ts &&
         a.is_syncpoint == b.is_syncpoint && a.stage == b.stage &&
         Same(a.blocked_tables, b.blocked_tables) && a.tables_to_add == b.tables_to_add &&
         a.tables_to_drop == b.tables_to_drop;
}

bool Same(const mt::BarrierActionRequest& a, const mt::BarrierActionRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.block_ts == b.block_ts && a.is_syncpoint == b.is_syncpoint && a.action == b.action &&
         a.dispatchers == b.dispatchers;
}

bool Same(const co::AddMaintainerRequest& a, const co::AddMaintainerRequest& b) {
  return a.id == b.id && a.info == b.info && a.checkpoint_ts == b.checkpoint_ts &&
         a.epoch == b.epoch && a.is_new_changefeed == b.is_new_changefeed;
}

bool Same(const co::RemoveMaintainerRequest& a, const co::RemoveMaintainerRequest& b) {
  return a.id == b.id && a.epoch == b.epoch && a.cascade == b.cascade && a.removed == b.removed;
}

bool Same(const co::MaintainerStatus& a, const co::MaintainerStatus& b) {
  return a.id == b.id && a.epoch == b.epoch && a.state == b.state &&
         a.checkpoint_ts == b.checkpoint_ts && a.error == b.error &&
         a.bootstrap_done == b.bootstrap_done;
}

// --- Samples (every field differs from its default) ---------------------------

const NodeId kNode("node-7f3a");
const MaintainerEpoch kEpoch(449000000000000123ULL);
const std::string kFeed = "ks1/feed-a";

dm::DispatcherConfig SampleConfig(uint64_t n) {
  dm::DispatcherConfig c;
  c.id = DispatcherId{0xA000 + n, 0xB000 + n};
  c.table_id = TableId(static_cast<int64_t>(100 + n));
  c.schema_id = 7;
  c.span = Span{"t\x80\x01_r\xff", std::string("t\x80\x01_s\0", 6)};
  c.start_ts = Ts(450000000000000000ULL + n);
  c.mode = dm::DispatcherMode::kRedo;
  return c;
}

dm::ScheduleRequest SampleSchedule(uint64_t n) {
  return dm::ScheduleRequest{kFeed, kNode, kEpoch, dm::ScheduleAction::kRemove, SampleConfig(n)};
}

dm::SchemaInfo SampleSchema(int64_t n) {
  return dm::SchemaInfo{
      n, "db\xff" + std::to_string(n), {{TableId(n * 10), "t1"}, {TableId(n * 10 + 1), "t\x01 2"}}};
}

dm::BootstrapRequest SampleBootstrap() {
  return dm::BootstrapRequest{kFeed,
                              kNode,
                              kEpoch,
                              Ts(451),
                              /*is_new_changefeed=*/true,
                              /*redo_enabled=*/true,
                              DispatcherId{1, 2},
                              DispatcherId{3, 4}};
}

dm::BootstrapResponse SampleBootstrapResponse() {
  dm::BootstrapResponse r;
  r.changefeed_id = kFeed;
  r.epoch = kEpoch;
  r.status = Status(Code::kStaleOwner, "fenced by epoch 9");
  r.spans = {dm::DispatcherStatus{SampleConfig(1), dm::ComponentState::kStopping, Ts(600)},
             dm::DispatcherStatus{SampleConfig(2), dm::ComponentState::kStopped, Ts(601)}};
  r.checkpoint_ts = Ts(700);
  r.redo_checkpoint_ts = Ts(701);
  r.operators = {SampleSchedule(3), SampleSchedule(4)};
  return r;
}

dm::PostBootstrapRequest SamplePostBootstrap() {
  return dm::PostBootstrapRequest{kFeed,
                                  kNode,
                                  kEpoch,
                                  DispatcherId{5, 6},
                                  {SampleSchema(1), SampleSchema(2)},
                                  {SampleSchema(3)}};
}

mt::BlockReport SampleBlockReport() {
  mt::BlockReport r;
  r.dispatcher_id = DispatcherId{9, 10};
  r.block_ts = Ts(800);
  r.is_syncpoint = true;
  r.stage = dispatcher::BlockStage::kWaiting;
  r.blocked_tables = event::BlockedTables{event::InfluenceType::kDb, {11, 12}, 13};
  r.tables_to_add = {event::TableRef{13, 14, "db", "t14"}, event::TableRef{13, 15, "db", "t\xff"}};
  r.tables_to_drop = {16, 17};
  return r;
}

mt::BarrierActionRequest SampleBarrier() {
  return mt::BarrierActionRequest{kFeed,
                                  kNode,
                                  kEpoch,
                                  Ts(900),
                                  /*is_syncpoint=*/true,
                                  dispatcher::BarrierAction::kWrite,
                                  {DispatcherId{1, 1}, DispatcherId{2, 2}}};
}

meta::ChangefeedInfo SampleInfo() {
  meta::ChangefeedInfo info;
  info.id = meta::ChangefeedId{"ks1", "feed-a"};
  info.upstream_id = 77;
  info.sink_uri = "mysql://root@127.0.0.1:3306/";
  info.create_time_ms = 1714564800123;
  info.start_ts = Ts(449000000000000001ULL);
  info.target_ts = Ts(459000000000000001ULL);
  info.admin_job_type = meta::AdminJobType::kResume;
  info.config_json = R"({"case-sensitive":true})";
  info.state = meta::FeedState::kWarning;
  info.error = meta::RunningError{1714564800000, "node-1", "CDC:ErrX", "boom"};
  info.warning = meta::RunningError{1714564800001, "node-2", "timeout", "slow"};
  info.creator_version = "v8.1.0";
  info.epoch = kEpoch;
  return info;
}

co::AddMaintainerRequest SampleAdd() {
  return co::AddMaintainerRequest{meta::ChangefeedId{"ks1", "feed-a"}, SampleInfo(), Ts(449001),
                                  kEpoch, /*is_new_changefeed=*/true};
}

co::MaintainerStatus SampleMaintainerStatus(uint64_t n) {
  return co::MaintainerStatus{meta::ChangefeedId{"ks1", "feed-" + std::to_string(n)},
                              MaintainerEpoch(kEpoch.value() + n),
                              co::MaintainerState::kStopped,
                              Ts(1000 + n),
                              Status(Code::kGcSafepointExceeded, "start ts below gc"),
                              /*bootstrap_done=*/true};
}

// --- Helpers -------------------------------------------------------------------

// Serializes and parses `p`, as the transport does.
template <typename P>
P ThroughBytes(const P& p) {
  std::string bytes;
  EXPECT_TRUE(p.SerializeToString(&bytes));
  P parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  return parsed;
}

// struct -> proto -> bytes -> proto -> struct.
template <typename P, typename X>
auto RoundTrip(const X& x) {
  P p;
  ToProto(x, &p);
  return FromProto(ThroughBytes(p));
}

template <typename P>
P Encode(const auto& x) {
  P p;
  ToProto(x, &p);
  return p;
}

template <typename P>
void ExpectBad(const P& p, Code code, std::string_view field) {
  auto result = FromProto(ThroughBytes(p));
  ASSERT_FALSE(result.ok()) << field;
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(field)));
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr(std::string(P::descriptor()->name())));
}

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

  mt::HeartbeatRequest request{
      kFeed, {status, {DispatcherId{4, 4}, dm::ComponentState::kStopped, Ts(41)}}, watermark};
  auto decoded = RoundTrip<pb::HeartBeatRequest>(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(Same(*decoded, request));

  request.watermark.reset();
  decoded = RoundTrip<pb::HeartBeatRequest>(request);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_FALSE(decoded->watermark.has_value());
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

// --- Bad input ---------------------------------------------------------------------

constexpr Code kInvalid = Code::kInvalidArgument;
constexpr Code kCorrupt = Code::kCorruption;

TEST(WireBadInputTest, StatusCode) {
  pb::RunningError p;
  for (int32_t code : {0, -1, kNumCodes, 1 << 30}) {
    p.set_status_code(code);
    Status out;
    Status s = FromProto(p, &out);
    EXPECT_EQ(s.code(), kCorrupt) << code;
    EXPECT_THAT(std::string(s.message()), HasSubstr("status_code"));
  }
  auto response = Encode<pb::MaintainerCloseResponse>(
      dm::CloseResponse{kFeed, kEpoch, false, false, Status(Code::kBusy, "x")});
  response.mutable_err()->set_status_code(kNumCodes);
  ExpectBad(response, kCorrupt, "err.status_code");
}

TEST(WireBadInputTest, DispatcherConfig) {
  auto base = Encode<pb::DispatcherConfig>(SampleConfig(1));
  auto p = base;
  p.clear_span();
  ExpectBad(p, kInvalid, "span");
  p = base;
  p.mutable_span()->set_end_key(p.span().start_key());
  ExpectBad(p, kInvalid, "span");
  p = base;
  p.mutable_span()->set_end_key("a");
  p.mutable_span()->set_start_key("b");
  ExpectBad(p, kInvalid, "span");
  p = base;
  p.clear_dispatcher_id();
  ExpectBad(p, kInvalid, "dispatcher_id");
  p = base;
  p.mutable_dispatcher_id()->Clear();
  ExpectBad(p, kInvalid, "dispatcher_id");
  p = base;
  p.set_mode(2);
  ExpectBad(p, kCorrupt, "mode");
}

TEST(WireBadInputTest, BootstrapTableSpanAndSchema) {
  auto base = Encode<pb::BootstrapTableSpan>(
      dm::DispatcherStatus{SampleConfig(1), dm::ComponentState::kWorking, Ts(1)});
  auto p = base;
  p.clear_id();
  ExpectBad(p, kInvalid, "id");
  p = base;
  p.clear_span();
  ExpectBad(p, kInvalid, "span");
  p = base;
  p.set_component_status(static_cast<pb::ComponentState>(99));
  ExpectBad(p, kCorrupt, "component_status");
  p = base;
  p.set_component_status(pb::MERGE_READY);
  ExpectBad(p, kInvalid, "component_status");
  p = base;
  p.set_mode(-1);
  ExpectBad(p, kCorrupt, "mode");
  // Every SchemaInfo is valid; it has no required field.
  EXPECT_TRUE(FromProto(pb::SchemaInfo()).ok());
}

TEST(WireBadInputTest, BootstrapRequest) {
  auto base = Encode<pb::MaintainerBootstrapRequest>(SampleBootstrap());
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.mutable_changefeed_id()->clear_name();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.mutable_table_trigger_event_dispatcher_id()->Clear();
  ExpectBad(p, kInvalid, "table_trigger_event_dispatcher_id");
  p = base;
  p.mutable_table_trigger_redo_dispatcher_id()->Clear();
  ExpectBad(p, kInvalid, "table_trigger_redo_dispatcher_id");
}

TEST(WireBadInputTest, BootstrapResponse) {
  auto base = Encode<pb::MaintainerBootstrapResponse>(SampleBootstrapResponse());
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.mutable_err()->set_status_code(-3);
  ExpectBad(p, kCorrupt, "err.status_code");
  p = base;
  p.mutable_spans(1)->mutable_span()->set_end_key("\x01");
  ExpectBad(p, kInvalid, "spans[1].span");
  p = base;
  p.mutable_spans(0)->set_component_status(static_cast<pb::ComponentState>(50));
  ExpectBad(p, kCorrupt, "spans[0].component_status");
  p = base;
  p.mutable_operators(1)->set_schedule_action(static_cast<pb::ScheduleAction>(7));
  ExpectBad(p, kCorrupt, "operators[1].schedule_action");
  p = base;
  p.mutable_operators(0)->clear_sender_node_id();
  ExpectBad(p, kInvalid, "operators[0].sender_node_id");
}

TEST(WireBadInputTest, PostBootstrap) {
  auto base = Encode<pb::MaintainerPostBootstrapRequest>(SamplePostBootstrap());
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.clear_table_trigger_event_dispatcher_id();
  ExpectBad(p, kInvalid, "table_trigger_event_dispatcher_id");

  auto response = Encode<pb::MaintainerPostBootstrapResponse>(
      dm::PostBootstrapResponse{kFeed, kEpoch, DispatcherId{1, 1}, Status(Code::kBusy, "x")});
  auto r = response;
  r.clear_changefeed_id();
  ExpectBad(r, kInvalid, "changefeed_id");
  r = response;
  r.mutable_err()->set_status_code(0);
  ExpectBad(r, kCorrupt, "err.status_code");
}

TEST(WireBadInputTest, Schedule) {
  auto base = Encode<pb::ScheduleDispatcherRequest>(SampleSchedule(1));
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.clear_config();
  ExpectBad(p, kInvalid, "config");
  p = base;
  p.mutable_config()->mutable_span()->set_end_key("\x01");
  ExpectBad(p, kInvalid, "config.span");
  p = base;
  p.mutable_config()->clear_dispatcher_id();
  ExpectBad(p, kInvalid, "config.dispatcher_id");
  p = base;
  p.set_schedule_action(static_cast<pb::ScheduleAction>(2));
  ExpectBad(p, kCorrupt, "schedule_action");
  p = base;
  p.set_operator_type(static_cast<pb::OperatorType>(77));
  ExpectBad(p, kCorrupt, "operator_type");

  auto response = Encode<pb::ScheduleDispatcherResponse>(dm::ScheduleResponse{
      kFeed, kEpoch, DispatcherId{1, 1}, dm::ComponentState::kWorking, Status(Code::kBusy, "x")});
  auto r = response;
  r.clear_changefeed_id();
  ExpectBad(r, kInvalid, "changefeed_id");
  r = response;
  r.set_component_status(static_cast<pb::ComponentState>(-5));
  ExpectBad(r, kCorrupt, "component_status");
  r = response;
  r.mutable_err()->set_status_code(kNumCodes + 1);
  ExpectBad(r, kCorrupt, "err.status_code");
}

TEST(WireBadInputTest, Close) {
  auto base = Encode<pb::MaintainerCloseRequest>(dm::CloseRequest{kFeed, kNode, kEpoch, true});
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");

  auto response = Encode<pb::MaintainerCloseResponse>(
      dm::CloseResponse{kFeed, kEpoch, true, false, Status::Ok()});
  response.clear_changefeed_id();
  ExpectBad(response, kInvalid, "changefeed_id");
}

TEST(WireBadInputTest, Heartbeat) {
  mt::HeartbeatRequest request{
      kFeed, {{DispatcherId{1, 1}, dm::ComponentState::kWorking, Ts(1)}}, mt::Watermark{}};
  auto base = Encode<pb::HeartBeatRequest>(request);
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.mutable_statuses(0)->clear_id();
  ExpectBad(p, kInvalid, "statuses[0].id");
  p = base;
  p.mutable_statuses(0)->set_component_status(static_cast<pb::ComponentState>(8));
  ExpectBad(p, kCorrupt, "statuses[0].component_status");

  pb::TableSpanStatus status;
  ExpectBad(status, kInvalid, "id");
}

TEST(WireBadInputTest, BlockReport) {
  auto base = Encode<pb::TableSpanBlockStatus>(SampleBlockReport());
  auto p = base;
  p.clear_id();
  ExpectBad(p, kInvalid, "id");
  p = base;
  p.clear_state();
  ExpectBad(p, kInvalid, "state");
  p = base;
  p.mutable_state()->set_stage(static_cast<pb::BlockStage>(9));
  ExpectBad(p, kCorrupt, "state.stage");
  p = base;
  p.mutable_state()->set_stage(pb::WRITING);
  ExpectBad(p, kInvalid, "state.stage");
  p = base;
  p.mutable_state()->mutable_block_tables()->set_influence_type(static_cast<pb::InfluenceType>(3));
  ExpectBad(p, kCorrupt, "state.block_tables.influence_type");
  p = base;
  p.mutable_state()->mutable_need_dropped_tables()->set_influence_type(pb::DB);
  ExpectBad(p, kInvalid, "need_dropped_tables.influence_type");
}

TEST(WireBadInputTest, BarrierAction) {
  auto base = Encode<pb::HeartBeatResponse>(SampleBarrier());
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.clear_dispatcher_statuses();
  ExpectBad(p, kInvalid, "dispatcher_statuses");
  p = base;
  p.add_dispatcher_statuses();
  ExpectBad(p, kInvalid, "dispatcher_statuses");
  p = base;
  p.mutable_dispatcher_statuses(0)->clear_action();
  ExpectBad(p, kInvalid, "dispatcher_statuses[0].action");
  p = base;
  p.mutable_dispatcher_statuses(0)->mutable_action()->set_action(static_cast<pb::Action>(4));
  ExpectBad(p, kCorrupt, "dispatcher_statuses[0].action");
  p = base;
  p.mutable_dispatcher_statuses(0)->clear_influenced_dispatchers();
  ExpectBad(p, kInvalid, "influenced_dispatchers");
  p = base;
  p.mutable_dispatcher_statuses(0)->mutable_influenced_dispatchers()->set_influence_type(pb::ALL);
  ExpectBad(p, kInvalid, "influenced_dispatchers.influence_type");
  p = base;
  p.mutable_dispatcher_statuses(0)->mutable_influenced_dispatchers()->clear_dispatcher_ids();
  ExpectBad(p, kInvalid, "influenced_dispatchers.dispatcher_ids");
  p = base;
  p.mutable_dispatcher_statuses(0)
      ->mutable_influenced_dispatchers()
      ->mutable_dispatcher_ids(1)
      ->Clear();
  ExpectBad(p, kInvalid, "dispatcher_ids[1]");
}

TEST(WireBadInputTest, AddMaintainer) {
  pb::AddMaintainerRequest base;
  ToProto(kNode, SampleAdd(), &base);
  auto p = base;
  p.clear_id();
  ExpectBad(p, kInvalid, "id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.set_maintainer_epoch(0);
  ExpectBad(p, kInvalid, "maintainer_epoch");
  p = base;
  p.clear_changefeed_info();
  ExpectBad(p, kInvalid, "changefeed_info");
  p = base;
  p.set_changefeed_info("{not json");
  ExpectBad(p, kCorrupt, "changefeed_info");
  p = base;
  p.mutable_id()->set_name("other-feed");
  ExpectBad(p, kInvalid, "changefeed_info");
}

TEST(WireBadInputTest, RemoveMaintainer) {
  pb::RemoveMaintainerRequest base;
  ToProto(kNode, co::RemoveMaintainerRequest{meta::ChangefeedId{"ks", "f"}, kEpoch, true, false},
          &base);
  auto p = base;
  p.clear_id();
  ExpectBad(p, kInvalid, "id");
  p = base;
  p.clear_sender_node_id();
  ExpectBad(p, kInvalid, "sender_node_id");
  p = base;
  p.set_maintainer_epoch(0);
  ExpectBad(p, kInvalid, "maintainer_epoch");
}

TEST(WireBadInputTest, MaintainerStatusAndHeartbeat) {
  auto base = Encode<pb::MaintainerStatus>(SampleMaintainerStatus(1));
  auto p = base;
  p.clear_changefeed_id();
  ExpectBad(p, kInvalid, "changefeed_id");
  p = base;
  p.set_maintainer_epoch(0);
  ExpectBad(p, kInvalid, "maintainer_epoch");
  p = base;
  p.set_state(static_cast<pb::ComponentState>(100));
  ExpectBad(p, kCorrupt, "state");
  p = base;
  p.set_state(pb::STOPPING);
  ExpectBad(p, kInvalid, "state");
  p = base;
  p.mutable_err(0)->set_status_code(kNumCodes);
  ExpectBad(p, kCorrupt, "err[0].status_code");

  pb::MaintainerHeartbeat heartbeat;
  std::vector<co::MaintainerStatus> statuses = {SampleMaintainerStatus(1)};
  ToProto(kNode, statuses, &heartbeat);
  auto h = heartbeat;
  h.clear_sender_node_id();
  ExpectBad(h, kInvalid, "sender_node_id");
  h = heartbeat;
  h.mutable_statuses(0)->set_maintainer_epoch(0);
  ExpectBad(h, kInvalid, "statuses[0].maintainer_epoch");
}

// --- Fuzz --------------------------------------------------------------------------

// Parses `bytes` as P and decodes it; must return (ok or not), never crash.
template <typename P>
void DecodeBytes(const std::string& bytes) {
  P p;
  if (!p.ParseFromString(bytes)) return;
  auto result = FromProto(p);
  if (!result.ok()) {
    EXPECT_FALSE(result.status().message().empty());
  }
}

void DecodeRunningError(const std::string& bytes) {
  pb::RunningError p;
  if (!p.ParseFromString(bytes)) return;
  Status out;
  FromProto(p, &out).IgnoreError();
}

using Decoder = void (*)(const std::string&);

const Decoder kDecoders[] = {
    DecodeRunningError,
    DecodeBytes<pb::DispatcherConfig>,
    DecodeBytes<pb::BootstrapTableSpan>,
    DecodeBytes<pb::SchemaInfo>,
    DecodeBytes<pb::MaintainerBootstrapRequest>,
    DecodeBytes<pb::MaintainerBootstrapResponse>,
    DecodeBytes<pb::MaintainerPostBootstrapRequest>,
    DecodeBytes<pb::MaintainerPostBootstrapResponse>,
    DecodeBytes<pb::ScheduleDispatcherRequest>,
    DecodeBytes<pb::ScheduleDispatcherResponse>,
    DecodeBytes<pb::MaintainerCloseRequest>,
    DecodeBytes<pb::MaintainerCloseResponse>,
    DecodeBytes<pb::Watermark>,
    DecodeBytes<pb::TableSpanStatus>,
    DecodeBytes<pb::HeartBeatRequest>,
    DecodeBytes<pb::TableSpanBlockStatus>,
    DecodeBytes<pb::HeartBeatResponse>,
    DecodeBytes<pb::AddMaintainerRequest>,
    DecodeBytes<pb::RemoveMaintainerRequest>,
    DecodeBytes<pb::MaintainerStatus>,
    DecodeBytes<pb::MaintainerHeartbeat>,
};

// Valid encodings, as seeds for mutation.
std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  auto add = [&](const google::protobuf::Message& m) { seeds.push_back(m.SerializeAsString()); };
  add(Encode<pb::MaintainerBootstrapRequest>(SampleBootstrap()));
  add(Encode<pb::MaintainerBootstrapResponse>(SampleBootstrapResponse()));
  add(Encode<pb::MaintainerPostBootstrapRequest>(SamplePostBootstrap()));
  add(Encode<pb::TableSpanBlockStatus>(SampleBlockReport()));
  add(Encode<pb::HeartBeatResponse>(SampleBarrier()));
  add(Encode<pb::MaintainerStatus>(SampleMaintainerStatus(3)));
  pb::AddMaintainerRequest add_request;
  ToProto(kNode, SampleAdd(), &add_request);
  add(add_request);
  return seeds;
}

TEST(WireFuzzTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(20240501);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes(rng() % 96, '\0');
    for (char& c : bytes) c = static_cast<char>(byte(rng));
    for (Decoder decode : kDecoders) decode(bytes);
  }
}

TEST(WireFuzzTest, MutatedValidMessagesNeverCrash) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::vector<std::string> seeds = Seeds();
  for (int i = 0; i < 3000; ++i) {
    std::string bytes = seeds[rng() % seeds.size()];
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips && !bytes.empty(); ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(byte(rng));
    }
    if (rng() % 4 == 0) bytes.resize(rng() % (bytes.size() + 1));
    for (Decoder decode : kDecoders) decode(bytes);
  }
}

}  // namespace
}  // namespace sluice::server
