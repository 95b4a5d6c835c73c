#include "node/maintainer_host.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "common/logging.h"
#include "common/tso.h"
#include "messaging/message.h"
#include "node/node_control.h"
#include "node/wire.h"

namespace sluice::node {

namespace dm = dispatchermanager;

// Sends one maintainer's requests through the MessageCenter to the
// dispatcher-manager topic of their node. Events: a request lost to a full
// queue is resent by the maintainer, and sending never blocks its thread.
class MaintainerHost::Outbox final : public maintainer::MaintainerOutbox {
 public:
  explicit Outbox(messaging::MessageCenter* center) : center_(center) {}

  void Send(const NodeId& to, const dm::BootstrapRequest& r) override {
    Emit<pb::MaintainerBootstrapRequest>(to, r);
  }
  void Send(const NodeId& to, const dm::PostBootstrapRequest& r) override {
    Emit<pb::MaintainerPostBootstrapRequest>(to, r);
  }
  void Send(const NodeId& to, const dm::ScheduleRequest& r) override {
    Emit<pb::ScheduleDispatcherRequest>(to, r);
  }
  void Send(const NodeId& to, const dm::CloseRequest& r) override {
    Emit<pb::MaintainerCloseRequest>(to, r);
  }
  void Send(const NodeId& to, const maintainer::BarrierActionRequest& r) override {
    Emit<pb::HeartBeatResponse>(to, r);
  }

 private:
  template <typename Pb, typename Request>
  void Emit(const NodeId& to, const Request& request) {
    Pb payload;
    ToProto(request, &payload);
    messaging::TargetMessage msg =
        messaging::MakeMessage(to, kDispatcherManagerTopic, std::move(payload));
    msg.epoch = request.epoch;
    if (Status s = center_->SendEvent(std::move(msg)); !s.ok()) {
      LOG_DEBUG("maintainer request not sent; changefeed={} to={} error={}", request.changefeed_id,
                to.value(), s.ToString());
    }
  }

  messaging::MessageCenter* const center_;
};

MaintainerHost::MaintainerHost(MaintainerHostOptions options)
    : options_(std::move(options)),
      checkpoint_gauge_(options_.metrics->AddGaugeFamily(
          "ticdc_owner_checkpoint_ts", "The changefeed checkpoint ts (physical ms).",
          {"namespace", "changefeed"})),
      lag_gauge_(options_.metrics->AddGaugeFamily(
          "ticdc_owner_checkpoint_ts_lag",
          "How far the changefeed checkpoint is behind the wall clock, in seconds.",
          {"namespace", "changefeed"})),
      maintainers_gauge_(
          options_.metrics->AddGauge("sluice_maintainers", "Maintainers hosted on this node.")) {}

MaintainerHost::~MaintainerHost() { Stop(); }

Status MaintainerHost::Start() {
  RETURN_IF_ERROR(options_.center->RegisterHandler(
      kMaintainerManagerTopic,
      [this](const messaging::TargetMessage& msg) { return Handle(msg); }));
  host_thread_.Start("maint-host", [this](const StopToken& token) { HostLoop(token); });
  delivery_thread_.Start("maint-deliver", [this](const StopToken& token) { DeliveryLoop(token); });
  return Status::Ok();
}

void MaintainerHost::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    cv_.SignalAll();
  }
  options_.center->DeregisterHandler(kMaintainerManagerTopic);
  host_thread_.Stop();
  delivery_thread_.Stop();
  // The threads are joined: apply what the last heartbeats brought and
  // report the last checkpoints from here.
  if (!fenced()) RunTasks();
  for (auto& [cf, h] : hosted_) {
    if (h.maintainer == nullptr || h.closing || fenced()) continue;
    h.maintainer->Tick(options_.clock->Now());
    Report(cf, &h);
  }
  hosted_.clear();
  MutexLock lock(&mu_);
  tasks_.clear();
  deliveries_.clear();
}

Status MaintainerHost::AddMaintainer(const NodeId& node,
                                     const coordinator::AddMaintainerRequest& request) {
  if (node != options_.self) return Unavailable("node " + node.value() + " is not this node");
  Post([this, request] {
    Hosted& h = hosted_[request.id.ToString()];
    if (h.maintainer != nullptr) {
      if (!h.closing) h.maintainer->Close(false);
      h.closing = true;
      h.next = request;  // Started once the old generation has closed.
      return;
    }
    Hosted fresh;
    fresh.request = request;
    h = std::move(fresh);
    TryCreate(&h);
  });
  return Status::Ok();
}

