#include "node/node_control.h"

#include <algorithm>

#include "common/logging.h"
#include "messaging/message.h"
#include "meta/model.h"
#include "node/wire.h"

namespace sluice::node {

namespace dm = dispatchermanager;
using messaging::MessageType;
using messaging::TargetMessage;

namespace {

// The payload of `msg` as T decoded into its C++ struct.
template <typename T>
auto Decode(const TargetMessage& msg) -> decltype(FromProto(std::declval<const T&>())) {
  const T* payload = msg.As<T>();
  if (payload == nullptr) return InvalidArgument("payload does not match the message type");
  return FromProto(*payload);
}

}  // namespace

NodeControl::NodeControl(NodeControlOptions options)
    : options_(std::move(options)),
      dispatchers_gauge_(Registry::Default()->AddGaugeFamily(
          "sluice_table_dispatchers", "Working table dispatchers of the changefeed on this node",
          {"namespace", "changefeed"})) {}

NodeControl::~NodeControl() { Stop(); }

Status NodeControl::Start() {
  RETURN_IF_ERROR(options_.center->RegisterHandler(
      kDispatcherManagerTopic, [this](const TargetMessage& msg) { return Handle(msg); }));
  started_ = true;
  heartbeat_thread_.Start("dm-heartbeat", [this](const StopToken& token) {
    while (!token.cancelled()) {
      SendHeartbeats();
      options_.clock->SleepFor(options_.heartbeat_interval, token);
    }
  });
  return Status::Ok();
}

void NodeControl::Stop() {
  {
    // No block status is forwarded from now on, and none is still being
    // forwarded when this returns: the orchestrator may go after it.
    MutexLock lock(&gate_mu_);
    accepting_ = false;
    while (forwarding_ > 0) gate_cv_.Wait(&gate_mu_);
  }
  heartbeat_thread_.Stop();
  if (started_) options_.center->DeregisterHandler(kDispatcherManagerTopic);
  started_ = false;
}

template <typename Pb, typename Response>
Status NodeControl::Answer(const TargetMessage& request, const std::optional<Response>& response) {
  if (!response.has_value()) return Status::Ok();  // Write path closed: no answer.
  Pb payload;
  ToProto(*response, &payload);
  return options_.center->SendCommand(
      messaging::MakeMessage(request.from, kMaintainerManagerTopic, std::move(payload)));
}

Status NodeControl::Handle(const TargetMessage& msg) {
  dm::DispatcherOrchestrator* orch = options_.orchestrator;
  switch (msg.type) {
    case MessageType::kMaintainerBootstrapRequest: {
      ASSIGN_OR_RETURN(dm::BootstrapRequest r, Decode<pb::MaintainerBootstrapRequest>(msg));
      return Answer<pb::MaintainerBootstrapResponse>(msg, orch->HandleBootstrap(r));
    }
    case MessageType::kMaintainerPostBootstrapRequest: {
      ASSIGN_OR_RETURN(dm::PostBootstrapRequest r, Decode<pb::MaintainerPostBootstrapRequest>(msg));
      return Answer<pb::MaintainerPostBootstrapResponse>(msg, orch->HandlePostBootstrap(r));
    }
    case MessageType::kScheduleDispatcherRequest: {
      ASSIGN_OR_RETURN(dm::ScheduleRequest r, Decode<pb::ScheduleDispatcherRequest>(msg));
      return Answer<pb::ScheduleDispatcherResponse>(msg, orch->HandleSchedule(r));
    }
    case MessageType::kMaintainerCloseRequest: {
      ASSIGN_OR_RETURN(dm::CloseRequest r, Decode<pb::MaintainerCloseRequest>(msg));
      return Answer<pb::MaintainerCloseResponse>(msg, orch->HandleClose(r));
    }
    case MessageType::kHeartBeatResponse:
      return HandleBarrierAction(msg);
    default:
      return InvalidArgument("unexpected message on the dispatcher-manager topic: " +
                             msg.HeaderString());
  }
}

Status NodeControl::HandleBarrierAction(const TargetMessage& msg) {
  ASSIGN_OR_RETURN(maintainer::BarrierActionRequest r, Decode<pb::HeartBeatResponse>(msg));
  std::shared_ptr<dm::DispatcherManager> manager = options_.orchestrator->manager(r.changefeed_id);
  // Fenced like every other request: only the manager's owner acts.
  if (manager == nullptr || manager->epoch() != r.epoch || manager->owner() != r.from) {
    return Status::Ok();
  }
  for (const std::shared_ptr<ChangefeedPath>& path : options_.registry->PathsOf(r.changefeed_id)) {
    for (DispatcherId id : r.dispatchers) {
      if (auto d = path->Find(id)) d->HandleBarrierAction(r.block_ts, r.action);
    }
  }
  return Status::Ok();
}

void NodeControl::SendHeartbeats() {
  std::map<std::string, size_t> table_dispatchers;  // By changefeed.
  for (const std::shared_ptr<dm::DispatcherManager>& m : options_.orchestrator->managers()) {
    const NodeId owner = m->owner();
    if (owner.empty()) continue;
    maintainer::HeartbeatRequest hb;
    hb.changefeed_id = m->changefeed_id();
    std::set<DispatcherId> ids;
    std::optional<Ts> min;
    size_t& working_tables = table_dispatchers[hb.changefeed_id];
    for (const dm::DispatcherStatus& s : m->CollectStatuses()) {
      hb.statuses.push_back({s.config.id, s.state, s.checkpoint_ts});
      ids.insert(s.config.id);
      if (s.config.table_id.value() != 0 && s.state == dm::ComponentState::kWorking) {
        ++working_tables;
      }
      if (s.state != dm::ComponentState::kStopped) {
        min = min.has_value() ? std::min(*min, s.checkpoint_ts) : s.checkpoint_ts;
      }
    }
    ResendPendingBlocks(*m);
    // A maintainer on another node does not reach this node's paths: their
    // upkeep (the event stores' GC, a failed sink failing its dispatchers)
    // is done here, and their first error goes to the maintainer. The own
    // node's maintainer host does both for its paths.
    if (owner != options_.center->self()) {
      for (const std::shared_ptr<ChangefeedPath>& path :
           options_.registry->PathsOf(hb.changefeed_id)) {
        path->UpdateCheckpoints(Ts());
        if (hb.error.ok()) hb.error = path->error();
      }
    }
    uint64_t seq = 0;
    {
      MutexLock lock(&mu_);
      Seq& s = seqs_[hb.changefeed_id];
      if (ids != s.ids) {
        s.ids = std::move(ids);
        ++s.seq;
      }
      seq = s.seq;
    }
    if (min.has_value()) hb.watermark = maintainer::Watermark{*min, *min, seq};
    pb::HeartBeatRequest payload;
    ToProto(hb, &payload);
    TargetMessage msg = messaging::MakeMessage(owner, kMaintainerManagerTopic, std::move(payload));
    msg.epoch = m->epoch();  // The generation the statuses are for.
    if (Status s = options_.center->SendEvent(std::move(msg)); !s.ok()) {
      LOG_DEBUG("heartbeat not sent; changefeed={} error={}", hb.changefeed_id, s.ToString());
    }
  }
  ExportDispatchers(table_dispatchers);
}

void NodeControl::ExportDispatchers(const std::map<std::string, size_t>& counts) {
  auto labels = [](const std::string& changefeed) -> std::vector<std::string> {
    Result<meta::ChangefeedId> id = meta::ChangefeedId::Parse(changefeed);
    if (!id.ok()) return {"", changefeed};
    return {id->ns, id->name};
  };
  MutexLock lock(&mu_);
  for (const std::string& gone : exported_) {
    if (counts.count(gone) == 0) dispatchers_gauge_->Remove(labels(gone));
  }
  exported_.clear();
  for (const auto& [changefeed, n] : counts) {
    dispatchers_gauge_->WithLabels(labels(changefeed))->Set(static_cast<double>(n));
    exported_.insert(changefeed);
  }
}

void NodeControl::ResendPendingBlocks(const dm::DispatcherManager& manager) {
  const Clock::TimePoint now = options_.clock->Now();
  {
    MutexLock lock(&mu_);
    Seq& s = seqs_[manager.changefeed_id()];
    if (now - s.last_resend < options_.block_resend_interval) return;
    s.last_resend = now;
  }
  BlockStatusBatch batch{manager.changefeed_id(), {}};
  for (const dispatcher::BlockStatus& s : manager.PendingBlockStatuses()) {
    batch.reports.push_back(maintainer::ToBlockReport(s));
  }
  if (batch.reports.empty()) return;
  pb::BlockStatusRequest payload;
  ToProto(batch, &payload);
  TargetMessage msg =
      messaging::MakeMessage(manager.owner(), kMaintainerManagerTopic, std::move(payload));
  msg.epoch = manager.epoch();
  if (Status s = options_.center->SendCommand(std::move(msg)); !s.ok()) {
    LOG_DEBUG("block statuses not resent; changefeed={} error={}", manager.changefeed_id(),
              s.ToString());
  }
}

void NodeControl::OnBlockStatus(const std::string& changefeed,
                                const dispatcher::BlockStatus& status) {
  {
    MutexLock lock(&gate_mu_);
    if (!accepting_) return;
    ++forwarding_;
  }
  Forward(changefeed, status);
  MutexLock lock(&gate_mu_);
  if (--forwarding_ == 0) gate_cv_.SignalAll();
}

void NodeControl::Forward(const std::string& changefeed, const dispatcher::BlockStatus& status) {
  std::shared_ptr<dm::DispatcherManager> m = options_.orchestrator->manager(changefeed);
  if (m == nullptr || m->owner().empty()) return;  // The new owner's bootstrap collects it.
  BlockStatusBatch batch{changefeed, {maintainer::ToBlockReport(status)}};
  pb::BlockStatusRequest payload;
  ToProto(batch, &payload);
  TargetMessage msg =
      messaging::MakeMessage(m->owner(), kMaintainerManagerTopic, std::move(payload));
  msg.epoch = m->epoch();
  if (Status s = options_.center->SendCommand(std::move(msg)); !s.ok()) {
    LOG_WARN("block status not sent; changefeed={} error={}", changefeed, s.ToString());
  }
}

}  // namespace sluice::node
