// Test support for the wire adapters' tests: field-by-field equality of the
// control structs, sample values whose every field differs from its default,
// and helpers that push a message through bytes as the transport does.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "meta/model.h"
#include "node/wire.h"

namespace sluice::node::wire_testing {

namespace dm = ::sluice::dispatchermanager;
namespace mt = ::sluice::maintainer;
namespace co = ::sluice::coordinator;

// --- Equality ----------------------------------------------------------------

// Declared up front so SameAll() finds every overload.
inline bool Same(const dm::DispatcherConfig& a, const dm::DispatcherConfig& b);
inline bool Same(const dm::DispatcherStatus& a, const dm::DispatcherStatus& b);
inline bool Same(const dm::TableInfo& a, const dm::TableInfo& b);
inline bool Same(const dm::SchemaInfo& a, const dm::SchemaInfo& b);
inline bool Same(const dm::ScheduleRequest& a, const dm::ScheduleRequest& b);
inline bool Same(const mt::SpanStatus& a, const mt::SpanStatus& b);
inline bool Same(const co::MaintainerStatus& a, const co::MaintainerStatus& b);

template <typename T>
inline bool SameAll(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Same(a[i], b[i])) return false;
  }
  return true;
}

inline bool Same(const dm::DispatcherConfig& a, const dm::DispatcherConfig& b) {
  return a.id == b.id && a.table_id == b.table_id && a.schema_id == b.schema_id &&
         a.span == b.span && a.start_ts == b.start_ts && a.mode == b.mode;
}

inline bool Same(const dm::DispatcherStatus& a, const dm::DispatcherStatus& b) {
  return Same(a.config, b.config) && a.state == b.state && a.checkpoint_ts == b.checkpoint_ts;
}

inline bool Same(const dm::TableInfo& a, const dm::TableInfo& b) {
  return a.id == b.id && a.name == b.name;
}

inline bool Same(const dm::SchemaInfo& a, const dm::SchemaInfo& b) {
  return a.id == b.id && a.name == b.name && SameAll(a.tables, b.tables);
}

inline bool Same(const dm::ScheduleRequest& a, const dm::ScheduleRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.action == b.action && Same(a.config, b.config);
}

inline bool Same(const dm::BootstrapRequest& a, const dm::BootstrapRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.start_ts == b.start_ts && a.is_new_changefeed == b.is_new_changefeed &&
         a.redo_enabled == b.redo_enabled && a.table_trigger_id == b.table_trigger_id &&
         a.redo_trigger_id == b.redo_trigger_id && a.replace_trigger_id == b.replace_trigger_id &&
         a.replace_redo_trigger_id == b.replace_redo_trigger_id;
}

inline bool Same(const dm::BootstrapResponse& a, const dm::BootstrapResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch && a.status == b.status &&
         SameAll(a.spans, b.spans) && a.checkpoint_ts == b.checkpoint_ts &&
         a.redo_checkpoint_ts == b.redo_checkpoint_ts && SameAll(a.operators, b.operators) &&
         a.existing_trigger_id == b.existing_trigger_id &&
         a.existing_redo_trigger_id == b.existing_redo_trigger_id;
}

inline bool Same(const dm::PostBootstrapRequest& a, const dm::PostBootstrapRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.table_trigger_id == b.table_trigger_id && SameAll(a.schemas, b.schemas) &&
         SameAll(a.redo_schemas, b.redo_schemas);
}

inline bool Same(const dm::PostBootstrapResponse& a, const dm::PostBootstrapResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch &&
         a.table_trigger_id == b.table_trigger_id && a.status == b.status;
}

inline bool Same(const dm::ScheduleResponse& a, const dm::ScheduleResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch &&
         a.dispatcher_id == b.dispatcher_id && a.state == b.state && a.status == b.status;
}

inline bool Same(const dm::CloseRequest& a, const dm::CloseRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.removed == b.removed;
}

inline bool Same(const dm::CloseResponse& a, const dm::CloseResponse& b) {
  return a.changefeed_id == b.changefeed_id && a.epoch == b.epoch && a.success == b.success &&
         a.superseded == b.superseded && a.status == b.status;
}

inline bool Same(const mt::Watermark& a, const mt::Watermark& b) {
  return a.checkpoint_ts == b.checkpoint_ts && a.resolved_ts == b.resolved_ts && a.seq == b.seq;
}

inline bool Same(const mt::SpanStatus& a, const mt::SpanStatus& b) {
  return a.id == b.id && a.state == b.state && a.checkpoint_ts == b.checkpoint_ts;
}

inline bool Same(const mt::HeartbeatRequest& a, const mt::HeartbeatRequest& b) {
  if (a.watermark.has_value() != b.watermark.has_value()) return false;
  if (a.watermark && !Same(*a.watermark, *b.watermark)) return false;
  return a.changefeed_id == b.changefeed_id && SameAll(a.statuses, b.statuses) &&
         a.error.code() == b.error.code() && a.error.message() == b.error.message();
}

inline bool Same(const event::BlockedTables& a, const event::BlockedTables& b) {
  return a.influence == b.influence && a.table_ids == b.table_ids && a.schema_id == b.schema_id;
}

inline bool Same(const mt::BlockReport& a, const mt::BlockReport& b) {
  return a.dispatcher_id == b.dispatcher_id && a.block_ts == b.block_ts &&
         a.is_syncpoint == b.is_syncpoint && a.stage == b.stage &&
         Same(a.blocked_tables, b.blocked_tables) && a.tables_to_add == b.tables_to_add &&
         a.tables_to_drop == b.tables_to_drop;
}

