// The wire adapters on bad input: each malformed field is a typed error
// naming it, and random or mutated bytes never crash a decoder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "node/wire.h"
#include "node/wire_test_util.h"

namespace sluice::node {
namespace {

using namespace wire_testing;  // NOLINT: the test vocabulary.
using ::testing::HasSubstr;

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
  ExpectBadAfter(base, kInvalid, "span", [](auto& p) { p.clear_span(); });
  ExpectBadAfter(base, kInvalid, "span",
                 [](auto& p) { p.mutable_span()->set_end_key(p.span().start_key()); });
  ExpectBadAfter(base, kInvalid, "span", [](auto& p) {
    p.mutable_span()->set_end_key("a");
    p.mutable_span()->set_start_key("b");
  });
  ExpectBadAfter(base, kInvalid, "dispatcher_id", [](auto& p) { p.clear_dispatcher_id(); });
  ExpectBadAfter(base, kInvalid, "dispatcher_id",
                 [](auto& p) { p.mutable_dispatcher_id()->Clear(); });
  ExpectBadAfter(base, kCorrupt, "mode", [](auto& p) { p.set_mode(2); });
}

TEST(WireBadInputTest, BootstrapTableSpanAndSchema) {
  auto base = Encode<pb::BootstrapTableSpan>(
      dm::DispatcherStatus{SampleConfig(1), dm::ComponentState::kWorking, Ts(1)});
  ExpectBadAfter(base, kInvalid, "id", [](auto& p) { p.clear_id(); });
  ExpectBadAfter(base, kInvalid, "span", [](auto& p) { p.clear_span(); });
  ExpectBadAfter(base, kCorrupt, "component_status",
                 [](auto& p) { p.set_component_status(static_cast<pb::ComponentState>(99)); });
  ExpectBadAfter(base, kInvalid, "component_status",
                 [](auto& p) { p.set_component_status(pb::MERGE_READY); });
  ExpectBadAfter(base, kCorrupt, "mode", [](auto& p) { p.set_mode(-1); });
  // Every SchemaInfo is valid; it has no required field.
  EXPECT_TRUE(FromProto(pb::SchemaInfo()).ok());
}

TEST(WireBadInputTest, BootstrapRequest) {
  auto base = Encode<pb::MaintainerBootstrapRequest>(SampleBootstrap());
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "changefeed_id",
                 [](auto& p) { p.mutable_changefeed_id()->clear_name(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "table_trigger_event_dispatcher_id",
                 [](auto& p) { p.mutable_table_trigger_event_dispatcher_id()->Clear(); });
  ExpectBadAfter(base, kInvalid, "table_trigger_redo_dispatcher_id",
                 [](auto& p) { p.mutable_table_trigger_redo_dispatcher_id()->Clear(); });
}

TEST(WireBadInputTest, BootstrapResponse) {
  auto base = Encode<pb::MaintainerBootstrapResponse>(SampleBootstrapResponse());
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kCorrupt, "err.status_code",
                 [](auto& p) { p.mutable_err()->set_status_code(-3); });
  ExpectBadAfter(base, kInvalid, "spans[1].span",
                 [](auto& p) { p.mutable_spans(1)->mutable_span()->set_end_key("\x01"); });
  ExpectBadAfter(base, kCorrupt, "spans[0].component_status", [](auto& p) {
    p.mutable_spans(0)->set_component_status(static_cast<pb::ComponentState>(50));
  });
  ExpectBadAfter(base, kCorrupt, "operators[1].schedule_action", [](auto& p) {
    p.mutable_operators(1)->set_schedule_action(static_cast<pb::ScheduleAction>(7));
  });
  ExpectBadAfter(base, kInvalid, "operators[0].sender_node_id",
                 [](auto& p) { p.mutable_operators(0)->clear_sender_node_id(); });
}

TEST(WireBadInputTest, PostBootstrap) {
  auto base = Encode<pb::MaintainerPostBootstrapRequest>(SamplePostBootstrap());
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "table_trigger_event_dispatcher_id",
                 [](auto& p) { p.clear_table_trigger_event_dispatcher_id(); });

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
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "config", [](auto& p) { p.clear_config(); });
  ExpectBadAfter(base, kInvalid, "config.span",
                 [](auto& p) { p.mutable_config()->mutable_span()->set_end_key("\x01"); });
  ExpectBadAfter(base, kInvalid, "config.dispatcher_id",
                 [](auto& p) { p.mutable_config()->clear_dispatcher_id(); });
  ExpectBadAfter(base, kCorrupt, "schedule_action",
                 [](auto& p) { p.set_schedule_action(static_cast<pb::ScheduleAction>(2)); });
  ExpectBadAfter(base, kCorrupt, "operator_type",
                 [](auto& p) { p.set_operator_type(static_cast<pb::OperatorType>(77)); });

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
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });

  auto response = Encode<pb::MaintainerCloseResponse>(
      dm::CloseResponse{kFeed, kEpoch, true, false, Status::Ok()});
  response.clear_changefeed_id();
  ExpectBad(response, kInvalid, "changefeed_id");
}

TEST(WireBadInputTest, Heartbeat) {
  mt::HeartbeatRequest request{kFeed,
                               {{DispatcherId{1, 1}, dm::ComponentState::kWorking, Ts(1)}},
                               mt::Watermark{},
                               Status::Ok()};
  auto base = Encode<pb::HeartBeatRequest>(request);
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "statuses[0].id",
                 [](auto& p) { p.mutable_statuses(0)->clear_id(); });
  ExpectBadAfter(base, kCorrupt, "statuses[0].component_status", [](auto& p) {
    p.mutable_statuses(0)->set_component_status(static_cast<pb::ComponentState>(8));
  });

  pb::TableSpanStatus status;
  ExpectBad(status, kInvalid, "id");
}

