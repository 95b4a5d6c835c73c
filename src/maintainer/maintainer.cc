#include "maintainer/maintainer.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/logging.h"

namespace sluice::maintainer {

using dispatchermanager::ComponentState;
using dispatchermanager::DispatcherConfig;
using dispatchermanager::IdString;
using dispatchermanager::ScheduleAction;

BlockReport ToBlockReport(const dispatcher::BlockStatus& status, bool is_syncpoint) {
  BlockReport r;
  r.dispatcher_id = status.dispatcher_id;
  r.block_ts = status.block_ts;
  r.is_syncpoint = is_syncpoint;
  r.stage = status.stage;
  r.blocked_tables = status.blocked_tables;
  r.tables_to_add = status.tables_to_add;
  r.tables_to_drop = status.tables_to_drop;
  return r;
}

Result<std::unique_ptr<Maintainer>> Maintainer::Create(MaintainerOptions options) {
  if (options.changefeed_id.empty() || options.self.empty()) {
    return InvalidArgument("maintainer needs a changefeed id and its node id");
  }
  if (options.clock == nullptr || options.outbox == nullptr) {
    return InvalidArgument("maintainer needs a clock and an outbox");
  }
  if (options.table_trigger_id.IsZero()) return InvalidArgument("zero table trigger id");
  std::set<int64_t> seen;
  for (const event::TableRef& t : options.tables) {
    if (t.table_id == 0 || !seen.insert(t.table_id).second) {
      return InvalidArgument("table id 0 or listed twice: " + std::to_string(t.table_id));
    }
  }
  if (std::find(options.nodes.begin(), options.nodes.end(), options.self) == options.nodes.end()) {
    options.nodes.push_back(options.self);
  }
  return std::unique_ptr<Maintainer>(new Maintainer(std::move(options)));
}

Maintainer::Maintainer(MaintainerOptions options)
    : options_(std::move(options)),
      ops_(
          &spans_,
          [this](const NodeId& to, ScheduleAction action, const DispatcherConfig& config) {
            SendSchedule(to, action, config);
          },
          options_.resend_interval),
      barrier_(&spans_,
               Barrier::Callbacks{
                   [this](const NodeId& to, const BlockEventKey& key,
                          dispatcher::BarrierAction action, const std::vector<DispatcherId>& ids) {
                     SendBarrierAction(to, key, action, ids);
                   },
                   [this](const BlockEventKey& key, const std::vector<int64_t>& drops,
                          const std::vector<event::TableRef>& adds) {
                     ApplyTableChanges(key.block_ts, drops, adds);
                   }},
               options_.resend_interval),
      start_ts_(options_.checkpoint_ts),
      checkpoint_(options_.checkpoint_ts) {
  for (const event::TableRef& t : options_.tables) {
    if (!Ignored(t)) tables_[t.table_id] = t;
  }
  for (const NodeId& n : options_.nodes) nodes_[n];
  spans_.SetTrigger(options_.table_trigger_id, options_.self);
}

void Maintainer::SendSchedule(const NodeId& to, ScheduleAction action,
                              const DispatcherConfig& config) {
  dispatchermanager::ScheduleRequest request;
  request.action = action;
  request.config = config;
  options_.outbox->Send(to, Stamped(std::move(request)));
}

void Maintainer::SendBarrierAction(const NodeId& to, const BlockEventKey& key,
                                   dispatcher::BarrierAction action,
                                   const std::vector<DispatcherId>& ids) {
  BarrierActionRequest request;
  request.block_ts = key.block_ts;
  request.is_syncpoint = key.is_syncpoint;
  request.action = action;
  request.dispatchers = ids;
  options_.outbox->Send(to, Stamped(std::move(request)));
}

DispatcherId Maintainer::NewDispatcherId() {
  // High word: this generation's epoch, so ids never collide across
  // generations; low word: a counter, skipping ids already in use.
  DispatcherId id;
  do {
    id = DispatcherId{options_.epoch.value(), next_id_++};
  } while (id == options_.table_trigger_id || spans_.Find(id) != nullptr);
  return id;
}

void Maintainer::OnNodeAdded(const NodeId& node) {
  if (!Active() || nodes_.count(node) > 0) return;
  nodes_[node];
  balance_pending_ = true;
  SendBootstrap(node, Now());
}

Status Maintainer::MoveTable(int64_t table_id, const NodeId& dest) {
  if (!Active() || !bootstrapped_) {
    return Unavailable("changefeed " + options_.changefeed_id + " is not bootstrapped yet");
  }
  const Replica* r = spans_.FindTable(table_id);
  if (r == nullptr) {
    return NotFound("table " + std::to_string(table_id) + " is not replicated by changefeed " +
                    options_.changefeed_id);
  }
  auto node = nodes_.find(dest);
  if (node == nodes_.end() || !node->second.answered) {
    return InvalidArgument("node " + dest.value() + " is not a live node of changefeed " +
                           options_.changefeed_id);
  }
  if (ops_.Has(r->id)) {
    return AlreadyExists("table " + std::to_string(table_id) + " is being scheduled already");
  }
  LOG_INFO("maintainer moves a table on request; changefeed={} table={} from={} to={}",
           options_.changefeed_id, table_id, r->node.value(), dest.value());
  return ops_.Move(r->id, dest, Now());
}

void Maintainer::OnNodeRemoved(const NodeId& node) {
  if (nodes_.erase(node) == 0) return;
  LOG_INFO("maintainer node removed; changefeed={} node={}", options_.changefeed_id, node.value());
  Clock::TimePoint now = Now();
  watermarks_.Remove(node);
  responses_.erase(node);
  close_pending_.erase(node);
  if (!bootstrapped_) {
    MaybeFinishBootstrap();
    return;
  }
  ops_.OnNodeRemoved(node, now);
  for (DispatcherId id : spans_.OnNode(node)) {
    if (!ops_.Has(id)) spans_.SetState(id, ReplicaState::kAbsent, NodeId());
  }
  Schedule();
  UpdateCheckpoint();
}

void Maintainer::OnScheduleResponse(const NodeId& node,
                                    const dispatchermanager::ScheduleResponse& resp) {
  if (!Active() || !bootstrapped_ || resp.epoch != options_.epoch) return;
  if (!resp.status.ok()) {
    LOG_WARN("maintainer schedule refused; changefeed={} node={} dispatcher={} status={}",
             options_.changefeed_id, node.value(), IdString(resp.dispatcher_id),
             resp.status.ToString());
    return;  // The operator resends.
  }
  // Only a stop completes here. A create completes with the heartbeat that
  // reports it working, whose watermark then covers the new dispatcher; the
  // node's older watermark may be past the new span's start ts.
  if (resp.state != ComponentState::kStopped) return;
  const Replica* r = spans_.Find(resp.dispatcher_id);
  OnSpanStatus(node, SpanStatus{resp.dispatcher_id, resp.state, r ? r->checkpoint : Ts(0)});
}

void Maintainer::OnHeartbeat(const NodeId& node, const HeartbeatRequest& heartbeat) {
  if (!Active() || !bootstrapped_ || nodes_.count(node) == 0) return;
  for (const SpanStatus& s : heartbeat.statuses) OnSpanStatus(node, s);
  if (heartbeat.watermark.has_value()) watermarks_.Update(node, *heartbeat.watermark);
  UpdateCheckpoint();
}

void Maintainer::OnSpanStatus(const NodeId& node, const SpanStatus& status) {
  Clock::TimePoint now = Now();
  if (status.id == spans_.trigger_id()) {
    barrier_.OnProgress(status.id, status.checkpoint_ts, now);
    return;
  }
  ops_.OnStatus(node, status, now);
  const Replica* r = spans_.Find(status.id);
  if (r == nullptr) {
    if (!ops_.Has(status.id) && status.state == ComponentState::kWorking) {
      DispatcherConfig config;
      config.id = status.id;
      ops_.RemoveStray(node, config, now);  // Not ours (any more): remove it.
    }
    return;
  }
  if (r->node != node || r->state != ReplicaState::kWorking) return;
  if (status.state == ComponentState::kWorking) {
    spans_.AdvanceCheckpoint(status.id, status.checkpoint_ts);
    barrier_.OnProgress(status.id, status.checkpoint_ts, now);
  } else if (status.state == ComponentState::kStopped && !ops_.Has(status.id)) {
    spans_.AdvanceCheckpoint(status.id, status.checkpoint_ts);
    spans_.SetState(status.id, ReplicaState::kAbsent, NodeId());  // Stopped on its own.
  }
}

void Maintainer::OnBlockStatus(const NodeId& node, const BlockReport& report) {
  if (!Active() || nodes_.count(node) == 0) return;
  if (!bootstrapped_) {
    // A waiting status is resent; a table change is not: keep it.
    if (report.stage == dispatcher::BlockStage::kNone &&
        (!report.tables_to_add.empty() || !report.tables_to_drop.empty())) {
      early_table_changes_.push_back(report);
    }
    return;
  }
  if (report.stage != dispatcher::BlockStage::kNone) {
    barrier_.OnBlockStatus(report, Now());
    UpdateCheckpoint();
    return;
  }
  if (report.tables_to_add.empty() && report.tables_to_drop.empty()) return;
  if (!applied_none_.emplace(report.block_ts, report.dispatcher_id).second) return;
  ApplyTableChanges(report.block_ts, report.tables_to_drop, report.tables_to_add);
}

void Maintainer::ApplyTableChanges(Ts ts, const std::vector<int64_t>& drops,
                                   const std::vector<event::TableRef>& adds) {
  Clock::TimePoint now = Now();
  for (int64_t table_id : drops) {
    tables_.erase(table_id);
    const Replica* r = spans_.FindTable(table_id);
    if (r == nullptr) continue;
    DispatcherId id = r->id;
    ops_.Cancel(id);
    if (Status s = ops_.Remove(id, /*erase=*/true, now); !s.ok()) {
      LOG_ERROR("maintainer cannot remove dropped table; changefeed={} table={} status={}",
                options_.changefeed_id, table_id, s.ToString());
    }
  }
  size_t added = 0;
  for (const event::TableRef& t : adds) {
    if (t.table_id == 0 || spans_.FindTable(t.table_id) != nullptr || Ignored(t)) continue;
    tables_[t.table_id] = t;
    spans_.AddAbsent(NewDispatcherId(), t, ts);  // The new table starts at the DDL.
    ++added;
  }
  LOG_INFO("maintainer applied table changes; changefeed={} ts={} dropped={} added={} skipped={}",
           options_.changefeed_id, ts.value(), drops.size(), added, adds.size() - added);
  Schedule();
}

void Maintainer::Schedule() {
  if (!Active() || !bootstrapped_) return;
  std::map<NodeId, size_t> load;
  for (const auto& [node, state] : nodes_) {
    if (state.answered) load[node] = spans_.OnNode(node).size();
  }
  if (load.empty()) return;
  Clock::TimePoint now = Now();
  for (DispatcherId id : spans_.Absent()) {
    if (ops_.size() >= options_.max_operators) return;
    if (ops_.Has(id)) continue;
    auto least = std::min_element(load.begin(), load.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    if (Status s = ops_.Add(id, least->first, now); !s.ok()) {
      LOG_ERROR("maintainer cannot schedule span; changefeed={} dispatcher={} status={}",
                options_.changefeed_id, IdString(id), s.ToString());
      continue;
    }
    ++least->second;
  }
  Rebalance(load, now);
}

void Maintainer::Rebalance(const std::map<NodeId, size_t>& load, Clock::TimePoint now) {
  // Only when nothing else moves: no operator in flight, no span absent and
  // no block event pending (a span moved mid-barrier would reset its
  // progress there).
  if (!balance_pending_ || load.size() < 2 || ops_.size() > 0 || !spans_.Absent().empty() ||
      barrier_.pending() > 0) {
    return;
  }
  auto [least, most] = std::minmax_element(
      load.begin(), load.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most->second <= least->second + 1) {
    // Balanced among the nodes that answered; done once the one that joined
    // has answered too.
    if (load.size() == nodes_.size()) balance_pending_ = false;
    return;
  }
  for (DispatcherId id : spans_.OnNode(most->first)) {
    const Replica* r = spans_.Find(id);
    if (r == nullptr || r->state != ReplicaState::kWorking) continue;
    LOG_INFO(
        "maintainer moves a span to balance the nodes; changefeed={} dispatcher={} from={} to={}",
        options_.changefeed_id, IdString(id), most->first.value(), least->first.value());
    if (Status s = ops_.Move(id, least->first, now); !s.ok()) {
      LOG_WARN("maintainer cannot move span; changefeed={} dispatcher={} status={}",
               options_.changefeed_id, IdString(id), s.ToString());
    }
    return;  // One at a time.
  }
}

void Maintainer::UpdateCheckpoint() {
  if (!bootstrapped_) return;
  std::vector<NodeId> required = spans_.Nodes();
  if (std::find(required.begin(), required.end(), options_.self) == required.end()) {
    required.push_back(options_.self);
  }
  CheckpointLimits limits{ops_.MinCheckpoint(), barrier_.MinCheckpoint(),
                          spans_.MinAbsentCheckpoint()};
  Ts next = NextCheckpoint(checkpoint_, watermarks_.Min(required), limits);
  if (next == checkpoint_) return;
  checkpoint_ = next;
  barrier_.Prune(checkpoint_);
  std::erase_if(applied_none_, [this](const auto& e) { return e.first < checkpoint_; });
}

void Maintainer::Tick(Clock::TimePoint now) {
  // A close is resent even by a failed or fenced maintainer: its host waits
  // for closed() before starting the next generation.
  if (closing_) {
    if (now - close_sent_ >= options_.resend_interval) {
      close_sent_ = now;
      for (const NodeId& node : close_pending_) SendClose(node);
    }
    return;
  }
  if (!status_.ok()) return;
  SendDueBootstraps(now);
  if (!bootstrapped_) {
    MaybeFinishBootstrap();  // Waiting for the tables at the trigger's start.
    if (!bootstrapped_) return;
  }
  if (!initialized_ && now - post_bootstrap_sent_ >= options_.resend_interval) {
    SendPostBootstrap(now);
  }
  ops_.Tick(now);
  barrier_.Tick(now);
  Schedule();
  UpdateCheckpoint();
}

void Maintainer::Close(bool removed) {
  if (closing_) return;
  closing_ = true;
  close_removed_ = removed;
  close_sent_ = Now();
  for (const auto& [node, state] : nodes_) {
    close_pending_.insert(node);
    SendClose(node);
  }
}

void Maintainer::SendClose(const NodeId& node) {
  dispatchermanager::CloseRequest request;
  request.removed = close_removed_;
  options_.outbox->Send(node, Stamped(std::move(request)));
}

void Maintainer::OnCloseResponse(const NodeId& node, const dispatchermanager::CloseResponse& resp) {
  if (!closing_ || resp.epoch != options_.epoch || !resp.success) return;
  close_pending_.erase(node);
}

}  // namespace sluice::maintainer
