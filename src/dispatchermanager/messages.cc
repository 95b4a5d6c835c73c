#include "dispatchermanager/messages.h"

#include <sstream>
#include <utility>

namespace sluice::dispatchermanager {
namespace {

Status CheckCommon(const std::string& changefeed_id, const NodeId& from) {
  if (changefeed_id.empty()) return InvalidArgument("request without changefeed id");
  if (from.empty()) return InvalidArgument("request without sender node");
  return Status::Ok();
}

Status CheckTriggerId(const std::optional<DispatcherId>& id, std::string_view what) {
  if (id.has_value() && id->IsZero()) {
    return InvalidArgument(std::string(what) + " dispatcher id is zero");
  }
  return Status::Ok();
}

}  // namespace

std::string_view ModeName(DispatcherMode mode) {
  return mode == DispatcherMode::kRedo ? "redo" : "default";
}

std::string_view StateName(ComponentState state) {
  switch (state) {
    case ComponentState::kWorking:
      return "working";
    case ComponentState::kStopping:
      return "stopping";
    case ComponentState::kStopped:
      return "stopped";
  }
  return "unknown";
}

DispatcherConfig TableTriggerConfig(DispatcherId id, DispatcherMode mode, Ts start_ts) {
  DispatcherConfig config;
  config.id = id;
  config.table_id = TableId(event::kTableTriggerTableId);
  config.start_ts = start_ts;
  config.mode = mode;
  return config;
}

Status WritePathClosed(std::string message) { return Cancelled(std::move(message)); }

bool IsWritePathClosed(const Status& status) { return status.code() == Code::kCancelled; }

Status Validate(const BootstrapRequest& request) {
  RETURN_IF_ERROR(CheckCommon(request.changefeed_id, request.from));
  RETURN_IF_ERROR(CheckTriggerId(request.table_trigger_id, "table trigger"));
  RETURN_IF_ERROR(CheckTriggerId(request.redo_trigger_id, "redo trigger"));
  RETURN_IF_ERROR(CheckTriggerId(request.replace_trigger_id, "replaced table trigger"));
  RETURN_IF_ERROR(CheckTriggerId(request.replace_redo_trigger_id, "replaced redo trigger"));
  if (request.redo_trigger_id.has_value() && !request.redo_enabled) {
    return InvalidArgument("redo trigger dispatcher named but redo is disabled");
  }
  return Status::Ok();
}

Status Validate(const PostBootstrapRequest& request) {
  RETURN_IF_ERROR(CheckCommon(request.changefeed_id, request.from));
  if (request.table_trigger_id.IsZero()) {
    return InvalidArgument("post-bootstrap without table trigger dispatcher id");
  }
  return Status::Ok();
}

Status Validate(const ScheduleRequest& request) {
  RETURN_IF_ERROR(CheckCommon(request.changefeed_id, request.from));
  if (request.config.id.IsZero()) return InvalidArgument("schedule without dispatcher id");
  if (request.action != ScheduleAction::kCreate && request.action != ScheduleAction::kRemove) {
    return InvalidArgument("schedule with unknown action");
  }
  return Status::Ok();
}

Status Validate(const CloseRequest& request) {
  return CheckCommon(request.changefeed_id, request.from);
}

std::string IdString(DispatcherId id) {
  std::ostringstream out;
  out << id;
  return out.str();
}

}  // namespace sluice::dispatchermanager
