// The wire form of the control plane: adapters between the plain C++
// messages of the dispatcher managers, the maintainers and the coordinator
// and the messages of proto/sluice_heartbeat.proto (package
// sluice.heartbeatpb), so that they travel between nodes through the
// MessageCenter.
//
// Promises:
//  * ToProto never fails; it overwrites every field of `out` it maps (other
//    fields of `out` are left as they are, so callers pass a fresh message).
//  * FromProto(ToProto(x)) == x for every value the C++ side can hold, also
//    after serializing and parsing the proto.
//  * FromProto treats its input as untrusted: it never aborts or throws, and
//    returns kInvalidArgument for a missing required field (changefeed id,
//    sender node, dispatcher id, a zero epoch where one is required) or a
//    span whose end is not after its start, and kCorruption for an enum
//    value or status code it does not know. The message names the field,
//    e.g. "MaintainerBootstrapRequest.sender_node_id: missing".
//  * Every request keeps its (changefeed id, sender node, epoch). A Status
//    travels as a RunningError: `status_code` is its numeric Code (decoded
//    with a range check), `code` its CodeName and `message` its message; an
//    OK status is an absent RunningError.
//  * Changefeed ids: a dispatcher manager's "ns/name" string travels as
//    ChangefeedID{keyspace: ns, name: name} (a string without a '/' inside
//    travels as the name alone); meta::ChangefeedId maps field by field.
//  * Epochs: the coordinator's requests and the maintainer statuses require
//    a non-zero epoch (the coordinator persists one before it sends);
//    maintainer <-> dispatcher manager messages allow 0 (pre-epoch peers).
//
// Threads: plain functions over values; thread-safe.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "coordinator/interfaces.h"
#include "dispatchermanager/messages.h"
#include "maintainer/messages.h"
#include "sluice_heartbeat.pb.h"

