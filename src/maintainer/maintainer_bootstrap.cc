// The bootstrap half of the Maintainer: bootstrap requests to every node,
// the rebuild of the span controller from their answers (working spans,
// duplicates and strays, in-flight operators, holes) and the post-bootstrap
// of the table trigger. See maintainer.h.
#include <utility>

#include "common/logging.h"
#include "maintainer/maintainer.h"

namespace sluice::maintainer {

using dispatchermanager::BootstrapResponse;
using dispatchermanager::ComponentState;
using dispatchermanager::IdString;
using dispatchermanager::ScheduleAction;

void Maintainer::Start() { SendDueBootstraps(Now()); }

bool Maintainer::OthersAnswered() const {
  for (const auto& [node, state] : nodes_) {
    if (node != options_.self && !state.answered) return false;
  }
  return true;
}

void Maintainer::SendDueBootstraps(Clock::TimePoint now) {
  const bool others_answered = OthersAnswered();
  for (auto& [node, state] : nodes_) {
    if (state.answered || (node == options_.self && !others_answered)) continue;
    if (!state.sent || now - state.last_sent >= options_.resend_interval) {
      SendBootstrap(node, now);
    }
  }
}

void Maintainer::SendBootstrap(const NodeId& node, Clock::TimePoint now) {
  NodeState& state = nodes_[node];
  state.sent = true;
  state.last_sent = now;
  dispatchermanager::BootstrapRequest request;
  request.start_ts = options_.checkpoint_ts;
  if (node == options_.self) {
    request.is_new_changefeed = options_.is_new_changefeed;
    request.table_trigger_id = options_.table_trigger_id;
  }
  request.replace_trigger_id = state.replace_trigger;
  options_.outbox->Send(node, Stamped(std::move(request)));
}

void Maintainer::OnBootstrapResponse(const NodeId& node, const BootstrapResponse& resp) {
  auto it = nodes_.find(node);
  if (!Active() || it == nodes_.end() || it->second.answered || resp.epoch != options_.epoch) {
    return;
  }
  if (!resp.status.ok()) {
    LOG_WARN("maintainer bootstrap refused; changefeed={} node={} status={}",
             options_.changefeed_id, node.value(), resp.status.ToString());
    if (resp.status.code() == Code::kStaleOwner) status_ = resp.status;
    if (resp.status.code() == Code::kAborted) MaybeReplaceTrigger(node, resp);
    return;  // Other refusals are retried from Tick().
  }
  it->second.answered = true;
  if (node != options_.self) SendDueBootstraps(Now());  // Maybe this node's own now.
  if (bootstrapped_) {
    AdoptLateNode(node, resp);
    return;
  }
  responses_[node] = resp;
  MaybeFinishBootstrap();
}

void Maintainer::MaybeReplaceTrigger(const NodeId& node, const BootstrapResponse& resp) {
  NodeState& state = nodes_[node];
  const std::optional<DispatcherId> named =
      node == options_.self ? std::optional<DispatcherId>(options_.table_trigger_id) : std::nullopt;
  if (!resp.existing_trigger_id.has_value() || resp.existing_trigger_id == named ||
      state.replace_trigger == resp.existing_trigger_id) {
    return;  // Nothing to replace, or already ordered (the resend carries it).
  }
  // An older generation's trigger: this newer one orders it closed (the
  // node moves its fence to us first) and then takes the node over.
  LOG_INFO("maintainer takes over the table trigger; changefeed={} node={} old={}",
           options_.changefeed_id, node.value(), IdString(*resp.existing_trigger_id));
  state.replace_trigger = resp.existing_trigger_id;
  SendBootstrap(node, Now());
}

void Maintainer::MaybeFinishBootstrap() {
  if (bootstrapped_ || !Active()) return;
  for (const auto& [node, state] : nodes_) {
    if (!state.answered) return;
  }
  if (nodes_.count(options_.self) == 0) return;  // Cannot host the table trigger.
  const BootstrapResponse& own = responses_.at(options_.self);
  if (own.checkpoint_ts > start_ts_ && options_.tables_at) {
    Result<std::vector<event::TableRef>> tables = options_.tables_at(own.checkpoint_ts);
    if (!tables.ok()) {
      if (tables.status().code() != Code::kUnavailable) status_ = tables.status();
      return;  // Tick() tries again.
    }
    tables_.clear();
    for (event::TableRef& t : *tables) {
      if (t.table_id != 0 && !Ignored(t)) tables_[t.table_id] = std::move(t);
    }
  }
  if (own.checkpoint_ts > start_ts_) start_ts_ = own.checkpoint_ts;
  for (const auto& [node, resp] : responses_) RebuildFrom(node, resp);
  // After every working one: a table keeps its working dispatcher.
  for (const auto& [node, resp] : responses_) AdoptStopping(node, resp);
  for (const auto& [node, resp] : responses_) AdoptOperators(node, resp);
  size_t holes = 0;
  for (const auto& [table_id, table] : tables_) {
    if (spans_.FindTable(table_id) != nullptr) continue;
    // The table list is the one at the trigger's start (which the sink may
    // have moved past DDLs it already ran), but a table's rows start at the
    // changefeed's checkpoint: those after it may not be downstream yet. The
    // sink moves each table past the DDLs it ran on it (and a table created
    // since, to its creation) when its dispatcher is added.
    spans_.AddAbsent(NewDispatcherId(), table, options_.checkpoint_ts);
    ++holes;
  }
  responses_.clear();
  bootstrapped_ = true;
  LOG_INFO("maintainer bootstrapped; changefeed={} epoch={} nodes={} spans={} holes={} ops={}",
           options_.changefeed_id, options_.epoch.value(), nodes_.size(), spans_.size(), holes,
           ops_.size());
  std::vector<BlockReport> early;
  early.swap(early_table_changes_);
  for (const BlockReport& report : early) {
    if (!applied_none_.emplace(report.block_ts, report.dispatcher_id).second) continue;
    ApplyTableChanges(report.block_ts, report.tables_to_drop, report.tables_to_add);
  }
  SendPostBootstrap(Now());
  Schedule();
}

void Maintainer::RebuildFrom(const NodeId& node, const BootstrapResponse& resp) {
  Clock::TimePoint now = Now();
  for (const dispatchermanager::DispatcherStatus& s : resp.spans) {
    const dispatchermanager::DispatcherConfig& c = s.config;
    if (!IsTableSpan(c)) continue;  // The trigger and redo dispatchers are not spans here.
    if (s.state != ComponentState::kWorking) continue;  // AdoptStopping's.
    if (!AddReported(node, s)) {
      // A table outside the changefeed, or a second dispatcher of a table
      // (left by an interrupted move): remove it.
      LOG_INFO("maintainer removes stray dispatcher; changefeed={} node={} dispatcher={} table={}",
               options_.changefeed_id, node.value(), IdString(c.id), c.table_id.value());
      ops_.RemoveStray(node, c, now);
    }
  }
}

bool Maintainer::AddReported(const NodeId& node, const dispatchermanager::DispatcherStatus& s) {
  const dispatchermanager::DispatcherConfig& c = s.config;
  auto table = tables_.find(c.table_id.value());
  if (table == tables_.end()) return false;
  Replica r;
  r.id = c.id;
  r.table = table->second;
  r.span = c.span;
  r.state = ReplicaState::kWorking;
  r.node = node;
  r.checkpoint = std::max(s.checkpoint_ts, c.start_ts);
  return spans_.Add(std::move(r));
}

bool Maintainer::IsTableSpan(const dispatchermanager::DispatcherConfig& c) const {
  return c.id != options_.table_trigger_id && c.table_id != TableId(event::kTableTriggerTableId) &&
         c.mode == dispatchermanager::DispatcherMode::kDefault;
}

void Maintainer::AdoptStopping(const NodeId& node, const BootstrapResponse& resp) {
  Clock::TimePoint now = Now();
  for (const dispatchermanager::DispatcherStatus& s : resp.spans) {
    const dispatchermanager::DispatcherConfig& c = s.config;
    if (!IsTableSpan(c) || s.state != ComponentState::kStopping) continue;
    // Closing (a previous generation's remove, or the manager's own): it
    // may still write, so its table gets no other dispatcher until it has
    // closed. The remove is adopted; once the node reports it stopped, the
    // span is absent and scheduled again from its checkpoint.
    if (!AddReported(node, s)) {
      ops_.RemoveStray(node, c, now);  // Not wanted, or its table has a working one.
      continue;
    }
    LOG_INFO(
        "maintainer adopts the removal of a stopping dispatcher; changefeed={} node={} "
        "dispatcher={} table={}",
        options_.changefeed_id, node.value(), IdString(c.id), c.table_id.value());
    if (Status st = ops_.Remove(c.id, /*erase=*/false, now); !st.ok()) {
      LOG_ERROR("maintainer cannot adopt removal; changefeed={} dispatcher={} status={}",
                options_.changefeed_id, IdString(c.id), st.ToString());
    }
  }
}

void Maintainer::AdoptOperators(const NodeId& node, const BootstrapResponse& resp) {
  Clock::TimePoint now = Now();
  for (const dispatchermanager::ScheduleRequest& op : resp.operators) {
    const dispatchermanager::DispatcherConfig& c = op.config;
    if (c.mode != dispatchermanager::DispatcherMode::kDefault || ops_.Has(c.id)) continue;
    const Replica* r = spans_.Find(c.id);
    Status s;
    if (op.action == ScheduleAction::kCreate) {
      auto table = tables_.find(c.table_id.value());
      if (r != nullptr || table == tables_.end() ||
          spans_.FindTable(c.table_id.value()) != nullptr) {
        continue;  // Already working, or not wanted (a stray is removed when it reports).
      }
      spans_.AddAbsent(c.id, table->second, c.start_ts);
      s = ops_.AdoptAdd(c.id, node, c.start_ts, now);
    } else if (r != nullptr && r->node == node) {
      // The previous owner was removing it (a move or a drop): finish the
      // remove; the span is then scheduled again if it is still wanted.
      s = ops_.Remove(c.id, /*erase=*/false, now);
    }
    if (!s.ok()) {
      LOG_ERROR("maintainer cannot adopt operator; changefeed={} node={} dispatcher={} status={}",
                options_.changefeed_id, node.value(), IdString(c.id), s.ToString());
    }
  }
}

void Maintainer::AdoptLateNode(const NodeId& node, const BootstrapResponse& resp) {
  // A node that joined after the bootstrap should have no dispatchers of
  // this changefeed; any it has belong to an older generation.
  Clock::TimePoint now = Now();
  for (const dispatchermanager::DispatcherStatus& s : resp.spans) {
    if (s.config.id == options_.table_trigger_id || spans_.Find(s.config.id) != nullptr) continue;
    ops_.RemoveStray(node, s.config, now);
  }
  Schedule();
}

std::vector<dispatchermanager::SchemaInfo> Maintainer::Schemas() const {
  std::map<int64_t, dispatchermanager::SchemaInfo> by_id;
  for (const auto& [table_id, t] : tables_) {
    dispatchermanager::SchemaInfo& schema = by_id[t.schema_id];
    schema.id = t.schema_id;
    schema.name = t.schema_name;
    schema.tables.push_back(dispatchermanager::TableInfo{TableId(table_id), t.table_name});
  }
  std::vector<dispatchermanager::SchemaInfo> out;
  for (auto& [id, schema] : by_id) out.push_back(std::move(schema));
  return out;
}

void Maintainer::SendPostBootstrap(Clock::TimePoint now) {
  post_bootstrap_sent_ = now;
  dispatchermanager::PostBootstrapRequest request;
  request.table_trigger_id = options_.table_trigger_id;
  request.schemas = Schemas();
  options_.outbox->Send(options_.self, Stamped(std::move(request)));
}

void Maintainer::OnPostBootstrapResponse(const NodeId& node,
                                         const dispatchermanager::PostBootstrapResponse& resp) {
  if (!Active() || !bootstrapped_ || node != options_.self || resp.epoch != options_.epoch ||
      resp.table_trigger_id != options_.table_trigger_id) {
    return;
  }
  if (!resp.status.ok()) {
    LOG_WARN("maintainer post-bootstrap refused; changefeed={} status={}", options_.changefeed_id,
             resp.status.ToString());
    if (resp.status.code() == Code::kStaleOwner) status_ = resp.status;
    return;
  }
  if (!initialized_) {
    LOG_INFO("maintainer initialized; changefeed={} epoch={}", options_.changefeed_id,
             options_.epoch.value());
  }
  initialized_ = true;
}

}  // namespace sluice::maintainer