Status MaintainerHost::MoveTable(const NodeId& node, const coordinator::MoveTableRequest& request) {
  if (node != options_.self) return Unavailable("node " + node.value() + " is not this node");
  struct Answer {
    Mutex mu;
    CondVar cv;
    std::optional<Status> status GUARDED_BY(mu);
  };
  auto answer = std::make_shared<Answer>();
  Post([this, request, answer] {
    Hosted* h = Find(request.id.ToString(), request.epoch);
    Status st = h == nullptr || h->maintainer == nullptr || h->closing
                    ? Unavailable("the maintainer of changefeed " + request.id.ToString() +
                                  " is not running on this node")
                    : h->maintainer->MoveTable(request.table_id, request.target);
    MutexLock lock(&answer->mu);
    answer->status = std::move(st);
    answer->cv.SignalAll();
  });
  const auto deadline = std::chrono::steady_clock::now() + options_.move_timeout;
  MutexLock lock(&answer->mu);
  while (!answer->status.has_value()) {
    if (answer->cv.WaitUntil(&answer->mu, deadline) && !answer->status.has_value()) {
      return Timeout("the maintainer did not answer the move in time");
    }
  }
  return *answer->status;
}

Status MaintainerHost::RemoveMaintainer(const NodeId& node,
                                        const coordinator::RemoveMaintainerRequest& request) {
  if (node != options_.self) return Unavailable("node " + node.value() + " is not this node");
  Post([this, request] {
    auto it = hosted_.find(request.id.ToString());
    if (it == hosted_.end()) return;
    Hosted& h = it->second;
    if (h.next.has_value() && h.next->epoch == request.epoch) {
      h.next.reset();
      return;
    }
    if (h.request.epoch != request.epoch) return;
    if (h.maintainer == nullptr) {
      hosted_.erase(it);
      return;
    }
    h.closing = true;
    h.maintainer->Close(request.removed || request.cascade);
  });
  return Status::Ok();
}

Status MaintainerHost::Handle(const messaging::TargetMessage& msg) {
  if (fenced()) return Status::Ok();  // Dropped: this node no longer acts.
  switch (msg.type) {
    case messaging::MessageType::kMaintainerBootstrapResponse:
      return Route<pb::MaintainerBootstrapResponse>(msg,
                                                    &maintainer::Maintainer::OnBootstrapResponse);
    case messaging::MessageType::kMaintainerPostBootstrapResponse:
      return Route<pb::MaintainerPostBootstrapResponse>(
          msg, &maintainer::Maintainer::OnPostBootstrapResponse);
    case messaging::MessageType::kScheduleDispatcherResponse:
      return Route<pb::ScheduleDispatcherResponse>(msg,
                                                   &maintainer::Maintainer::OnScheduleResponse);
    case messaging::MessageType::kMaintainerCloseResponse:
      return Route<pb::MaintainerCloseResponse>(msg, &maintainer::Maintainer::OnCloseResponse);
    case messaging::MessageType::kHeartBeatRequest: {
      const auto* payload = msg.As<pb::HeartBeatRequest>();
      if (payload == nullptr) return InvalidArgument("heartbeat payload missing");
      ASSIGN_OR_RETURN(maintainer::HeartbeatRequest hb, FromProto(*payload));
      Post([this, from = msg.from, epoch = msg.epoch, hb = std::move(hb)] {
        Hosted* h = Find(hb.changefeed_id, epoch);
        if (h != nullptr && h->maintainer != nullptr && !h->closing) {
          h->maintainer->OnHeartbeat(from, hb);
          if (h->remote_error.ok() && !hb.error.ok() && from != options_.self) {
            h->remote_error = hb.error.WithContext("node " + from.value());
          }
        }
      });
      return Status::Ok();
    }
    case messaging::MessageType::kBlockStatusRequest: {
      const auto* payload = msg.As<pb::BlockStatusRequest>();
      if (payload == nullptr) return InvalidArgument("block status payload missing");
      ASSIGN_OR_RETURN(BlockStatusBatch batch, FromProto(*payload));
      Post([this, from = msg.from, epoch = msg.epoch, batch = std::move(batch)] {
        Hosted* h = Find(batch.changefeed_id, epoch);
        if (h == nullptr || h->maintainer == nullptr || h->closing) return;
        for (const maintainer::BlockReport& r : batch.reports)
          h->maintainer->OnBlockStatus(from, r);
      });
      return Status::Ok();
    }
    default:
      return InvalidArgument("unexpected message on the maintainer-manager topic: " +
                             msg.HeaderString());
  }
}

