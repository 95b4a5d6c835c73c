// The control messages a maintainer exchanges with the dispatcher manager of
// one changefeed on this node, as plain C++ values. They mirror TiCDC's
// heartbeatpb messages (MaintainerBootstrapRequest, ScheduleDispatcherRequest,
// ...); an adapter maps the wire messages onto them, so nothing here depends
// on protobuf. Every request carries the sender's (node, maintainer epoch):
// the epoch fence of MaintainerFence decides from that pair alone.
//
// Value types with no threading concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"

namespace sluice::dispatchermanager {

// Normal dispatchers write to the changefeed's sink; redo dispatchers write
// the redo log (consistent.level = eventual).
enum class DispatcherMode : uint8_t { kDefault, kRedo };
std::string_view ModeName(DispatcherMode mode);

// The subset of TiCDC's ComponentState a dispatcher reports here.
enum class ComponentState : uint8_t { kWorking, kStopping, kStopped };
std::string_view StateName(ComponentState state);

enum class ScheduleAction : uint8_t { kCreate, kRemove };

// What a dispatcher is created with.
struct DispatcherConfig {
  DispatcherId id;
  TableId table_id;
  int64_t schema_id = 0;
  Span span;
  Ts start_ts;
  DispatcherMode mode = DispatcherMode::kDefault;
};

// The config of a table-trigger dispatcher: table 0, the whole key space.
DispatcherConfig TableTriggerConfig(DispatcherId id, DispatcherMode mode, Ts start_ts);

struct TableInfo {
  TableId id;
  std::string name;
};

struct SchemaInfo {
  int64_t id = 0;
  std::string name;
  std::vector<TableInfo> tables;
};

// Sent by a (new) maintainer to every node. The trigger ids are set only for
// the maintainer's own node, which hosts the changefeed's DDL dispatchers.
struct BootstrapRequest {
  std::string changefeed_id;
  NodeId from;
  MaintainerEpoch epoch;
  Ts start_ts;
  bool is_new_changefeed = false;
  bool redo_enabled = false;  // From the changefeed config.
  std::optional<DispatcherId> table_trigger_id;
  std::optional<DispatcherId> redo_trigger_id;
  // A newer generation's order to close the node's existing trigger
  // dispatcher of that id (which the node named when it refused an earlier
  // bootstrap) before the node is handed over; see DispatcherManager.
  std::optional<DispatcherId> replace_trigger_id;
  std::optional<DispatcherId> replace_redo_trigger_id;
};

// Create or remove one dispatcher (one operator of the maintainer).
struct ScheduleRequest {
  std::string changefeed_id;
  NodeId from;
  MaintainerEpoch epoch;
  ScheduleAction action = ScheduleAction::kCreate;
  DispatcherConfig config;
};

// One dispatcher as reported in a bootstrap snapshot or a status collection.
struct DispatcherStatus {
  DispatcherConfig config;
  ComponentState state = ComponentState::kWorking;
  Ts checkpoint_ts;
};

// A non-OK `status` means the request was refused: kStaleOwner (fenced:
// an older or foreign maintainer), kInvalidArgument (malformed request),
// kAborted (a table trigger of another owner is still present), or the error
// of the failed creation. `epoch` echoes the request.
struct BootstrapResponse {
  std::string changefeed_id;
  MaintainerEpoch epoch;
  Status status;
  std::vector<DispatcherStatus> spans;
  Ts checkpoint_ts;       // The table trigger's start ts; 0 without one.
  Ts redo_checkpoint_ts;  // The redo trigger's start ts; 0 without one.
  // In-flight operators of the current owner, and stale remove operators
  // whose dispatcher is still reported in `spans`.
  std::vector<ScheduleRequest> operators;
  // With a refusal over the trigger (kAborted): the node's trigger
  // dispatchers, so that a newer generation can order them replaced.
  std::optional<DispatcherId> existing_trigger_id;
  std::optional<DispatcherId> existing_redo_trigger_id;
};

// Sent to the maintainer's own node once every node answered the bootstrap:
// the initial schemas and tables of the table-trigger dispatchers.
struct PostBootstrapRequest {
  std::string changefeed_id;
  NodeId from;
  MaintainerEpoch epoch;
  DispatcherId table_trigger_id;
  std::vector<SchemaInfo> schemas;
  std::vector<SchemaInfo> redo_schemas;
};

struct PostBootstrapResponse {
  std::string changefeed_id;
  MaintainerEpoch epoch;
  DispatcherId table_trigger_id;
  Status status;
};

struct ScheduleResponse {
  std::string changefeed_id;
  MaintainerEpoch epoch;
  DispatcherId dispatcher_id;
  ComponentState state = ComponentState::kWorking;
  Status status;
};

// `removed`: the changefeed is removed (not paused).
struct CloseRequest {
  std::string changefeed_id;
  NodeId from;
  MaintainerEpoch epoch;
  bool removed = false;
};

// `success` false: dispatchers are still closing; the maintainer resends.
// `superseded`: the manager belongs to a newer owner and was left running;
// the stale sender is acknowledged so it can stop resending.
struct CloseResponse {
  std::string changefeed_id;
  MaintainerEpoch epoch;
  bool success = false;
  bool superseded = false;
  Status status;
};

// The write path of a manager is closed (node shutdown or local fence). In
// this module kCancelled means exactly that; it is a clean outcome, logged at
// info and never returned to the maintainer.
Status WritePathClosed(std::string message);
bool IsWritePathClosed(const Status& status);

// Checks that do not need any state: ids present, redo consistent. Returns
// kInvalidArgument naming the first problem.
Status Validate(const BootstrapRequest& request);
Status Validate(const PostBootstrapRequest& request);
Status Validate(const ScheduleRequest& request);
Status Validate(const CloseRequest& request);

// "high-low", as DispatcherId prints.
std::string IdString(DispatcherId id);

}  // namespace sluice::dispatchermanager