TEST(WireBadInputTest, BlockReport) {
  auto base = Encode<pb::TableSpanBlockStatus>(SampleBlockReport());
  ExpectBadAfter(base, kInvalid, "id", [](auto& p) { p.clear_id(); });
  ExpectBadAfter(base, kInvalid, "state", [](auto& p) { p.clear_state(); });
  ExpectBadAfter(base, kCorrupt, "state.stage",
                 [](auto& p) { p.mutable_state()->set_stage(static_cast<pb::BlockStage>(9)); });
  ExpectBadAfter(base, kInvalid, "state.stage",
                 [](auto& p) { p.mutable_state()->set_stage(pb::WRITING); });
  ExpectBadAfter(base, kCorrupt, "state.block_tables.influence_type", [](auto& p) {
    p.mutable_state()->mutable_block_tables()->set_influence_type(
        static_cast<pb::InfluenceType>(3));
  });
  ExpectBadAfter(base, kInvalid, "need_dropped_tables.influence_type", [](auto& p) {
    p.mutable_state()->mutable_need_dropped_tables()->set_influence_type(pb::DB);
  });
}

TEST(WireBadInputTest, BarrierAction) {
  auto base = Encode<pb::HeartBeatResponse>(SampleBarrier());
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "dispatcher_statuses",
                 [](auto& p) { p.clear_dispatcher_statuses(); });
  ExpectBadAfter(base, kInvalid, "dispatcher_statuses",
                 [](auto& p) { p.add_dispatcher_statuses(); });
  ExpectBadAfter(base, kInvalid, "dispatcher_statuses[0].action",
                 [](auto& p) { p.mutable_dispatcher_statuses(0)->clear_action(); });
  ExpectBadAfter(base, kCorrupt, "dispatcher_statuses[0].action", [](auto& p) {
    p.mutable_dispatcher_statuses(0)->mutable_action()->set_action(static_cast<pb::Action>(4));
  });
  ExpectBadAfter(base, kInvalid, "influenced_dispatchers",
                 [](auto& p) { p.mutable_dispatcher_statuses(0)->clear_influenced_dispatchers(); });
  ExpectBadAfter(base, kInvalid, "influenced_dispatchers.influence_type", [](auto& p) {
    p.mutable_dispatcher_statuses(0)->mutable_influenced_dispatchers()->set_influence_type(pb::ALL);
  });
  ExpectBadAfter(base, kInvalid, "influenced_dispatchers.dispatcher_ids", [](auto& p) {
    p.mutable_dispatcher_statuses(0)->mutable_influenced_dispatchers()->clear_dispatcher_ids();
  });
  ExpectBadAfter(base, kInvalid, "dispatcher_ids[1]", [](auto& p) {
    p.mutable_dispatcher_statuses(0)
        ->mutable_influenced_dispatchers()
        ->mutable_dispatcher_ids(1)
        ->Clear();
  });
}

TEST(WireBadInputTest, AddMaintainer) {
  pb::AddMaintainerRequest base;
  ToProto(kNode, SampleAdd(), &base);
  ExpectBadAfter(base, kInvalid, "id", [](auto& p) { p.clear_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "maintainer_epoch", [](auto& p) { p.set_maintainer_epoch(0); });
  ExpectBadAfter(base, kInvalid, "changefeed_info", [](auto& p) { p.clear_changefeed_info(); });
  ExpectBadAfter(base, kCorrupt, "changefeed_info",
                 [](auto& p) { p.set_changefeed_info("{not json"); });
  ExpectBadAfter(base, kInvalid, "changefeed_info",
                 [](auto& p) { p.mutable_id()->set_name("other-feed"); });
}

TEST(WireBadInputTest, RemoveMaintainer) {
  pb::RemoveMaintainerRequest base;
  ToProto(kNode, co::RemoveMaintainerRequest{meta::ChangefeedId{"ks", "f"}, kEpoch, true, false},
          &base);
  ExpectBadAfter(base, kInvalid, "id", [](auto& p) { p.clear_id(); });
  ExpectBadAfter(base, kInvalid, "sender_node_id", [](auto& p) { p.clear_sender_node_id(); });
  ExpectBadAfter(base, kInvalid, "maintainer_epoch", [](auto& p) { p.set_maintainer_epoch(0); });
}

TEST(WireBadInputTest, MaintainerStatusAndHeartbeat) {
  auto base = Encode<pb::MaintainerStatus>(SampleMaintainerStatus(1));
  ExpectBadAfter(base, kInvalid, "changefeed_id", [](auto& p) { p.clear_changefeed_id(); });
  ExpectBadAfter(base, kInvalid, "maintainer_epoch", [](auto& p) { p.set_maintainer_epoch(0); });
  ExpectBadAfter(base, kCorrupt, "state",
                 [](auto& p) { p.set_state(static_cast<pb::ComponentState>(100)); });
  ExpectBadAfter(base, kInvalid, "state", [](auto& p) { p.set_state(pb::STOPPING); });
  ExpectBadAfter(base, kCorrupt, "err[0].status_code",
                 [](auto& p) { p.mutable_err(0)->set_status_code(kNumCodes); });

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
}  // namespace sluice::node
