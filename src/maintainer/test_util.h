// Test helpers: a recording outbox that checks every message carries the
// maintainer's (node, epoch), and a scripted fake cluster of dispatcher
// managers that answers the maintainer's requests and sends heartbeats.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "maintainer/maintainer.h"

namespace sluice::maintainer::testing {

namespace dm = ::sluice::dispatchermanager;

using Message = std::variant<dm::BootstrapRequest, dm::PostBootstrapRequest, dm::ScheduleRequest,
                             dm::CloseRequest, BarrierActionRequest>;
struct Sent {
  NodeId to;
  Message msg;
};

class FakeOutbox : public MaintainerOutbox {
 public:
  FakeOutbox(NodeId self, MaintainerEpoch epoch) : self_(std::move(self)), epoch_(epoch) {}
  void Send(const NodeId& to, const dm::BootstrapRequest& r) override { Record(to, r); }
  void Send(const NodeId& to, const dm::PostBootstrapRequest& r) override { Record(to, r); }
  void Send(const NodeId& to, const dm::ScheduleRequest& r) override { Record(to, r); }
  void Send(const NodeId& to, const dm::CloseRequest& r) override { Record(to, r); }
  void Send(const NodeId& to, const BarrierActionRequest& r) override { Record(to, r); }

  // Every message sent since the last Take().
  std::vector<Sent> Take() { return std::exchange(pending_, {}); }
  size_t total() const { return total_; }

  template <typename T>
  static std::vector<std::pair<NodeId, T>> Filter(const std::vector<Sent>& sent) {
    std::vector<std::pair<NodeId, T>> out;
    for (const Sent& s : sent) {
      if (const T* m = std::get_if<T>(&s.msg)) out.emplace_back(s.to, *m);
    }
    return out;
  }

 private:
  template <typename T>
  void Record(const NodeId& to, const T& r) {
    EXPECT_EQ(r.from, self_);
    EXPECT_EQ(r.epoch, epoch_);
    EXPECT_EQ(r.changefeed_id, "cf");
    pending_.push_back(Sent{to, r});
    ++total_;
  }
  const NodeId self_;
  const MaintainerEpoch epoch_;
  std::vector<Sent> pending_;
  size_t total_ = 0;
};

// One node's dispatcher manager, as far as the maintainer can see it.
struct FakeNode {
  std::map<DispatcherId, dm::DispatcherStatus> dispatchers;
  std::vector<SpanStatus> stopped;             // Reported once in the next heartbeat.
  std::vector<dm::ScheduleRequest> in_flight;  // Reported at bootstrap.
  Ts trigger_checkpoint;                       // Reported at bootstrap if nonzero.
  // The node's table trigger dispatcher, if any. A bootstrap naming another
  // (or none) is refused with kAborted naming it, unless it orders it
  // replaced, as the dispatcher manager does.
  std::optional<DispatcherId> trigger;
  uint64_t seq = 1;
  bool ignore_schedules = false;
  // Dispatchers that stay stopping when asked to close (a sink flush in
  // flight) until the test finishes closing them with FinishClose().
  std::set<DispatcherId> slow_close;
  std::vector<BarrierActionRequest> actions;

  void FinishClose(DispatcherId id) {
    auto d = dispatchers.find(id);
    if (d == dispatchers.end()) return;
    stopped.push_back({id, dm::ComponentState::kStopped, d->second.checkpoint_ts});
    dispatchers.erase(d);
    slow_close.erase(id);
  }
};

inline dm::DispatcherStatus Working(DispatcherId id, int64_t table, Ts cp, int64_t schema = 1) {
  dm::DispatcherStatus s;
  s.config.id = id;
  s.config.table_id = TableId(table);
  s.config.schema_id = schema;
  s.config.span = TableRecordSpan(TableId(table));
  s.config.start_ts = cp;
  s.checkpoint_ts = cp;
  return s;
}

// A dispatcher's report about the block event at `ts`.
inline BlockReport Report(DispatcherId id, Ts ts, dispatcher::BlockStage stage,
                          event::BlockedTables blocked) {
  BlockReport r;
  r.dispatcher_id = id;
  r.block_ts = ts;
  r.stage = stage;
  r.blocked_tables = std::move(blocked);
  return r;
}

inline event::TableRef Table(int64_t id, int64_t schema = 1) {
  return event::TableRef{schema, id, "db" + std::to_string(schema), "t" + std::to_string(id)};
}

class FakeCluster {
 public:
  explicit FakeCluster(std::vector<std::string> names) {
    for (auto& n : names) nodes[NodeId(n)];
  }

  // Delivers everything `outbox` holds to the nodes and their answers to
  // `m`, then a heartbeat from every node; repeats until nothing is sent.
  void Pump(Maintainer* m, FakeOutbox* outbox, bool heartbeats = true) {
    for (int round = 0; round < 20; ++round) {
      std::vector<Sent> sent = outbox->Take();
      for (const Sent& s : sent) Deliver(m, s);
      if (heartbeats) {
        for (auto& [id, node] : nodes) m->OnHeartbeat(id, Heartbeat(id));
      }
      if (sent.empty()) return;
    }
  }