template <typename Pb, typename Apply>
Status MaintainerHost::Route(const messaging::TargetMessage& msg, Apply apply) {
  const Pb* payload = msg.As<Pb>();
  if (payload == nullptr) return InvalidArgument("payload does not match " + msg.HeaderString());
  auto response = FromProto(*payload);
  RETURN_IF_ERROR(response.status());
  Post([this, from = msg.from, r = std::move(response).value(), apply] {
    Hosted* h = Find(r.changefeed_id, r.epoch);
    if (h != nullptr && h->maintainer != nullptr) std::invoke(apply, h->maintainer.get(), from, r);
  });
  return Status::Ok();
}

void MaintainerHost::Post(Task task) {
  MutexLock lock(&mu_);
  if (stopped_) return;
  tasks_.push_back(std::move(task));
  cv_.SignalAll();
}

void MaintainerHost::Deliver(Task task) {
  MutexLock lock(&mu_);
  if (stopped_) return;
  deliveries_.push_back(std::move(task));
  cv_.SignalAll();
}

MaintainerHost::Hosted* MaintainerHost::Find(const std::string& changefeed, MaintainerEpoch epoch) {
  auto it = hosted_.find(changefeed);
  if (it == hosted_.end() || it->second.request.epoch != epoch) return nullptr;
  return &it->second;
}

void MaintainerHost::TryCreate(Hosted* h) {
  // A failed start is reported; the coordinator retries with a new
  // generation after its backoff.
  if (!h->start_error.ok()) return;
  const coordinator::AddMaintainerRequest& r = h->request;
  if (h->path == nullptr) {
    // Opening connects to the sink and may block: not on this thread.
    if (!h->opening) {
      h->opening = true;
      Deliver([this, r] {
        auto path = std::make_shared<Result<std::shared_ptr<ChangefeedPath>>>(
            options_.registry->Acquire(r.info, r.epoch, r.checkpoint_ts));
        Post([this, r, path] {
          Hosted* opened = Find(r.id.ToString(), r.epoch);
          if (opened == nullptr) return;  // Removed meanwhile: the path closes.
          opened->opening = false;
          if (!path->ok()) {
            opened->start_error = path->status();
            return;
          }
          opened->path = std::move(*path).value();
          TryCreate(opened);
        });
      });
    }
    return;
  }
  Result<std::vector<event::TableRef>> tables = h->path->TablesAt(r.checkpoint_ts);
  if (!tables.ok()) {
    if (tables.status().code() != Code::kUnavailable) h->start_error = tables.status();
    return;  // The schema store has not reached the checkpoint yet.
  }
  h->outbox = std::make_unique<Outbox>(options_.center);
  maintainer::MaintainerOptions o;
  o.changefeed_id = r.id.ToString();
  o.self = options_.self;
  o.epoch = r.epoch;
  o.checkpoint_ts = r.checkpoint_ts;
  o.is_new_changefeed = r.is_new_changefeed;
  o.tables = std::move(tables).value();
  o.tables_at = [path = h->path](Ts ts) { return path->TablesAt(ts); };
  o.ignore_table = [path = h->path](const event::TableRef& t) { return path->IgnoresTable(t); };
  o.nodes.assign(nodes_.begin(), nodes_.end());
  if (o.nodes.empty()) o.nodes = {options_.self};
  o.clock = options_.clock;
  o.outbox = h->outbox.get();
  Result<std::unique_ptr<maintainer::Maintainer>> m = maintainer::Maintainer::Create(std::move(o));
  if (!m.ok()) {
    h->start_error = m.status();
    return;
  }
  h->maintainer = std::move(m).value();
  h->maintainer->Start();
}

