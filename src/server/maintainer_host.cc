#include "server/maintainer_host.h"

#include <algorithm>

#include "common/logging.h"
#include "common/tso.h"

namespace sluice::server {

namespace dm = dispatchermanager;

// Routes one maintainer's requests through the delivery thread to the
// orchestrator and the answers back to the host thread, stamped with the
// sending generation.
class MaintainerHost::Outbox final : public maintainer::MaintainerOutbox {
 public:
  Outbox(MaintainerHost* host, std::string changefeed, MaintainerEpoch epoch)
      : host_(host), changefeed_(std::move(changefeed)), epoch_(epoch) {}

  void Send(const NodeId& to, const dm::BootstrapRequest& request) override {
    Route(
        to, request,
        [](dm::DispatcherOrchestrator* o, const auto& r) { return o->HandleBootstrap(r); },
        [](maintainer::Maintainer* m, const NodeId& n, const auto& r) {
          m->OnBootstrapResponse(n, r);
        });
  }
  void Send(const NodeId& to, const dm::PostBootstrapRequest& request) override {
    Route(
        to, request,
        [](dm::DispatcherOrchestrator* o, const auto& r) { return o->HandlePostBootstrap(r); },
        [](maintainer::Maintainer* m, const NodeId& n, const auto& r) {
          m->OnPostBootstrapResponse(n, r);
        });
  }
  void Send(const NodeId& to, const dm::ScheduleRequest& request) override {
    Route(
        to, request,
        [](dm::DispatcherOrchestrator* o, const auto& r) { return o->HandleSchedule(r); },
        [](maintainer::Maintainer* m, const NodeId& n, const auto& r) {
          m->OnScheduleResponse(n, r);
        });
  }
  void Send(const NodeId& to, const dm::CloseRequest& request) override {
    Route(
        to, request, [](dm::DispatcherOrchestrator* o, const auto& r) { return o->HandleClose(r); },
        [](maintainer::Maintainer* m, const NodeId& n, const auto& r) {
          m->OnCloseResponse(n, r);
        });
  }
  void Send(const NodeId& to, const maintainer::BarrierActionRequest& request) override {
    if (to != host_->options_.self) return;
    MaintainerHost* host = host_;
    host->Deliver([host, request] {
      std::shared_ptr<dm::DispatcherManager> manager =
          host->options_.orchestrator->manager(request.changefeed_id);
      // Fenced like every other request: only the manager's owner acts.
      if (manager == nullptr || manager->epoch() != request.epoch ||
          manager->owner() != request.from) {
        return;
      }
      for (const std::shared_ptr<ChangefeedPath>& path :
           host->options_.registry->PathsOf(request.changefeed_id)) {
        for (DispatcherId id : request.dispatchers) {
          if (auto d = path->Find(id)) d->HandleBarrierAction(request.block_ts, request.action);
        }
      }
    });
  }

 private:
  // Hands `request` to the orchestrator on the delivery thread and its
  // answer to this generation's maintainer on the host thread. Only this
  // node exists here: a request to another node is dropped and the
  // maintainer resends it (a multi-node transport delivers it). The tasks
  // hold values only, so they may outlive this outbox.
  template <typename Req, typename Handle, typename Apply>
  void Route(const NodeId& to, const Req& request, Handle handle, Apply apply) {
    if (to != host_->options_.self) return;
    MaintainerHost* host = host_;
    host->Deliver([host, cf = changefeed_, epoch = epoch_, request, handle, apply] {
      auto response = handle(host->options_.orchestrator, request);
      if (!response.has_value()) return;  // Write path closed: no answer.
      host->Post([host, cf, epoch, r = std::move(*response), apply] {
        Hosted* h = host->Find(cf, epoch);
        if (h != nullptr && h->maintainer != nullptr) {
          apply(h->maintainer.get(), host->options_.self, r);
        }
      });
    });
  }

  MaintainerHost* const host_;
  const std::string changefeed_;
  const MaintainerEpoch epoch_;
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

void MaintainerHost::Start() {
  host_thread_.Start("maint-host", [this](const StopToken& token) { HostLoop(token); });
  delivery_thread_.Start("maint-deliver", [this](const StopToken& token) { DeliveryLoop(token); });
}

void MaintainerHost::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    cv_.SignalAll();
  }
  host_thread_.Stop();
  delivery_thread_.Stop();
  // The threads are joined: report the last checkpoints from here.
  for (auto& [cf, h] : hosted_) {
    if (h.maintainer == nullptr || h.closing) continue;
    Heartbeat(cf, &h);
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

void MaintainerHost::OnBlockStatus(const std::string& changefeed,
                                   const dispatcher::BlockStatus& status) {
  Post([this, changefeed, status] {
    auto it = hosted_.find(changefeed);
    if (it != hosted_.end() && it->second.maintainer != nullptr && !it->second.closing) {
      it->second.maintainer->OnBlockStatus(options_.self, status);
    }
  });
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
  h->outbox = std::make_unique<Outbox>(this, r.id.ToString(), r.epoch);
  maintainer::MaintainerOptions o;
  o.changefeed_id = r.id.ToString();
  o.self = options_.self;
  o.epoch = r.epoch;
  o.checkpoint_ts = r.checkpoint_ts;
  o.is_new_changefeed = r.is_new_changefeed;
  o.tables = std::move(tables).value();
  o.tables_at = [path = h->path](Ts ts) { return path->TablesAt(ts); };
  o.ignore_table = [path = h->path](const event::TableRef& t) { return path->IgnoresTable(t); };
  o.nodes = {options_.self};
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

void MaintainerHost::Heartbeat(const std::string& changefeed, Hosted* h) {
  std::shared_ptr<dm::DispatcherManager> manager = options_.orchestrator->manager(changefeed);
  if (manager == nullptr) return;
  std::vector<dm::DispatcherStatus> statuses = manager->CollectStatuses();
  maintainer::HeartbeatRequest hb;
  hb.changefeed_id = changefeed;
  std::set<DispatcherId> ids;
  std::optional<Ts> min;
  for (const dm::DispatcherStatus& s : statuses) {
    hb.statuses.push_back({s.config.id, s.state, s.checkpoint_ts});
    ids.insert(s.config.id);
    if (s.state == dm::ComponentState::kWorking) {
      min = min.has_value() ? std::min(*min, s.checkpoint_ts) : s.checkpoint_ts;
    }
  }
  if (ids != h->last_ids) {
    h->last_ids = std::move(ids);
    ++h->seq;
  }
  if (min.has_value()) hb.watermark = maintainer::Watermark{*min, *min, h->seq};
  h->maintainer->OnHeartbeat(options_.self, hb);
}

void MaintainerHost::Report(const std::string& changefeed, Hosted* h) {
  if (coordinator_ == nullptr) return;
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
  if (s.error.ok() && h->path != nullptr) s.error = h->path->error();
  Export(s);
  coordinator_->OnMaintainerStatus(options_.self, s);
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

void MaintainerHost::RunOnce() {
  RunTasks();
  maintainers_gauge_->Set(static_cast<double>(hosted_.size()));
  const Clock::TimePoint now = options_.clock->Now();
  for (auto it = hosted_.begin(); it != hosted_.end();) {
    Hosted& h = it->second;
    if (h.maintainer == nullptr) TryCreate(&h);
    if (h.maintainer != nullptr) {
      if (!h.closing) Heartbeat(it->first, &h);
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

}  // namespace sluice::server