inline bool Same(const mt::BarrierActionRequest& a, const mt::BarrierActionRequest& b) {
  return a.changefeed_id == b.changefeed_id && a.from == b.from && a.epoch == b.epoch &&
         a.block_ts == b.block_ts && a.is_syncpoint == b.is_syncpoint && a.action == b.action &&
         a.dispatchers == b.dispatchers;
}

inline bool Same(const co::AddMaintainerRequest& a, const co::AddMaintainerRequest& b) {
  return a.id == b.id && a.info == b.info && a.checkpoint_ts == b.checkpoint_ts &&
         a.epoch == b.epoch && a.is_new_changefeed == b.is_new_changefeed;
}

inline bool Same(const co::RemoveMaintainerRequest& a, const co::RemoveMaintainerRequest& b) {
  return a.id == b.id && a.epoch == b.epoch && a.cascade == b.cascade && a.removed == b.removed;
}

inline bool Same(const co::MaintainerStatus& a, const co::MaintainerStatus& b) {
  return a.id == b.id && a.epoch == b.epoch && a.state == b.state &&
         a.checkpoint_ts == b.checkpoint_ts && a.error == b.error &&
         a.bootstrap_done == b.bootstrap_done;
}

// --- Samples (every field differs from its default) ---------------------------

inline const NodeId kNode("node-7f3a");
inline const MaintainerEpoch kEpoch(449000000000000123ULL);
inline const std::string kFeed = "ks1/feed-a";

inline dm::DispatcherConfig SampleConfig(uint64_t n) {
  dm::DispatcherConfig c;
  c.id = DispatcherId{0xA000 + n, 0xB000 + n};
  c.table_id = TableId(static_cast<int64_t>(100 + n));
  c.schema_id = 7;
  c.span = Span{"t\x80\x01_r\xff", std::string("t\x80\x01_s\0", 6)};
  c.start_ts = Ts(450000000000000000ULL + n);
  c.mode = dm::DispatcherMode::kRedo;
  return c;
}

inline dm::ScheduleRequest SampleSchedule(uint64_t n) {
  return dm::ScheduleRequest{kFeed, kNode, kEpoch, dm::ScheduleAction::kRemove, SampleConfig(n)};
}

inline dm::SchemaInfo SampleSchema(int64_t n) {
  return dm::SchemaInfo{
      n, "db\xff" + std::to_string(n), {{TableId(n * 10), "t1"}, {TableId(n * 10 + 1), "t\x01 2"}}};
}

inline dm::BootstrapRequest SampleBootstrap() {
  return dm::BootstrapRequest{kFeed,
                              kNode,
                              kEpoch,
                              Ts(451),
                              /*is_new_changefeed=*/true,
                              /*redo_enabled=*/true,
                              DispatcherId{1, 2},
                              DispatcherId{3, 4},
                              DispatcherId{5, 7},
                              DispatcherId{8, 9}};
}

inline dm::BootstrapResponse SampleBootstrapResponse() {
  dm::BootstrapResponse r;
  r.changefeed_id = kFeed;
  r.epoch = kEpoch;
  r.status = Status(Code::kStaleOwner, "fenced by epoch 9");
  r.spans = {dm::DispatcherStatus{SampleConfig(1), dm::ComponentState::kStopping, Ts(600)},
             dm::DispatcherStatus{SampleConfig(2), dm::ComponentState::kStopped, Ts(601)}};
  r.checkpoint_ts = Ts(700);
  r.redo_checkpoint_ts = Ts(701);
  r.operators = {SampleSchedule(3), SampleSchedule(4)};
  r.existing_trigger_id = DispatcherId{12, 13};
  r.existing_redo_trigger_id = DispatcherId{14, 15};
  return r;
}

inline dm::PostBootstrapRequest SamplePostBootstrap() {
  return dm::PostBootstrapRequest{kFeed,
                                  kNode,
                                  kEpoch,
                                  DispatcherId{5, 6},
                                  {SampleSchema(1), SampleSchema(2)},
                                  {SampleSchema(3)}};
}

inline mt::BlockReport SampleBlockReport() {
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

inline mt::BarrierActionRequest SampleBarrier() {
  return mt::BarrierActionRequest{kFeed,
                                  kNode,
                                  kEpoch,
                                  Ts(900),
                                  /*is_syncpoint=*/true,
                                  dispatcher::BarrierAction::kWrite,
                                  {DispatcherId{1, 1}, DispatcherId{2, 2}}};
}

inline meta::ChangefeedInfo SampleInfo() {
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

inline co::AddMaintainerRequest SampleAdd() {
  return co::AddMaintainerRequest{meta::ChangefeedId{"ks1", "feed-a"}, SampleInfo(), Ts(449001),
                                  kEpoch, /*is_new_changefeed=*/true};
}

inline co::MaintainerStatus SampleMaintainerStatus(uint64_t n) {
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
  EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr(std::string(field)));
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr(std::string(P::descriptor()->name())));
}

// ExpectBad() of a copy of `base` changed by `mutate`.
template <typename P, typename Mutate>
void ExpectBadAfter(const P& base, Code code, std::string_view field, Mutate mutate) {
  P p = base;
  mutate(p);
  ExpectBad(p, code, field);
}

}  // namespace sluice::node::wire_testing