void MaintainerHost::Report(const std::string& changefeed, Hosted* h) {
  if (statuses_ == nullptr) return;
  coordinator::MaintainerStatus s;
  s.id = h->request.id;
  s.epoch = h->request.epoch;
  s.checkpoint_ts = h->request.checkpoint_ts;
  if (h->maintainer != nullptr) {
    s.checkpoint_ts = std::max(s.checkpoint_ts, h->maintainer->checkpoint());
    s.bootstrap_done = h->maintainer->bootstrapped();
    s.error = h->maintainer->status();
  }
  if (s.error.ok()) s.error = h->start_error;
  if (s.error.ok()) s.error = h->remote_error;
  if (s.error.ok() && h->path != nullptr) s.error = h->path->error();
  Export(s);
  statuses_->OnMaintainerStatus(options_.self, s);
}

void MaintainerHost::Export(const coordinator::MaintainerStatus& status) {
  const std::vector<std::string> labels = {status.id.ns, status.id.name};
  const int64_t physical = tso::Physical(status.checkpoint_ts);
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             options_.clock->WallNow().time_since_epoch())
                             .count();
  checkpoint_gauge_->WithLabels(labels)->Set(static_cast<double>(physical));
  lag_gauge_->WithLabels(labels)->Set(std::max<int64_t>(now_ms - physical, 0) / 1000.0);
}

void MaintainerHost::RunTasks() {
  std::deque<Task> tasks;
  {
    MutexLock lock(&mu_);
    tasks.swap(tasks_);
  }
  for (Task& t : tasks) t();
}

void MaintainerHost::SyncNodes() {
  std::set<NodeId> now = {options_.self};
  if (options_.alive_nodes) {
    for (NodeId& n : options_.alive_nodes()) now.insert(std::move(n));
  }
  if (now == nodes_) return;
  std::vector<NodeId> joined;
  std::vector<NodeId> left;
  std::set_difference(now.begin(), now.end(), nodes_.begin(), nodes_.end(),
                      std::back_inserter(joined));
  std::set_difference(nodes_.begin(), nodes_.end(), now.begin(), now.end(),
                      std::back_inserter(left));
  for (const NodeId& n : joined) LOG_INFO("maintainer host: node {} joined", n.value());
  for (const NodeId& n : left) LOG_INFO("maintainer host: node {} left", n.value());
  for (auto& [changefeed, h] : hosted_) {
    if (h.maintainer == nullptr || h.closing) continue;
    for (const NodeId& n : joined) h.maintainer->OnNodeAdded(n);
    for (const NodeId& n : left) h.maintainer->OnNodeRemoved(n);
  }
  nodes_ = std::move(now);
}

void MaintainerHost::RunOnce() {
  if (fenced()) return;
  SyncNodes();
  RunTasks();
  maintainers_gauge_->Set(static_cast<double>(hosted_.size()));
  const Clock::TimePoint now = options_.clock->Now();
  for (auto it = hosted_.begin(); it != hosted_.end();) {
    Hosted& h = it->second;
    if (h.maintainer == nullptr) TryCreate(&h);
    if (h.maintainer != nullptr) {
      h.maintainer->Tick(now);
      if (h.closing && h.maintainer->closed()) {
        checkpoint_gauge_->Remove({h.request.id.ns, h.request.id.name});
        lag_gauge_->Remove({h.request.id.ns, h.request.id.name});
        if (!h.next.has_value()) {
          it = hosted_.erase(it);
          continue;
        }
        Hosted fresh;
        fresh.request = std::move(*h.next);
        h = std::move(fresh);
        TryCreate(&h);
        ++it;
        continue;
      }
      for (const std::shared_ptr<ChangefeedPath>& p : options_.registry->PathsOf(it->first)) {
        p->UpdateCheckpoints(h.maintainer->checkpoint());
      }
    }
    if (!h.closing) Report(it->first, &h);
    ++it;
  }
}

void MaintainerHost::HostLoop(const StopToken& token) {
  while (!token.cancelled()) {
    RunOnce();
    MutexLock lock(&mu_);
    if (stopped_) return;
    if (tasks_.empty()) {
      cv_.WaitUntil(&mu_, std::chrono::steady_clock::now() + options_.tick_interval);
    }
  }
}

void MaintainerHost::DeliveryLoop(const StopToken& token) {
  while (!token.cancelled()) {
    Task task;
    {
      MutexLock lock(&mu_);
      while (deliveries_.empty() && !stopped_) {
        cv_.WaitUntil(&mu_, std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
        if (token.cancelled()) return;
      }
      if (stopped_) return;
      task = std::move(deliveries_.front());
      deliveries_.pop_front();
    }
    task();
  }
}

}  // namespace sluice::node