namespace sluice::node {

namespace pb = ::sluice::heartbeatpb;

// A message whose C++ struct does not name its sender, with the sender.
template <typename T>
struct FromNode {
  NodeId from;
  T message;
};

// --- Status -----------------------------------------------------------------

// A non-OK status as a RunningError (`node` is left empty). Do not call with
// an OK status: an OK status is encoded by leaving the RunningError unset.
void ToProto(const Status& status, pb::RunningError* out);
// Writes the decoded (non-OK) status to `*out`; returns the decode error.
Status FromProto(const pb::RunningError& in, Status* out);

// --- Shared shapes ------------------------------------------------------------

void ToProto(const dispatchermanager::DispatcherConfig& in, pb::DispatcherConfig* out);
Result<dispatchermanager::DispatcherConfig> FromProto(const pb::DispatcherConfig& in);

void ToProto(const dispatchermanager::DispatcherStatus& in, pb::BootstrapTableSpan* out);
Result<dispatchermanager::DispatcherStatus> FromProto(const pb::BootstrapTableSpan& in);

void ToProto(const dispatchermanager::SchemaInfo& in, pb::SchemaInfo* out);
Result<dispatchermanager::SchemaInfo> FromProto(const pb::SchemaInfo& in);

// --- Maintainer <-> dispatcher manager ---------------------------------------

void ToProto(const dispatchermanager::BootstrapRequest& in, pb::MaintainerBootstrapRequest* out);
Result<dispatchermanager::BootstrapRequest> FromProto(const pb::MaintainerBootstrapRequest& in);

void ToProto(const dispatchermanager::BootstrapResponse& in, pb::MaintainerBootstrapResponse* out);
Result<dispatchermanager::BootstrapResponse> FromProto(const pb::MaintainerBootstrapResponse& in);

void ToProto(const dispatchermanager::PostBootstrapRequest& in,
             pb::MaintainerPostBootstrapRequest* out);
Result<dispatchermanager::PostBootstrapRequest> FromProto(
    const pb::MaintainerPostBootstrapRequest& in);

void ToProto(const dispatchermanager::PostBootstrapResponse& in,
             pb::MaintainerPostBootstrapResponse* out);
Result<dispatchermanager::PostBootstrapResponse> FromProto(
    const pb::MaintainerPostBootstrapResponse& in);

void ToProto(const dispatchermanager::ScheduleRequest& in, pb::ScheduleDispatcherRequest* out);
Result<dispatchermanager::ScheduleRequest> FromProto(const pb::ScheduleDispatcherRequest& in);

void ToProto(const dispatchermanager::ScheduleResponse& in, pb::ScheduleDispatcherResponse* out);
Result<dispatchermanager::ScheduleResponse> FromProto(const pb::ScheduleDispatcherResponse& in);

void ToProto(const dispatchermanager::CloseRequest& in, pb::MaintainerCloseRequest* out);
Result<dispatchermanager::CloseRequest> FromProto(const pb::MaintainerCloseRequest& in);

void ToProto(const dispatchermanager::CloseResponse& in, pb::MaintainerCloseResponse* out);
Result<dispatchermanager::CloseResponse> FromProto(const pb::MaintainerCloseResponse& in);

// --- Dispatcher manager -> maintainer: heartbeats and block reports ----------

void ToProto(const maintainer::Watermark& in, pb::Watermark* out);
Result<maintainer::Watermark> FromProto(const pb::Watermark& in);

void ToProto(const maintainer::SpanStatus& in, pb::TableSpanStatus* out);
Result<maintainer::SpanStatus> FromProto(const pb::TableSpanStatus& in);

// `watermark` travels only when present.
void ToProto(const maintainer::HeartbeatRequest& in, pb::HeartBeatRequest* out);
Result<maintainer::HeartbeatRequest> FromProto(const pb::HeartBeatRequest& in);

// Tables to drop travel as a NORMAL InfluencedTables; the stage WRITING has
// no C++ counterpart and is rejected.
void ToProto(const maintainer::BlockReport& in, pb::TableSpanBlockStatus* out);
Result<maintainer::BlockReport> FromProto(const pb::TableSpanBlockStatus& in);

// --- Maintainer -> dispatcher manager: barrier actions ------------------------

// A HeartBeatResponse with exactly one DispatcherStatus: NORMAL influence
// over `dispatchers` and the action at (block_ts, is_syncpoint). Decoding
// rejects any other shape.
// The block statuses of one changefeed's dispatchers on a node.
struct BlockStatusBatch {
  std::string changefeed_id;
  std::vector<maintainer::BlockReport> reports;
};
void ToProto(const BlockStatusBatch& in, pb::BlockStatusRequest* out);
Result<BlockStatusBatch> FromProto(const pb::BlockStatusRequest& in);

void ToProto(const maintainer::BarrierActionRequest& in, pb::HeartBeatResponse* out);
Result<maintainer::BarrierActionRequest> FromProto(const pb::HeartBeatResponse& in);

// --- Coordinator <-> maintainer manager ---------------------------------------

// `info` travels as its metastore JSON in `changefeed_info` (and its config
// in `config`); decoding checks that it names the same changefeed as `id`.
void ToProto(const NodeId& from, const coordinator::AddMaintainerRequest& in,
             pb::AddMaintainerRequest* out);
Result<FromNode<coordinator::AddMaintainerRequest>> FromProto(const pb::AddMaintainerRequest& in);

void ToProto(const NodeId& from, const coordinator::RemoveMaintainerRequest& in,
             pb::RemoveMaintainerRequest* out);
Result<FromNode<coordinator::RemoveMaintainerRequest>> FromProto(
    const pb::RemoveMaintainerRequest& in);

// A non-OK `error` is the first (only) entry of `err`; extra entries are
// ignored on decode.
void ToProto(const coordinator::MaintainerStatus& in, pb::MaintainerStatus* out);
Result<coordinator::MaintainerStatus> FromProto(const pb::MaintainerStatus& in);

void ToProto(const NodeId& from, std::span<const coordinator::MaintainerStatus> statuses,
             pb::MaintainerHeartbeat* out);
Result<FromNode<std::vector<coordinator::MaintainerStatus>>> FromProto(
    const pb::MaintainerHeartbeat& in);

}  // namespace sluice::node
