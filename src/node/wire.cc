#include "node/wire.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meta/model.h"
#include "node/wire_fields.h"

namespace sluice::node {
namespace {

namespace dm = ::sluice::dispatchermanager;
namespace mt = ::sluice::maintainer;
namespace co = ::sluice::coordinator;

using namespace wire_fields;  // NOLINT: the adapters are written in these terms.

// --- Decoders ---------------------------------------------------------------

// Each Decode() names the failing field relative to its message; the public
// FromProto() adds the message name (see Top()). Declared up front so that
// DecodeAll() finds every overload.
Result<dm::DispatcherConfig> Decode(const pb::DispatcherConfig& in);
Result<dm::DispatcherStatus> Decode(const pb::BootstrapTableSpan& in);
Result<dm::SchemaInfo> Decode(const pb::SchemaInfo& in);
Result<dm::ScheduleRequest> Decode(const pb::ScheduleDispatcherRequest& in);
Result<mt::SpanStatus> Decode(const pb::TableSpanStatus& in);
Result<event::TableRef> Decode(const pb::Table& in);
Result<co::MaintainerStatus> Decode(const pb::MaintainerStatus& in);

Result<dm::DispatcherConfig> Decode(const pb::DispatcherConfig& in) {
  dm::DispatcherConfig out;
  RETURN_IF_ERROR(SpanFromProto(in.has_span(), in.span(), &out.table_id, &out.span));
  ASSIGN_OR_RETURN(out.id, RequiredId(in.has_dispatcher_id(), in.dispatcher_id(), "dispatcher_id"));
  ASSIGN_OR_RETURN(out.mode, ModeFromProto(in.mode()));
  out.start_ts = Ts(in.start_ts());
  out.schema_id = in.schema_id();
  return out;
}

Result<dm::DispatcherStatus> Decode(const pb::BootstrapTableSpan& in) {
  dm::DispatcherStatus out;
  dm::DispatcherConfig& config = out.config;
  RETURN_IF_ERROR(SpanFromProto(in.has_span(), in.span(), &config.table_id, &config.span));
  ASSIGN_OR_RETURN(config.id, RequiredId(in.has_id(), in.id(), "id"));
  ASSIGN_OR_RETURN(config.mode, ModeFromProto(in.mode()));
  ASSIGN_OR_RETURN(out.state, StateFromProto(in.component_status(), "component_status"));
  config.schema_id = in.schema_id();
  config.start_ts = Ts(in.start_ts());
  out.checkpoint_ts = Ts(in.checkpoint_ts());
  return out;
}

Result<dm::SchemaInfo> Decode(const pb::SchemaInfo& in) {
  dm::SchemaInfo out;
  out.id = in.schema_id();
  out.name = in.schema_name();
  out.tables.reserve(in.tables_size());
  for (const pb::TableInfo& table : in.tables()) {
    out.tables.push_back(dm::TableInfo{TableId(table.table_id()), table.table_name()});
  }
  return out;
}

// Decodes every element of a repeated field with Decode(), naming the index
// of a bad one.
template <typename T, typename Repeated>
Status DecodeAll(const Repeated& in, std::string_view field, std::vector<T>* out) {
  out->clear();
  out->reserve(in.size());
  for (int i = 0; i < in.size(); ++i) {
    Result<T> item = Nest(Indexed(field, i), Decode(in.Get(i)));
    if (!item.ok()) return item.status();
    out->push_back(std::move(item).value());
  }
  return Status::Ok();
}

// --- Maintainer <-> dispatcher manager --------------------------------------

Result<dm::BootstrapRequest> Decode(const pb::MaintainerBootstrapRequest& in) {
  dm::BootstrapRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  RETURN_IF_ERROR(OptionalId(in.has_table_trigger_event_dispatcher_id(),
                             in.table_trigger_event_dispatcher_id(),
                             "table_trigger_event_dispatcher_id", &out.table_trigger_id));
  RETURN_IF_ERROR(OptionalId(in.has_table_trigger_redo_dispatcher_id(),
                             in.table_trigger_redo_dispatcher_id(),
                             "table_trigger_redo_dispatcher_id", &out.redo_trigger_id));
  RETURN_IF_ERROR(OptionalId(in.has_replace_table_trigger_event_dispatcher_id(),
                             in.replace_table_trigger_event_dispatcher_id(),
                             "replace_table_trigger_event_dispatcher_id", &out.replace_trigger_id));
  RETURN_IF_ERROR(OptionalId(in.has_replace_table_trigger_redo_dispatcher_id(),
                             in.replace_table_trigger_redo_dispatcher_id(),
                             "replace_table_trigger_redo_dispatcher_id",
                             &out.replace_redo_trigger_id));
  out.start_ts = Ts(in.start_ts());
  out.is_new_changefeed = in.is_new_changefeed();
  out.redo_enabled = in.redo_enabled();
  return out;
}

Result<dm::ScheduleRequest> Decode(const pb::ScheduleDispatcherRequest& in) {
  dm::ScheduleRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  ASSIGN_OR_RETURN(out.action, ActionFromProto(in.schedule_action()));
  if (!pb::OperatorType_IsValid(in.operator_type())) {
    return UnknownEnum("operator_type", in.operator_type());
  }
  if (!in.has_config()) return Missing("config");
  ASSIGN_OR_RETURN(out.config, Nest("config", Decode(in.config())));
  return out;
}

Result<dm::BootstrapResponse> Decode(const pb::MaintainerBootstrapResponse& in) {
  dm::BootstrapResponse out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  RETURN_IF_ERROR(ErrFromProto(in.has_err(), in.err(), &out.status));
  RETURN_IF_ERROR(DecodeAll(in.spans(), "spans", &out.spans));
  RETURN_IF_ERROR(DecodeAll(in.operators(), "operators", &out.operators));
  out.checkpoint_ts = Ts(in.checkpoint_ts());
  out.redo_checkpoint_ts = Ts(in.redo_checkpoint_ts());
  RETURN_IF_ERROR(OptionalId(in.has_table_trigger_event_dispatcher_id(),
                             in.table_trigger_event_dispatcher_id(),
                             "table_trigger_event_dispatcher_id", &out.existing_trigger_id));
  RETURN_IF_ERROR(OptionalId(in.has_table_trigger_redo_dispatcher_id(),
                             in.table_trigger_redo_dispatcher_id(),
                             "table_trigger_redo_dispatcher_id", &out.existing_redo_trigger_id));
  return out;
}

Result<dm::PostBootstrapRequest> Decode(const pb::MaintainerPostBootstrapRequest& in) {
  dm::PostBootstrapRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  ASSIGN_OR_RETURN(out.table_trigger_id, RequiredId(in.has_table_trigger_event_dispatcher_id(),
                                                    in.table_trigger_event_dispatcher_id(),
                                                    "table_trigger_event_dispatcher_id"));
  RETURN_IF_ERROR(DecodeAll(in.schemas(), "schemas", &out.schemas));
  RETURN_IF_ERROR(DecodeAll(in.redo_schemas(), "redo_schemas", &out.redo_schemas));
  return out;
}

Result<dm::PostBootstrapResponse> Decode(const pb::MaintainerPostBootstrapResponse& in) {
  dm::PostBootstrapResponse out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  out.table_trigger_id = IdFromProto(in.table_trigger_event_dispatcher_id());
  RETURN_IF_ERROR(ErrFromProto(in.has_err(), in.err(), &out.status));
  return out;
}

Result<dm::ScheduleResponse> Decode(const pb::ScheduleDispatcherResponse& in) {
  dm::ScheduleResponse out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  out.dispatcher_id = IdFromProto(in.dispatcher_id());
  ASSIGN_OR_RETURN(out.state, StateFromProto(in.component_status(), "component_status"));
  RETURN_IF_ERROR(ErrFromProto(in.has_err(), in.err(), &out.status));
  return out;
}

Result<dm::CloseRequest> Decode(const pb::MaintainerCloseRequest& in) {
  dm::CloseRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  out.removed = in.removed();
  return out;
}

Result<dm::CloseResponse> Decode(const pb::MaintainerCloseResponse& in) {
  dm::CloseResponse out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  out.success = in.success();
  out.superseded = in.superseded();
  RETURN_IF_ERROR(ErrFromProto(in.has_err(), in.err(), &out.status));
  return out;
}

// --- Heartbeats and block reports ---------------------------------------------

Result<mt::Watermark> Decode(const pb::Watermark& in) {
  return mt::Watermark{Ts(in.checkpoint_ts()), Ts(in.resolved_ts()), in.seq()};
}

Result<mt::SpanStatus> Decode(const pb::TableSpanStatus& in) {
  mt::SpanStatus out;
  ASSIGN_OR_RETURN(out.id, RequiredId(in.has_id(), in.id(), "id"));
  ASSIGN_OR_RETURN(out.state, StateFromProto(in.component_status(), "component_status"));
  out.checkpoint_ts = Ts(in.checkpoint_ts());
  return out;
}

Result<mt::HeartbeatRequest> Decode(const pb::HeartBeatRequest& in) {
  mt::HeartbeatRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  RETURN_IF_ERROR(DecodeAll(in.statuses(), "statuses", &out.statuses));
  if (in.has_watermark()) {
    ASSIGN_OR_RETURN(out.watermark, Nest("watermark", Decode(in.watermark())));
  }
  RETURN_IF_ERROR(ErrFromProto(in.has_err(), in.err(), &out.error));
  return out;
}

void TablesToProto(const event::BlockedTables& in, pb::InfluencedTables* out) {
  out->set_influence_type(InfluenceToProto(in.influence));
  for (int64_t id : in.table_ids) out->add_table_ids(id);
  out->set_schema_id(in.schema_id);
}

Result<event::BlockedTables> Decode(const pb::InfluencedTables& in) {
  event::BlockedTables out;
  ASSIGN_OR_RETURN(out.influence, InfluenceFromProto(in.influence_type()));
  out.table_ids.assign(in.table_ids().begin(), in.table_ids().end());
  out.schema_id = in.schema_id();
  return out;
}

Result<event::TableRef> Decode(const pb::Table& in) {
  return event::TableRef{in.schema_id(), in.table_id(), in.schema_name(), in.table_name()};
}

Status DecodeDrops(const pb::State& state, std::vector<int64_t>* out) {
  if (!state.has_need_dropped_tables()) return Status::Ok();
  ASSIGN_OR_RETURN(event::BlockedTables drops,
                   Nest("need_dropped_tables", Decode(state.need_dropped_tables())));
  if (drops.influence != event::InfluenceType::kNormal) {
    return Unsupported("need_dropped_tables.influence_type",
                       state.need_dropped_tables().influence_type());
  }
  *out = std::move(drops.table_ids);
  return Status::Ok();
}

Result<mt::BlockReport> Decode(const pb::State& in) {
  mt::BlockReport out;
  out.block_ts = Ts(in.block_ts());
  out.is_syncpoint = in.is_sync_point();
  ASSIGN_OR_RETURN(out.stage, StageFromProto(in.stage()));
  if (in.has_block_tables()) {
    ASSIGN_OR_RETURN(out.blocked_tables, Nest("block_tables", Decode(in.block_tables())));
  }
  RETURN_IF_ERROR(DecodeAll(in.need_added_tables(), "need_added_tables", &out.tables_to_add));
  RETURN_IF_ERROR(DecodeDrops(in, &out.tables_to_drop));
  return out;
}

Result<mt::BlockReport> Decode(const pb::TableSpanBlockStatus& in) {
  ASSIGN_OR_RETURN(DispatcherId id, RequiredId(in.has_id(), in.id(), "id"));
  if (!in.has_state()) return Missing("state");
  ASSIGN_OR_RETURN(mt::BlockReport out, Nest("state", Decode(in.state())));
  out.dispatcher_id = id;
  return out;
}

Status DecodeInfluenced(const pb::InfluencedDispatchers& in, std::vector<DispatcherId>* out) {
  ASSIGN_OR_RETURN(event::InfluenceType type, InfluenceFromProto(in.influence_type()));
  if (type != event::InfluenceType::kNormal)
    return Unsupported("influence_type", in.influence_type());
  if (in.dispatcher_ids_size() == 0) return Missing("dispatcher_ids");
  for (int i = 0; i < in.dispatcher_ids_size(); ++i) {
    ASSIGN_OR_RETURN(DispatcherId id,
                     RequiredId(true, in.dispatcher_ids(i), Indexed("dispatcher_ids", i)));
    out->push_back(id);
  }
  return Status::Ok();
}

Status DecodeBarrier(const pb::DispatcherStatus& in, mt::BarrierActionRequest* out) {
  if (!in.has_influenced_dispatchers()) return Missing("influenced_dispatchers");
  RETURN_IF_ERROR(Nest("influenced_dispatchers",
                       DecodeInfluenced(in.influenced_dispatchers(), &out->dispatchers)));
  if (!in.has_action()) return Missing("action");
  ASSIGN_OR_RETURN(out->action, Nest("action", BarrierFromProto(in.action().action())));
  out->block_ts = Ts(in.action().commit_ts());
  out->is_syncpoint = in.action().is_sync_point();
  return Status::Ok();
}

Result<mt::BarrierActionRequest> Decode(const pb::HeartBeatResponse& in) {
  mt::BarrierActionRequest out;
  ASSIGN_OR_RETURN(out.changefeed_id, ChangefeedFromProto(in.has_changefeed_id(),
                                                          in.changefeed_id(), "changefeed_id"));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  out.epoch = MaintainerEpoch(in.maintainer_epoch());
  if (in.dispatcher_statuses_size() != 1) {
    return InvalidArgument("dispatcher_statuses: want exactly one, got " +
                           std::to_string(in.dispatcher_statuses_size()));
  }
  RETURN_IF_ERROR(Nest("dispatcher_statuses[0]", DecodeBarrier(in.dispatcher_statuses(0), &out)));
  return out;
}

// --- Coordinator <-> maintainer manager ----------------------------------------

Result<FromNode<co::AddMaintainerRequest>> Decode(const pb::AddMaintainerRequest& in) {
  FromNode<co::AddMaintainerRequest> out;
  co::AddMaintainerRequest& req = out.message;
  ASSIGN_OR_RETURN(req.id, MetaIdFromProto(in.has_id(), in.id()));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  ASSIGN_OR_RETURN(req.epoch, NonZeroEpoch(in.maintainer_epoch()));
  if (in.changefeed_info().empty()) return Missing("changefeed_info");
  Result<meta::ChangefeedInfo> info = meta::DecodeChangefeedInfo(in.changefeed_info());
  if (!info.ok()) return Corruption("changefeed_info: " + std::string(info.status().message()));
  if (info->id != req.id) {
    return InvalidArgument("changefeed_info: names " + info->id.ToString() + ", id is " +
                           req.id.ToString());
  }
  req.info = std::move(info).value();
  req.checkpoint_ts = Ts(in.checkpoint_ts());
  req.is_new_changefeed = in.is_new_changefeed();
  return out;
}

Result<FromNode<co::RemoveMaintainerRequest>> Decode(const pb::RemoveMaintainerRequest& in) {
  FromNode<co::RemoveMaintainerRequest> out;
  co::RemoveMaintainerRequest& req = out.message;
  ASSIGN_OR_RETURN(req.id, MetaIdFromProto(in.has_id(), in.id()));
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  ASSIGN_OR_RETURN(req.epoch, NonZeroEpoch(in.maintainer_epoch()));
  req.cascade = in.cascade();
  req.removed = in.removed();
  return out;
}

Result<co::MaintainerStatus> Decode(const pb::MaintainerStatus& in) {
  co::MaintainerStatus out;
  if (!in.has_changefeed_id() || in.changefeed_id().name().empty()) {
    return Missing("changefeed_id");
  }
  out.id = meta::ChangefeedId{in.changefeed_id().keyspace(), in.changefeed_id().name()};
  ASSIGN_OR_RETURN(out.epoch, NonZeroEpoch(in.maintainer_epoch()));
  ASSIGN_OR_RETURN(out.state, MaintainerStateFromProto(in.state()));
  if (in.err_size() > 0) RETURN_IF_ERROR(Nest("err[0]", FromProto(in.err(0), &out.error)));
  out.checkpoint_ts = Ts(in.checkpoint_ts());
  out.bootstrap_done = in.bootstrap_done();
  return out;
}

Result<FromNode<std::vector<co::MaintainerStatus>>> Decode(const pb::MaintainerHeartbeat& in) {
  FromNode<std::vector<co::MaintainerStatus>> out;
  ASSIGN_OR_RETURN(out.from, Sender(in.sender_node_id()));
  RETURN_IF_ERROR(DecodeAll(in.statuses(), "statuses", &out.message));
  return out;
}

// Decodes a top-level message, naming it in the error: "Message.field: ...".
template <typename P>
auto Top(const P& in) -> decltype(Decode(in)) {
  return Nest(std::string(P::descriptor()->name()), Decode(in));
}

}  // namespace

// --- Status -----------------------------------------------------------------

void ToProto(const Status& status, pb::RunningError* out) {
  out->set_status_code(static_cast<int32_t>(status.code()));
  out->set_code(std::string(CodeName(status.code())));
  out->set_message(std::string(status.message()));
}

Status FromProto(const pb::RunningError& in, Status* out) {
  int32_t code = in.status_code();
  if (code <= static_cast<int32_t>(Code::kOk) || code >= kNumCodes) {
    return Corruption("status_code: " + std::to_string(code) + " out of range");
  }
  *out = Status(static_cast<Code>(code), in.message());
  return Status::Ok();
}

// --- Shared shapes ------------------------------------------------------------

void ToProto(const dm::DispatcherConfig& in, pb::DispatcherConfig* out) {
  SpanToProto(in.table_id, in.span, out->mutable_span());
  out->set_start_ts(in.start_ts.value());
  IdToProto(in.id, out->mutable_dispatcher_id());
  out->set_schema_id(in.schema_id);
  out->set_mode(ModeToProto(in.mode));
}

Result<dm::DispatcherConfig> FromProto(const pb::DispatcherConfig& in) { return Top(in); }

void ToProto(const dm::DispatcherStatus& in, pb::BootstrapTableSpan* out) {
  IdToProto(in.config.id, out->mutable_id());
  out->set_schema_id(in.config.schema_id);
  SpanToProto(in.config.table_id, in.config.span, out->mutable_span());
  out->set_component_status(StateToProto(in.state));
  out->set_checkpoint_ts(in.checkpoint_ts.value());
  out->set_mode(ModeToProto(in.config.mode));
  out->set_start_ts(in.config.start_ts.value());
}

Result<dm::DispatcherStatus> FromProto(const pb::BootstrapTableSpan& in) { return Top(in); }

void ToProto(const dm::SchemaInfo& in, pb::SchemaInfo* out) {
  out->set_schema_id(in.id);
  out->set_schema_name(in.name);
  for (const dm::TableInfo& table : in.tables) {
    pb::TableInfo* t = out->add_tables();
    t->set_table_id(table.id.value());
    t->set_table_name(table.name);
  }
}

Result<dm::SchemaInfo> FromProto(const pb::SchemaInfo& in) { return Top(in); }

// --- Maintainer <-> dispatcher manager ---------------------------------------

void ToProto(const dm::BootstrapRequest& in, pb::MaintainerBootstrapRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_sender_node_id(in.from.value());
  out->set_maintainer_epoch(in.epoch.value());
  out->set_start_ts(in.start_ts.value());
  if (in.table_trigger_id)
    IdToProto(*in.table_trigger_id, out->mutable_table_trigger_event_dispatcher_id());
  if (in.redo_trigger_id)
    IdToProto(*in.redo_trigger_id, out->mutable_table_trigger_redo_dispatcher_id());
  if (in.replace_trigger_id)
    IdToProto(*in.replace_trigger_id, out->mutable_replace_table_trigger_event_dispatcher_id());
  if (in.replace_redo_trigger_id)
    IdToProto(*in.replace_redo_trigger_id, out->mutable_replace_table_trigger_redo_dispatcher_id());
  out->set_is_new_changefeed(in.is_new_changefeed);
  out->set_redo_enabled(in.redo_enabled);
}

Result<dm::BootstrapRequest> FromProto(const pb::MaintainerBootstrapRequest& in) { return Top(in); }

void ToProto(const dm::BootstrapResponse& in, pb::MaintainerBootstrapResponse* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_maintainer_epoch(in.epoch.value());
  SetErr(in.status, out);
  for (const dm::DispatcherStatus& span : in.spans) ToProto(span, out->add_spans());
  out->set_checkpoint_ts(in.checkpoint_ts.value());
  out->set_redo_checkpoint_ts(in.redo_checkpoint_ts.value());
  for (const dm::ScheduleRequest& op : in.operators) ToProto(op, out->add_operators());
  if (in.existing_trigger_id)
    IdToProto(*in.existing_trigger_id, out->mutable_table_trigger_event_dispatcher_id());
  if (in.existing_redo_trigger_id)
    IdToProto(*in.existing_redo_trigger_id, out->mutable_table_trigger_redo_dispatcher_id());
}

Result<dm::BootstrapResponse> FromProto(const pb::MaintainerBootstrapResponse& in) {
  return Top(in);
}

void ToProto(const dm::PostBootstrapRequest& in, pb::MaintainerPostBootstrapRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_sender_node_id(in.from.value());
  out->set_maintainer_epoch(in.epoch.value());
  IdToProto(in.table_trigger_id, out->mutable_table_trigger_event_dispatcher_id());
  for (const dm::SchemaInfo& schema : in.schemas) ToProto(schema, out->add_schemas());
  for (const dm::SchemaInfo& schema : in.redo_schemas) ToProto(schema, out->add_redo_schemas());
}

Result<dm::PostBootstrapRequest> FromProto(const pb::MaintainerPostBootstrapRequest& in) {
  return Top(in);
}

void ToProto(const dm::PostBootstrapResponse& in, pb::MaintainerPostBootstrapResponse* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_maintainer_epoch(in.epoch.value());
  IdToProto(in.table_trigger_id, out->mutable_table_trigger_event_dispatcher_id());
  SetErr(in.status, out);
}

Result<dm::PostBootstrapResponse> FromProto(const pb::MaintainerPostBootstrapResponse& in) {
  return Top(in);
}

void ToProto(const dm::ScheduleRequest& in, pb::ScheduleDispatcherRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_sender_node_id(in.from.value());
  out->set_maintainer_epoch(in.epoch.value());
  bool create = in.action == dm::ScheduleAction::kCreate;
  out->set_schedule_action(create ? pb::CREATE : pb::REMOVE);
  out->set_operator_type(create ? pb::O_ADD : pb::O_REMOVE);
  ToProto(in.config, out->mutable_config());
}

Result<dm::ScheduleRequest> FromProto(const pb::ScheduleDispatcherRequest& in) { return Top(in); }

void ToProto(const dm::ScheduleResponse& in, pb::ScheduleDispatcherResponse* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_maintainer_epoch(in.epoch.value());
  IdToProto(in.dispatcher_id, out->mutable_dispatcher_id());
  out->set_component_status(StateToProto(in.state));
  SetErr(in.status, out);
}

Result<dm::ScheduleResponse> FromProto(const pb::ScheduleDispatcherResponse& in) { return Top(in); }

void ToProto(const dm::CloseRequest& in, pb::MaintainerCloseRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_sender_node_id(in.from.value());
  out->set_maintainer_epoch(in.epoch.value());
  out->set_removed(in.removed);
}

Result<dm::CloseRequest> FromProto(const pb::MaintainerCloseRequest& in) { return Top(in); }

void ToProto(const dm::CloseResponse& in, pb::MaintainerCloseResponse* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_maintainer_epoch(in.epoch.value());
  out->set_success(in.success);
  out->set_superseded(in.superseded);
  SetErr(in.status, out);
}

Result<dm::CloseResponse> FromProto(const pb::MaintainerCloseResponse& in) { return Top(in); }

// --- Heartbeats and block reports ---------------------------------------------

void ToProto(const mt::Watermark& in, pb::Watermark* out) {
  out->set_checkpoint_ts(in.checkpoint_ts.value());
  out->set_resolved_ts(in.resolved_ts.value());
  out->set_seq(in.seq);
}

Result<mt::Watermark> FromProto(const pb::Watermark& in) { return Top(in); }

void ToProto(const mt::SpanStatus& in, pb::TableSpanStatus* out) {
  IdToProto(in.id, out->mutable_id());
  out->set_component_status(StateToProto(in.state));
  out->set_checkpoint_ts(in.checkpoint_ts.value());
}

Result<mt::SpanStatus> FromProto(const pb::TableSpanStatus& in) { return Top(in); }

void ToProto(const mt::HeartbeatRequest& in, pb::HeartBeatRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  for (const mt::SpanStatus& status : in.statuses) ToProto(status, out->add_statuses());
  if (in.watermark) ToProto(*in.watermark, out->mutable_watermark());
  SetErr(in.error, out);
}

Result<mt::HeartbeatRequest> FromProto(const pb::HeartBeatRequest& in) { return Top(in); }

void ToProto(const mt::BlockReport& in, pb::TableSpanBlockStatus* out) {
  IdToProto(in.dispatcher_id, out->mutable_id());
  pb::State* state = out->mutable_state();
  state->set_is_blocked(in.stage == dispatcher::BlockStage::kWaiting);
  state->set_block_ts(in.block_ts.value());
  TablesToProto(in.blocked_tables, state->mutable_block_tables());
  if (!in.tables_to_drop.empty()) {
    TablesToProto(event::BlockedTables{event::InfluenceType::kNormal, in.tables_to_drop, 0},
                  state->mutable_need_dropped_tables());
  }
  for (const event::TableRef& table : in.tables_to_add) {
    pb::Table* t = state->add_need_added_tables();
    t->set_table_id(table.table_id);
    t->set_schema_id(table.schema_id);
    t->set_schema_name(table.schema_name);
    t->set_table_name(table.table_name);
  }
  state->set_is_sync_point(in.is_syncpoint);
  state->set_stage(StageToProto(in.stage));
}

Result<mt::BlockReport> FromProto(const pb::TableSpanBlockStatus& in) { return Top(in); }

// --- Barrier actions ------------------------------------------------------------

void ToProto(const mt::BarrierActionRequest& in, pb::HeartBeatResponse* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  out->set_sender_node_id(in.from.value());
  out->set_maintainer_epoch(in.epoch.value());
  pb::DispatcherStatus* status = out->add_dispatcher_statuses();
  pb::InfluencedDispatchers* influenced = status->mutable_influenced_dispatchers();
  influenced->set_influence_type(pb::NORMAL);
  for (DispatcherId id : in.dispatchers) IdToProto(id, influenced->add_dispatcher_ids());
  pb::DispatcherAction* action = status->mutable_action();
  action->set_action(in.action == dispatcher::BarrierAction::kWrite ? pb::WRITE : pb::PASS);
  action->set_commit_ts(in.block_ts.value());
  action->set_is_sync_point(in.is_syncpoint);
}

Result<mt::BarrierActionRequest> FromProto(const pb::HeartBeatResponse& in) { return Top(in); }

// --- Coordinator <-> maintainer manager ---------------------------------------

void ToProto(const NodeId& from, const co::AddMaintainerRequest& in,
             pb::AddMaintainerRequest* out) {
  MetaIdToProto(in.id, out->mutable_id());
  out->set_config(in.info.config_json);
  out->set_checkpoint_ts(in.checkpoint_ts.value());
  out->set_is_new_changefeed(in.is_new_changefeed);
  out->set_sender_node_id(from.value());
  out->set_maintainer_epoch(in.epoch.value());
  out->set_changefeed_info(meta::EncodeChangefeedInfo(in.info));
}

Result<FromNode<co::AddMaintainerRequest>> FromProto(const pb::AddMaintainerRequest& in) {
  return Top(in);
}

void ToProto(const NodeId& from, const co::RemoveMaintainerRequest& in,
             pb::RemoveMaintainerRequest* out) {
  MetaIdToProto(in.id, out->mutable_id());
  out->set_cascade(in.cascade);
  out->set_removed(in.removed);
  out->set_sender_node_id(from.value());
  out->set_maintainer_epoch(in.epoch.value());
}

Result<FromNode<co::RemoveMaintainerRequest>> FromProto(const pb::RemoveMaintainerRequest& in) {
  return Top(in);
}

void ToProto(const co::MaintainerStatus& in, pb::MaintainerStatus* out) {
  MetaIdToProto(in.id, out->mutable_changefeed_id());
  out->set_maintainer_epoch(in.epoch.value());
  out->set_state(in.state == co::MaintainerState::kWorking ? pb::WORKING : pb::STOPPED);
  out->set_checkpoint_ts(in.checkpoint_ts.value());
  if (!in.error.ok()) ToProto(in.error, out->add_err());
  out->set_bootstrap_done(in.bootstrap_done);
}

Result<co::MaintainerStatus> FromProto(const pb::MaintainerStatus& in) { return Top(in); }

void ToProto(const NodeId& from, std::span<const co::MaintainerStatus> statuses,
             pb::MaintainerHeartbeat* out) {
  out->set_sender_node_id(from.value());
  for (const co::MaintainerStatus& status : statuses) ToProto(status, out->add_statuses());
}

Result<FromNode<std::vector<co::MaintainerStatus>>> FromProto(const pb::MaintainerHeartbeat& in) {
  return Top(in);
}

void ToProto(const BlockStatusBatch& in, pb::BlockStatusRequest* out) {
  ChangefeedToProto(in.changefeed_id, out->mutable_changefeed_id());
  for (const maintainer::BlockReport& r : in.reports) ToProto(r, out->add_block_statuses());
}

Result<BlockStatusBatch> FromProto(const pb::BlockStatusRequest& in) {
  BlockStatusBatch out;
  ASSIGN_OR_RETURN(out.changefeed_id,
                   ChangefeedFromProto(in.has_changefeed_id(), in.changefeed_id(),
                                       "BlockStatusRequest.changefeed_id"));
  for (const pb::TableSpanBlockStatus& s : in.block_statuses()) {
    ASSIGN_OR_RETURN(maintainer::BlockReport r, FromProto(s));
    out.reports.push_back(std::move(r));
  }
  return out;
}

}  // namespace sluice::node