  void Deliver(Maintainer* m, const Sent& s) {
    auto it = nodes.find(s.to);
    if (it == nodes.end()) return;  // The node is gone.
    FakeNode& node = it->second;
    if (auto* r = std::get_if<dm::BootstrapRequest>(&s.msg)) {
      dm::BootstrapResponse resp;
      resp.changefeed_id = r->changefeed_id;
      resp.epoch = r->epoch;
      if (node.trigger.has_value() && r->table_trigger_id != node.trigger) {
        if (r->replace_trigger_id != node.trigger) {
          resp.status = Aborted("table trigger dispatcher id mismatch during bootstrap");
          resp.existing_trigger_id = node.trigger;
          m->OnBootstrapResponse(s.to, resp);
          return;
        }
        node.dispatchers.erase(*node.trigger);  // Closed before the takeover.
        node.trigger.reset();
      }
      for (auto& [id, d] : node.dispatchers) resp.spans.push_back(d);
      resp.operators = node.in_flight;
      resp.checkpoint_ts = node.trigger_checkpoint;
      if (r->table_trigger_id) {
        node.dispatchers[*r->table_trigger_id] = Working(*r->table_trigger_id, 0, r->start_ts);
        node.trigger = r->table_trigger_id;
      }
      m->OnBootstrapResponse(s.to, resp);
    } else if (auto* r = std::get_if<dm::PostBootstrapRequest>(&s.msg)) {
      m->OnPostBootstrapResponse(s.to, {r->changefeed_id, r->epoch, r->table_trigger_id, {}});
    } else if (auto* r = std::get_if<dm::ScheduleRequest>(&s.msg)) {
      if (node.ignore_schedules) return;
      if (r->action == dm::ScheduleAction::kCreate) {
        node.dispatchers[r->config.id] =
            Working(r->config.id, r->config.table_id.value(), r->config.start_ts);
      } else {
        auto d = node.dispatchers.find(r->config.id);
        if (d != node.dispatchers.end() && node.slow_close.count(r->config.id) > 0) {
          d->second.state = dm::ComponentState::kStopping;
          return;
        }
        Ts cp = d == node.dispatchers.end() ? Ts(0) : d->second.checkpoint_ts;
        if (d != node.dispatchers.end()) node.dispatchers.erase(d);
        node.stopped.push_back({r->config.id, dm::ComponentState::kStopped, cp});
      }
      ++node.seq;
    } else if (auto* r = std::get_if<dm::CloseRequest>(&s.msg)) {
      m->OnCloseResponse(s.to, {r->changefeed_id, r->epoch, true, false, {}});
    } else if (auto* r = std::get_if<BarrierActionRequest>(&s.msg)) {
      node.actions.push_back(*r);
    }
  }

  HeartbeatRequest Heartbeat(const NodeId& id) {
    FakeNode& node = nodes.at(id);
    HeartbeatRequest hb;
    hb.changefeed_id = "cf";
    Ts min(UINT64_MAX);
    for (auto& [did, d] : node.dispatchers) {
      hb.statuses.push_back({did, d.state, d.checkpoint_ts});
      min = std::min(min, d.checkpoint_ts);
    }
    for (const SpanStatus& s : node.stopped) hb.statuses.push_back(s);
    node.stopped.clear();
    if (!node.dispatchers.empty()) hb.watermark = Watermark{min, min, node.seq};
    return hb;
  }

  // Sets the checkpoint of every dispatcher on every node.
  void AdvanceAll(Ts ts) {
    for (auto& [id, node] : nodes) {
      for (auto& [did, d] : node.dispatchers) d.checkpoint_ts = std::max(d.checkpoint_ts, ts);
    }
  }

  // The node hosting dispatcher `id`, or empty.
  NodeId HostOf(DispatcherId id) const {
    for (const auto& [nid, node] : nodes) {
      if (node.dispatchers.count(id) > 0) return nid;
    }
    return NodeId();
  }

  std::map<NodeId, FakeNode> nodes;
};

// A maintainer on node "a" at epoch 7 over `tables`, with a manual clock;
// `ignore_table` becomes MaintainerOptions::ignore_table.
struct Fixture {
  explicit Fixture(std::vector<event::TableRef> tables, std::vector<std::string> names = {"a"},
                   Ts start = Ts(100),
                   std::function<bool(const event::TableRef&)> ignore_table = nullptr)
      : outbox(NodeId("a"), MaintainerEpoch(7)), cluster(names) {
    MaintainerOptions o;
    o.changefeed_id = "cf";
    o.self = NodeId("a");
    o.epoch = MaintainerEpoch(7);
    o.checkpoint_ts = start;
    o.tables = std::move(tables);
    o.ignore_table = std::move(ignore_table);
    for (auto& n : names) o.nodes.emplace_back(n);
    o.resend_interval = std::chrono::milliseconds(500);
    o.clock = &clock;
    o.outbox = &outbox;
    auto r = Maintainer::Create(std::move(o));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    m = std::move(r).value();
  }
  // Starts and completes the bootstrap with the cluster as it is.
  void Boot() {
    m->Start();
    cluster.Pump(m.get(), &outbox);
  }
  void Tick(std::chrono::milliseconds d) {
    clock.Advance(d);
    m->Tick(clock.Now());
  }
  DispatcherId IdOf(int64_t table) const { return m->spans().FindTable(table)->id; }

  ManualClock clock;
  FakeOutbox outbox;
  FakeCluster cluster;
  std::unique_ptr<Maintainer> m;
};

}  // namespace sluice::maintainer::testing
