// Field-level codecs shared by the wire adapters (wire.cc): error helpers
// that name the failing field, identifiers, spans, enums and statuses. Not a
// public interface: only the adapters include it.
//
// Threads: plain functions over values; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "meta/model.h"
#include "node/wire.h"

namespace sluice::node::wire_fields {

namespace dm = ::sluice::dispatchermanager;
namespace mt = ::sluice::maintainer;
namespace co = ::sluice::coordinator;

// --- Errors -----------------------------------------------------------------

inline Status Missing(std::string_view field) {
  return InvalidArgument(std::string(field) + ": missing");
}

inline Status UnknownEnum(std::string_view field, int64_t value) {
  return Corruption(std::string(field) + ": unknown value " + std::to_string(value));
}

inline Status Unsupported(std::string_view field, int64_t value) {
  return InvalidArgument(std::string(field) + ": unsupported value " + std::to_string(value));
}

// Prefixes the field path of an error: "where.field: problem".
inline Status Nest(std::string_view where, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), std::string(where) + "." + std::string(status.message()));
}

template <typename T>
inline Result<T> Nest(std::string_view where, Result<T> result) {
  if (result.ok()) return result;
  return Nest(where, result.status());
}

inline std::string Indexed(std::string_view field, int index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

// --- Identifiers ------------------------------------------------------------

inline void IdToProto(DispatcherId id, pb::DispatcherID* out) {
  out->set_high(id.high);
  out->set_low(id.low);
}

inline DispatcherId IdFromProto(const pb::DispatcherID& in) {
  return DispatcherId{in.high(), in.low()};
}

// A dispatcher id that must be present and non-zero.
inline Result<DispatcherId> RequiredId(bool has, const pb::DispatcherID& in,
                                       std::string_view field) {
  DispatcherId id = IdFromProto(in);
  if (!has || id.IsZero()) return Missing(field);
  return id;
}

// An optional id: absent stays absent, present must be non-zero.
inline Status OptionalId(bool has, const pb::DispatcherID& in, std::string_view field,
                         std::optional<DispatcherId>* out) {
  if (!has) return Status::Ok();
  ASSIGN_OR_RETURN(*out, RequiredId(true, in, field));
  return Status::Ok();
}

inline void ChangefeedToProto(const std::string& id, pb::ChangefeedID* out) {
  Result<meta::ChangefeedId> parsed = meta::ChangefeedId::Parse(id);
  if (parsed.ok()) {
    out->set_keyspace(parsed->ns);
    out->set_name(parsed->name);
  } else {
    out->set_name(id);
  }
}

inline Result<std::string> ChangefeedFromProto(bool has, const pb::ChangefeedID& in,
                                               std::string_view field) {
  if (!has || in.name().empty()) return Missing(field);
  if (in.keyspace().empty()) return in.name();
  return in.keyspace() + "/" + in.name();
}

inline void MetaIdToProto(const meta::ChangefeedId& id, pb::ChangefeedID* out) {
  out->set_keyspace(id.ns);
  out->set_name(id.name);
}

inline Result<meta::ChangefeedId> MetaIdFromProto(bool has, const pb::ChangefeedID& in) {
  if (!has || in.name().empty()) return Missing("id");
  return meta::ChangefeedId{in.keyspace(), in.name()};
}

inline Result<NodeId> Sender(const std::string& node) {
  if (node.empty()) return Missing("sender_node_id");
  return NodeId(node);
}

inline Result<MaintainerEpoch> NonZeroEpoch(uint64_t epoch) {
  if (epoch == 0) return InvalidArgument("maintainer_epoch: zero");
  return MaintainerEpoch(epoch);
}

// --- Spans ------------------------------------------------------------------

inline void SpanToProto(TableId table, const Span& span, pb::TableSpan* out) {
  out->set_table_id(table.value());
  out->set_start_key(span.start);
  out->set_end_key(span.end);
}

inline Status SpanFromProto(bool has, const pb::TableSpan& in, TableId* table, Span* span) {
  if (!has) return Missing("span");
  Span decoded{in.start_key(), in.end_key()};
  if (decoded.IsEmpty()) return InvalidArgument("span: end key is not after start key");
  *table = TableId(in.table_id());
  *span = std::move(decoded);
  return Status::Ok();
}

// --- Enums ------------------------------------------------------------------

inline int64_t ModeToProto(dm::DispatcherMode mode) {
  return mode == dm::DispatcherMode::kRedo ? 1 : 0;
}

inline Result<dm::DispatcherMode> ModeFromProto(int64_t mode) {
  if (mode == 0) return dm::DispatcherMode::kDefault;
  if (mode == 1) return dm::DispatcherMode::kRedo;
  return UnknownEnum("mode", mode);
}

inline pb::ComponentState StateToProto(dm::ComponentState state) {
  switch (state) {
    case dm::ComponentState::kWorking:
      return pb::WORKING;
    case dm::ComponentState::kStopping:
      return pb::STOPPING;
    case dm::ComponentState::kStopped:
      return pb::STOPPED;
  }
  return pb::WORKING;
}

inline Result<dm::ComponentState> StateFromProto(int state, std::string_view field) {
  if (!pb::ComponentState_IsValid(state)) return UnknownEnum(field, state);
  switch (static_cast<pb::ComponentState>(state)) {
    case pb::WORKING:
      return dm::ComponentState::kWorking;
    case pb::STOPPING:
      return dm::ComponentState::kStopping;
    case pb::STOPPED:
      return dm::ComponentState::kStopped;
    default:
      return Unsupported(field, state);
  }
}

inline Result<dm::ScheduleAction> ActionFromProto(int action) {
  if (action == pb::CREATE) return dm::ScheduleAction::kCreate;
  if (action == pb::REMOVE) return dm::ScheduleAction::kRemove;
  return UnknownEnum("schedule_action", action);
}

inline pb::BlockStage StageToProto(dispatcher::BlockStage stage) {
  switch (stage) {
    case dispatcher::BlockStage::kNone:
      return pb::NONE;
    case dispatcher::BlockStage::kWaiting:
      return pb::WAITING;
    case dispatcher::BlockStage::kDone:
      return pb::DONE;
  }
  return pb::NONE;
}

inline Result<dispatcher::BlockStage> StageFromProto(int stage) {
  if (!pb::BlockStage_IsValid(stage)) return UnknownEnum("stage", stage);
  switch (static_cast<pb::BlockStage>(stage)) {
    case pb::NONE:
      return dispatcher::BlockStage::kNone;
    case pb::WAITING:
      return dispatcher::BlockStage::kWaiting;
    case pb::DONE:
      return dispatcher::BlockStage::kDone;
    default:
      return Unsupported("stage", stage);
  }
}

inline pb::InfluenceType InfluenceToProto(event::InfluenceType type) {
  switch (type) {
    case event::InfluenceType::kNormal:
      return pb::NORMAL;
    case event::InfluenceType::kDb:
      return pb::DB;
    case event::InfluenceType::kAll:
      return pb::ALL;
  }
  return pb::NORMAL;
}

inline Result<event::InfluenceType> InfluenceFromProto(int type) {
  switch (type) {
    case pb::NORMAL:
      return event::InfluenceType::kNormal;
    case pb::DB:
      return event::InfluenceType::kDb;
    case pb::ALL:
      return event::InfluenceType::kAll;
    default:
      return UnknownEnum("influence_type", type);
  }
}

inline Result<dispatcher::BarrierAction> BarrierFromProto(int action) {
  if (action == pb::WRITE) return dispatcher::BarrierAction::kWrite;
  if (action == pb::PASS) return dispatcher::BarrierAction::kPass;
  return UnknownEnum("action", action);
}

inline Result<co::MaintainerState> MaintainerStateFromProto(int state) {
  if (!pb::ComponentState_IsValid(state)) return UnknownEnum("state", state);
  if (state == pb::WORKING) return co::MaintainerState::kWorking;
  if (state == pb::STOPPED) return co::MaintainerState::kStopped;
  return Unsupported("state", state);
}

// --- Status -----------------------------------------------------------------

// Decodes an optional RunningError field into `*out` (OK when absent).
inline Status ErrFromProto(bool has, const pb::RunningError& in, Status* out) {
  if (!has) {
    *out = Status::Ok();
    return Status::Ok();
  }
  return Nest("err", FromProto(in, out));
}

template <typename P>
inline void SetErr(const Status& status, P* out) {
  if (!status.ok()) ToProto(status, out->mutable_err());
}

}  // namespace sluice::node::wire_fields
