// Seeded randomized interleavings of 3 to 5 generations (epochs 10, 20, ...)
// of the real maintainer::Maintainer of one changefeed against the real
// DispatcherOrchestrators of three nodes, each over its own fake world. A
// generation runs on a random node and names the stable table-trigger id or,
// sometimes, one of its own. It knows every node, or its own and every
// earlier generation's node (those may host an old trigger) while the others
// join later (OnNodeAdded). Before the next generation starts, the previous
// one is closed or abandoned: it keeps running, like a maintainer on a
// partitioned node, until fenced. Requests and answers arrive after random
// delays or are lost; each node sends its manager's statuses (with a seq, as
// NodeControl does) every ~200 ms to the owning generation; generations tick
// every ~100 ms; closes are held for a while; creations fail now and then.
// One thread, a virtual clock (seeded priority queue, one ManualClock).
//
// After every event that reaches a node: never two table triggers alive over
// all nodes, no dispatcher id alive twice, a trigger created only on a node
// whose manager that node owns, and no owner change below the epoch of a
// published manager. After a horizon nothing is lost; the run ends once the
// newest generation stayed converged for a while: OK, bootstrapped,
// initialized, no operators, every table working, every manager owned by it,
// exactly its trigger alive (on its node) and exactly its spans' dispatchers
// alive on each node. Over 100 seeds or more, trigger takeovers (a bootstrap
// with replace_trigger_id admitted) must happen.
//
// SLUICE_INTERLEAVING_SEEDS selects the seeds, e.g. "1-5000" or "7,12,40-50"
// (default "1-100"). Every failure names its seed, the scenario and the last
// events.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/logging.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "dispatchermanager/interleaving_test_util.h"
#include "dispatchermanager/test_fakes.h"
#include "maintainer/maintainer.h"

namespace sluice::dispatchermanager {
namespace {

using testing::Rng;

// Names are specific to this file: it shares unity batches with the other
// tests of this folder (race_test.cc has its own `Maintainer`).
using testing::Did;
using testing::FakeEvent;
using testing::FakeProvider;
using testing::FakeWorld;

class MaintainerSim {
 public:
  struct Stats {
    int64_t deliveries = 0;
    int64_t lost = 0;
    int64_t replacements = 0;      // (generation, node) takeovers of a trigger.
    int64_t replace_refusals = 0;  // Replacing bootstraps refused (old trigger closing).
    int64_t fenced = 0;            // Generations fenced with kStaleOwner.

    void Add(const Stats& o) {
      deliveries += o.deliveries;
      lost += o.lost;
      replacements += o.replacements;
      replace_refusals += o.replace_refusals;
      fenced += o.fenced;
    }
  };

  explicit MaintainerSim(uint64_t seed) : seed_(seed), rng_(seed) {
    for (int n = 0; n < kNodes; ++n) {
      Node node;
      node.id = NodeId(kNodeNames[n]);
      node.provider = std::make_unique<FakeProvider>();
      node.orch = std::make_unique<DispatcherOrchestrator>(node.provider.get());
      node.world = node.provider->world(kCf);
      nodes_.push_back(std::move(node));
    }
    Build();
  }
  MaintainerSim(const MaintainerSim&) = delete;
  MaintainerSim& operator=(const MaintainerSim&) = delete;

  // Runs the seed; returns the first violated invariant, or "".
  std::string Run() {
    for (size_t i = 0; i < gens_.size(); ++i) {
      const Gen& g = gens_[i];
      const int gi = static_cast<int>(i);
      Push(At(g.start_at, Kind::kStart, gi));
      if (g.close_at.has_value()) Push(At(*g.close_at, Kind::kClose, gi));
      for (int n : g.late) Push(At(g.start_at + rng_.Between(50, 1500), Kind::kAddNode, gi, n));
    }
    for (int n = 0; n < kNodes; ++n) {
      Push(At(rng_.Between(0, 200), Kind::kHeartbeat, -1, n));
      for (int64_t k = rng_.Between(0, 2); k > 0; --k) {
        const int64_t from = rng_.Between(0, horizon_ - 600);
        Push(At(from, Kind::kHold, -1, n));
        Push(At(from + rng_.Between(10, 400), Kind::kRelease, -1, n));
      }
    }
    for (int64_t k = rng_.Between(0, 2); k > 0; --k) {
      const int64_t at = rng_.Between(0, horizon_ - 100);
      Push(At(at, Kind::kFailCreate, -1, RandomNode()));
    }
    const int64_t cap = horizon_ + kCapMs;
    int events = 0;
    while (!queue_.empty() && failure_.empty() && !done_) {
      Event e = queue_.top();
      queue_.pop();
      if (e.at > cap) {
        Fail("not converged " + std::to_string(kCapMs) + " ms after the horizon: " + Unconverged());
        break;
      }
      if (++events > kMaxEvents) {
        Fail("not converged within " + std::to_string(kMaxEvents) + " events: " + Unconverged());
        break;
      }
      if (e.at > now_) {
        clock_.Advance(std::chrono::milliseconds(e.at - now_));
        now_ = e.at;
      }
      Dispatch(e);
    }
    if (failure_.empty()) {
      if (std::string problem = Unconverged(); !problem.empty()) Fail("final state: " + problem);
    }
    return failure_;
  }

  // The scenario, the live dispatchers and the last events.
  std::string Report() const {
    std::ostringstream out;
    out << "scenario (seed " << seed_ << ", horizon " << horizon_ << " ms):\n";
    for (size_t i = 0; i < gens_.size(); ++i) {
      const Gen& g = gens_[i];
      out << "  " << GenName(static_cast<int>(i)) << " trigger=" << IdString(g.trigger)
          << " nodes=" << NodeList(g.nodes) << " late=" << NodeList(g.late)
          << " start=" << g.start_at;
      if (g.close_at.has_value()) {
        out << " closed at " << *g.close_at;
      } else if (i + 1 < gens_.size()) {
        out << " abandoned";
      }
      if (g.m != nullptr) {
        out << " | status=" << g.m->status().ToString() << " bootstrapped=" << g.m->bootstrapped()
            << " initialized=" << g.m->initialized() << " closed=" << g.m->closed()
            << " ops=" << g.m->operators().size()
            << " working=" << g.m->spans().CountInState(maintainer::ReplicaState::kWorking);
      }
      out << "\n";
    }
    out << "alive:";
    for (const Node& node : nodes_) out << " " << node.id.value() << IdsString(node.alive);
    out << "\nlast events:\n";
    for (const std::string& line : trace_) out << "  " << line << "\n";
    return out.str();
  }

  const Stats& stats() const { return stats_; }

 private:
  static constexpr char kCf[] = "cf";
  static constexpr int kNodes = 3;
  static constexpr const char* kNodeNames[kNodes] = {"node-a", "node-b", "node-c"};
  static constexpr int kTables = 6;
  static constexpr uint64_t kOwnTriggerHigh = 9;  // Per-generation trigger ids: (9, 100 + i).
  static constexpr int kLossPercent = 15;
  static constexpr int64_t kSettleMs = 1500;  // Converged this long: done.
  static constexpr int64_t kCapMs = 60000;
  static constexpr int kMaxEvents = 500000;
  static constexpr size_t kTraceLines = 20;

  using Request =
      std::variant<BootstrapRequest, PostBootstrapRequest, ScheduleRequest, CloseRequest>;
  using Reply = std::variant<BootstrapResponse, PostBootstrapResponse, ScheduleResponse,
                             CloseResponse, maintainer::HeartbeatRequest>;

  // kToNode carries a request of `gen` to `node`, kToGen a response or a
  // heartbeat of `node` to `gen`; the others act on `gen` or on `node`.
  enum class Kind {
    kStart,
    kClose,
    kAddNode,
    kTick,
    kHeartbeat,
    kToNode,
    kToGen,
    kHold,
    kRelease,
    kFailCreate
  };

  struct Event {
    int64_t at = 0;
    uint64_t seq = 0;
    Kind kind = Kind::kTick;
    int gen = -1;
    int node = -1;
    std::shared_ptr<const Request> request;
    std::shared_ptr<const Reply> reply;
  };

  struct LaterFirst {
    bool operator()(const Event& a, const Event& b) const {
      return std::tie(a.at, a.seq) > std::tie(b.at, b.seq);
    }
  };

  // A generation's outbox: every message becomes a delayed, lossy delivery.
  class Outbox final : public maintainer::MaintainerOutbox {
   public:
    Outbox(MaintainerSim* sim, int gen) : sim_(sim), gen_(gen) {}
    void Send(const NodeId& to, const BootstrapRequest& r) override { sim_->Post(gen_, to, r); }
    void Send(const NodeId& to, const PostBootstrapRequest& r) override { sim_->Post(gen_, to, r); }
    void Send(const NodeId& to, const ScheduleRequest& r) override { sim_->Post(gen_, to, r); }
    void Send(const NodeId& to, const CloseRequest& r) override { sim_->Post(gen_, to, r); }
    // No block statuses are reported here, so no barrier action is sent.
    void Send(const NodeId&, const maintainer::BarrierActionRequest&) override {}

   private:
    MaintainerSim* const sim_;
    const int gen_;
  };

  struct Gen {
    uint64_t epoch = 0;
    int self = 0;
    DispatcherId trigger;
    std::vector<int> nodes;  // Known at start.
    std::vector<int> late;   // Added later.
    int64_t start_at = 0;
    std::optional<int64_t> close_at;
    bool fenced = false;  // Counted in the stats.
    std::unique_ptr<Outbox> outbox;
    std::unique_ptr<maintainer::Maintainer> m;  // Destroyed before its outbox.
  };

  struct Node {
    NodeId id;
    std::unique_ptr<FakeProvider> provider;
    std::unique_ptr<DispatcherOrchestrator> orch;  // Destroyed before its provider.
    std::shared_ptr<FakeWorld> world;
    // What the effect log showed so far.
    size_t seen = 0;
    std::set<DispatcherId> alive;
    NodeId owner;                  // Of the last owner change.
    uint64_t committed_epoch = 0;  // Highest epoch of a published manager.
    // Heartbeat seq, as NodeControl keeps it.
    std::set<DispatcherId> hb_ids;
    uint64_t hb_seq = 0;
  };

  void Build() {
    const int n = static_cast<int>(rng_.Between(3, 5));
    int64_t at = rng_.Between(0, 100);
    std::set<int> earlier_selves;
    for (int i = 0; i < n; ++i) {
      Gen g;
      g.epoch = 10 * static_cast<uint64_t>(i + 1);
      g.self = RandomNode();
      g.trigger = rng_.Percent(70) ? maintainer::kDefaultTableTriggerId
                                   : Did(kOwnTriggerHigh, 100 + static_cast<uint64_t>(i));
      g.start_at = at;
      const bool all = rng_.Percent(70);
      for (int k = 0; k < kNodes; ++k) {
        const bool needed = k == g.self || earlier_selves.count(k) > 0;
        if (all || needed || rng_.Percent(50)) {
          g.nodes.push_back(k);
        } else {
          g.late.push_back(k);
        }
      }
      earlier_selves.insert(g.self);
      g.outbox = std::make_unique<Outbox>(this, i);
      gens_.push_back(std::move(g));
      at += rng_.Percent(30) ? rng_.Between(20, 300) : rng_.Between(300, 2500);
    }
    for (size_t i = 0; i + 1 < gens_.size(); ++i) {
      if (rng_.Percent(40)) {
        gens_[i].close_at = rng_.Between(gens_[i].start_at + 1, gens_[i + 1].start_at - 1);
      }
    }
    horizon_ = gens_.back().start_at + 3000;
  }

  int RandomNode() { return static_cast<int>(rng_.Below(kNodes)); }

  static Event At(int64_t at, Kind kind, int gen = -1, int node = -1) {
    Event e;
    e.at = at;
    e.kind = kind;
    e.gen = gen;
    e.node = node;
    return e;
  }

  void Push(Event e) {
    e.seq = next_seq_++;
    queue_.push(std::move(e));
  }

  bool Lost() { return now_ < horizon_ && rng_.Percent(kLossPercent); }

  int64_t Delay() {
    if (now_ >= horizon_ || rng_.Percent(85)) return rng_.Between(1, 15);
    return rng_.Between(20, 320);
  }

  int NodeIndex(const NodeId& id) const {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].id == id) return static_cast<int>(i);
    }
    return -1;
  }

  template <typename T>
  void Post(int gen, const NodeId& to, const T& request) {
    const int node = NodeIndex(to);
    if (node < 0) {
      Fail(GenName(gen) + " sent to an unknown node " + to.value());
      return;
    }
    if (Lost()) {
      ++stats_.lost;
      return;
    }
    Event e = At(now_ + Delay(), Kind::kToNode, gen, node);
    e.request = std::make_shared<Request>(std::in_place_type<T>, request);
    Push(std::move(e));
  }

  void Dispatch(const Event& e) {
    switch (e.kind) {
      case Kind::kStart:
        StartGen(e.gen);
        return;
      case Kind::kClose:
        if (gens_[e.gen].m == nullptr) return;
        gens_[e.gen].m->Close(false);
        Trace("close " + GenName(e.gen));
        return;
      case Kind::kAddNode:
        if (gens_[e.gen].m == nullptr) return;
        gens_[e.gen].m->OnNodeAdded(nodes_[e.node].id);
        Trace("node added to " + GenName(e.gen) + ": " + nodes_[e.node].id.value());
        return;
      case Kind::kTick:
        OnTick(e.gen);
        return;
      case Kind::kHeartbeat:
        Heartbeat(e.node);
        return;
      case Kind::kToNode:
        DeliverToNode(e);
        return;
      case Kind::kToGen:
        DeliverToGen(e);
        return;
      case Kind::kHold:
      case Kind::kRelease:
        nodes_[e.node].world->HoldClose(e.kind == Kind::kHold);
        Trace(std::string(e.kind == Kind::kHold ? "hold" : "release") + " closes on " +
              nodes_[e.node].id.value());
        return;
      case Kind::kFailCreate:
        nodes_[e.node].world->FailNextCreate(IoError("injected create failure"));
        Trace("next create fails on " + nodes_[e.node].id.value());
        return;
    }
  }

  void StartGen(int gi) {
    Gen& g = gens_[gi];
    maintainer::MaintainerOptions o;
    o.changefeed_id = kCf;
    o.self = nodes_[g.self].id;
    o.epoch = MaintainerEpoch(g.epoch);
    o.checkpoint_ts = Ts(100);
    for (int t = 1; t <= kTables; ++t) {
      event::TableRef table;
      table.schema_id = 1;
      table.table_id = t;
      table.schema_name = "db1";
      table.table_name = "t" + std::to_string(t);
      o.tables.push_back(std::move(table));
    }
    for (int n : g.nodes) o.nodes.push_back(nodes_[n].id);
    o.table_trigger_id = g.trigger;
    o.resend_interval = std::chrono::milliseconds(500);
    o.clock = &clock_;
    o.outbox = g.outbox.get();
    Result<std::unique_ptr<maintainer::Maintainer>> created =
        maintainer::Maintainer::Create(std::move(o));
    if (!created.ok()) {
      Fail(GenName(gi) + ": Maintainer::Create: " + created.status().ToString());
      return;
    }
    g.m = std::move(created).value();
    Trace("start " + GenName(gi) + " trigger=" + IdString(g.trigger));
    g.m->Start();
    Push(At(now_ + rng_.Between(90, 110), Kind::kTick, gi));
  }

  void OnTick(int gi) {
    Gen& g = gens_[gi];
    g.m->Tick(clock_.Now());
    if (!g.m->closed()) Push(At(now_ + rng_.Between(90, 110), Kind::kTick, gi));
    if (gi + 1 != static_cast<int>(gens_.size()) || now_ < horizon_ + 500) return;
    if (!Unconverged().empty()) {
      converged_since_.reset();
    } else if (!converged_since_.has_value()) {
      converged_since_ = now_;
    } else if (now_ - *converged_since_ >= kSettleMs) {
      done_ = true;
    }
  }

  // Builds the node's heartbeat as NodeControl::SendHeartbeats does and
  // sends it to the generation that owns the node's manager.
  void Heartbeat(int n) {
    Node& node = nodes_[n];
    Push(At(now_ + rng_.Between(180, 220), Kind::kHeartbeat, -1, n));
    std::shared_ptr<DispatcherManager> m = node.orch->manager(kCf);
    if (m == nullptr || m->owner().empty()) return;
    maintainer::HeartbeatRequest hb;
    hb.changefeed_id = kCf;
    std::set<DispatcherId> ids;
    std::optional<Ts> min;
    for (const DispatcherStatus& s : m->CollectStatuses()) {
      hb.statuses.push_back(maintainer::SpanStatus{s.config.id, s.state, s.checkpoint_ts});
      ids.insert(s.config.id);
      if (s.state != ComponentState::kStopped) {
        min = min.has_value() ? std::min(*min, s.checkpoint_ts) : s.checkpoint_ts;
      }
    }
    if (ids != node.hb_ids) {
      node.hb_ids = std::move(ids);
      ++node.hb_seq;
    }
    if (min.has_value()) hb.watermark = maintainer::Watermark{*min, *min, node.hb_seq};
    const std::string what = "heartbeat of " + node.id.value();
    if (const size_t changed = CheckWorld(n, what); changed > 0) {
      Trace(what + " finished " + std::to_string(changed) + " closes");
    }
    const int target = GenOf(m->owner(), m->epoch());
    if (target < 0 || !failure_.empty()) return;
    if (Lost()) {
      ++stats_.lost;
      return;
    }
    Event e = At(now_ + Delay(), Kind::kToGen, target, n);
    e.reply =
        std::make_shared<Reply>(std::in_place_type<maintainer::HeartbeatRequest>, std::move(hb));
    Push(std::move(e));
  }

  int GenOf(const NodeId& owner, MaintainerEpoch epoch) const {
    for (size_t i = 0; i < gens_.size(); ++i) {
      const Gen& g = gens_[i];
      if (g.m != nullptr && g.epoch == epoch.value() && nodes_[g.self].id == owner) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // A node's handling of each request, and a summary of each answer.
  static std::optional<BootstrapResponse> Handle(DispatcherOrchestrator& o,
                                                 const BootstrapRequest& r) {
    return o.HandleBootstrap(r);
  }
  static std::optional<PostBootstrapResponse> Handle(DispatcherOrchestrator& o,
                                                     const PostBootstrapRequest& r) {
    return o.HandlePostBootstrap(r);
  }
  static std::optional<ScheduleResponse> Handle(DispatcherOrchestrator& o,
                                                const ScheduleRequest& r) {
    return o.HandleSchedule(r);
  }
  static std::optional<CloseResponse> Handle(DispatcherOrchestrator& o, const CloseRequest& r) {
    return o.HandleClose(r);
  }
  static std::string Summary(const BootstrapResponse& r) {
    return "bootstrap " + r.status.ToString() +
           (r.existing_trigger_id ? " existing=" + IdString(*r.existing_trigger_id) : "");
  }
  static std::string Summary(const PostBootstrapResponse& r) {
    return "post_bootstrap " + r.status.ToString();
  }
  static std::string Summary(const ScheduleResponse& r) {
    return "schedule " + IdString(r.dispatcher_id) + " " + r.status.ToString() + " " +
           std::string(StateName(r.state));
  }
  static std::string Summary(const CloseResponse& r) {
    return "close " + r.status.ToString() + (r.success ? " closed" : " closing") +
           (r.superseded ? " superseded" : "");
  }

  void DeliverToNode(const Event& e) {
    Node& node = nodes_[e.node];
    const std::string what = GenName(e.gen) + " " + Describe(*e.request) + " -> " + node.id.value();
    std::shared_ptr<Reply> reply;
    std::string result = "no answer";
    std::visit(
        [&](const auto& request) {
          auto response = Handle(*node.orch, request);
          if (!response.has_value()) return;
          result = Summary(*response);
          using Response = std::decay_t<decltype(*response)>;
          reply = std::make_shared<Reply>(std::in_place_type<Response>, std::move(*response));
        },
        *e.request);
    const auto* boot = std::get_if<BootstrapRequest>(e.request.get());
    if (boot != nullptr && boot->replace_trigger_id.has_value() && reply != nullptr) {
      if (!std::get<BootstrapResponse>(*reply).status.ok()) {
        ++stats_.replace_refusals;
      } else if (replaced_.emplace(e.gen, e.node).second) {
        ++stats_.replacements;
      }
    }
    ++stats_.deliveries;
    const bool lost = reply != nullptr && Lost();
    stats_.lost += lost ? 1 : 0;
    Trace(what + ": " + result + (lost ? " (answer lost)" : ""));
    CheckWorld(e.node, what);
    if (reply == nullptr || lost || !failure_.empty()) return;
    Event back = At(now_ + Delay(), Kind::kToGen, e.gen, e.node);
    back.reply = std::move(reply);
    Push(std::move(back));
  }

  void DeliverToGen(const Event& e) {
    Gen& g = gens_[e.gen];
    const NodeId& from = nodes_[e.node].id;
    if (const auto* hb = std::get_if<maintainer::HeartbeatRequest>(e.reply.get())) {
      g.m->OnHeartbeat(from, *hb);
    } else if (const auto* b = std::get_if<BootstrapResponse>(e.reply.get())) {
      g.m->OnBootstrapResponse(from, *b);
    } else if (const auto* p = std::get_if<PostBootstrapResponse>(e.reply.get())) {
      g.m->OnPostBootstrapResponse(from, *p);
    } else if (const auto* s = std::get_if<ScheduleResponse>(e.reply.get())) {
      g.m->OnScheduleResponse(from, *s);
    } else if (const auto* c = std::get_if<CloseResponse>(e.reply.get())) {
      g.m->OnCloseResponse(from, *c);
    }
    if (!g.fenced && g.m->status().code() == Code::kStaleOwner) {
      g.fenced = true;
      ++stats_.fenced;
      Trace(GenName(e.gen) + " fenced by the answer of " + from.value());
    }
  }

  // Applies the new entries of node `n`'s effect log and checks the
  // invariants; returns how many entries were new.
  size_t CheckWorld(int n, const std::string& where) {
    Node& node = nodes_[n];
    const std::vector<FakeEvent> events = node.world->events();
    const size_t before = node.seen;
    for (; node.seen < events.size() && failure_.empty(); ++node.seen) {
      const FakeEvent& fe = events[node.seen];
      switch (fe.kind) {
        case FakeEvent::Kind::kOwner:
          if (fe.epoch.value() < node.committed_epoch) {
            Fail(where + ": the owner of " + node.id.value() + " moved back from epoch " +
                 std::to_string(node.committed_epoch) + " to " + std::to_string(fe.epoch.value()));
          }
          node.owner = fe.owner;
          break;
        case FakeEvent::Kind::kCreate:
          if (alive_count_[fe.id]++ > 0) {
            Fail(where + ": " + IdString(fe.id) + " created on " + node.id.value() +
                 " while alive: " + AliveString());
          }
          node.alive.insert(fe.id);
          if (IsTrigger(fe.id) && node.owner != node.id) {
            Fail(where + ": trigger " + IdString(fe.id) + " created on " + node.id.value() +
                 " whose manager is owned by " + node.owner.value());
          }
          break;
        case FakeEvent::Kind::kClose:
          if (node.alive.erase(fe.id) == 0) {
            Fail(where + ": closed " + IdString(fe.id) + ", not alive on " + node.id.value());
          }
          if (auto it = alive_count_.find(fe.id); it != alive_count_.end() && --it->second <= 0) {
            alive_count_.erase(it);
          }
          break;
      }
    }
    if (std::shared_ptr<DispatcherManager> m = node.orch->manager(kCf)) {
      node.committed_epoch = std::max(node.committed_epoch, m->epoch().value());
    }
    if (std::vector<std::string> triggers = AliveTriggers(); triggers.size() > 1) {
      Fail(where + ": two table-trigger dispatchers alive: " + Join(triggers));
    }
    return node.seen - before;
  }

  static bool IsTrigger(DispatcherId id) {
    return id == maintainer::kDefaultTableTriggerId || id.high == kOwnTriggerHigh;
  }

  // "node:id" of every live trigger.
  std::vector<std::string> AliveTriggers() const {
    std::vector<std::string> out;
    for (const Node& node : nodes_) {
      for (DispatcherId id : node.alive) {
        if (IsTrigger(id)) out.push_back(node.id.value() + ":" + IdString(id));
      }
    }
    return out;
  }

  // What keeps the newest generation from its converged state, or "".
  std::string Unconverged() const {
    const Gen& g = gens_.back();
    if (g.m == nullptr) return "the newest generation never started";
    const maintainer::Maintainer& m = *g.m;
    const NodeId& self = nodes_[g.self].id;
    if (!m.status().ok()) return "newest status " + m.status().ToString();
    if (!m.bootstrapped()) return "newest not bootstrapped";
    if (!m.initialized()) return "newest not initialized";
    if (m.operators().size() > 0) {
      return "newest has " + std::to_string(m.operators().size()) + " operators in flight";
    }
    const size_t working = m.spans().CountInState(maintainer::ReplicaState::kWorking);
    if (working != static_cast<size_t>(kTables) || m.spans().size() != working) {
      return "newest has " + std::to_string(working) + " of " + std::to_string(m.spans().size()) +
             " spans working, want " + std::to_string(kTables);
    }
    const std::vector<std::string> want_triggers = {self.value() + ":" + IdString(g.trigger)};
    if (std::vector<std::string> triggers = AliveTriggers(); triggers != want_triggers) {
      return "alive triggers " + Join(triggers) + ", want " + want_triggers.front();
    }
    for (const Node& node : nodes_) {
      std::shared_ptr<DispatcherManager> mgr = node.orch->manager(kCf);
      if (mgr == nullptr) return "no manager on " + node.id.value();
      if (mgr->owner() != self || mgr->epoch() != MaintainerEpoch(g.epoch)) {
        return "the manager of " + node.id.value() + " is owned by (" + mgr->owner().value() + "," +
               std::to_string(mgr->epoch().value()) + ")";
      }
      if (node.id == self &&
          mgr->trigger_id(DispatcherMode::kDefault) != std::optional<DispatcherId>(g.trigger)) {
        return "the manager of " + node.id.value() + " does not name the newest trigger";
      }
      std::set<DispatcherId> want;
      for (DispatcherId id : m.spans().OnNode(node.id)) want.insert(id);
      std::set<DispatcherId> got;
      for (DispatcherId id : node.alive) {
        if (!IsTrigger(id)) got.insert(id);
      }
      if (got != want) {
        return "dispatchers on " + node.id.value() + " " + IdsString(got) +
               " != the newest generation's spans there " + IdsString(want);
      }
    }
    return "";
  }

  std::string GenName(int gi) const {
    const Gen& g = gens_[gi];
    return "g" + std::to_string(gi) + "(" + nodes_[g.self].id.value() + "," +
           std::to_string(g.epoch) + ")";
  }

  std::string NodeList(const std::vector<int>& nodes) const {
    std::vector<std::string> names;
    for (int n : nodes) names.push_back(nodes_[n].id.value());
    return Join(names);
  }

  std::string AliveString() const {
    std::string out;
    for (const Node& node : nodes_) out += " " + node.id.value() + IdsString(node.alive);
    return out;
  }

  static std::string Describe(const Request& request) {
    if (const auto* b = std::get_if<BootstrapRequest>(&request)) {
      std::string out = "bootstrap";
      if (b->table_trigger_id.has_value()) out += " trigger=" + IdString(*b->table_trigger_id);
      if (b->replace_trigger_id.has_value()) out += " replace=" + IdString(*b->replace_trigger_id);
      return out;
    }
    if (const auto* p = std::get_if<PostBootstrapRequest>(&request)) {
      return "post_bootstrap " + IdString(p->table_trigger_id);
    }
    if (const auto* s = std::get_if<ScheduleRequest>(&request)) {
      return std::string(s->action == ScheduleAction::kCreate ? "create " : "remove ") +
             IdString(s->config.id) + " table=" + std::to_string(s->config.table_id.value());
    }
    return "close";
  }

  static std::string Join(const std::vector<std::string>& items) {
    std::string out = "{";
    for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ",") + items[i];
    return out + "}";
  }

  static std::string IdsString(const std::set<DispatcherId>& ids) {
    std::vector<std::string> names;
    for (DispatcherId id : ids) names.push_back(IdString(id));
    return Join(names);
  }

  void Trace(const std::string& line) {
    trace_.push_back("t=" + std::to_string(now_) + " " + line);
    if (trace_.size() > kTraceLines) trace_.pop_front();
  }

  void Fail(const std::string& message) {
    if (failure_.empty()) failure_ = "seed " + std::to_string(seed_) + ": " + message;
  }

  const uint64_t seed_;
  Rng rng_;
  ManualClock clock_;  // Outlives the maintainers.
  std::vector<Node> nodes_;
  std::vector<Gen> gens_;  // Destroyed first.
  std::priority_queue<Event, std::vector<Event>, LaterFirst> queue_;
  uint64_t next_seq_ = 0;
  int64_t now_ = 0;
  int64_t horizon_ = 0;  // From here on nothing is lost.
  std::optional<int64_t> converged_since_;
  bool done_ = false;

  std::map<DispatcherId, int> alive_count_;  // Over every node.
  std::set<std::pair<int, int>> replaced_;   // (generation, node) takeovers.
  std::deque<std::string> trace_;
  std::string failure_;
  Stats stats_;
};

TEST(MaintainerInterleavingTest, RealGenerationsConvergeWithOneTrigger) {
  const std::string spec = testing::SeedSpec("1-100");
  std::vector<uint64_t> seeds;
  ASSERT_TRUE(testing::ParseSeeds(spec, &seeds)) << "bad SLUICE_INTERLEAVING_SEEDS: " << spec;

  testing::QuietLogs quiet;
  MaintainerSim::Stats total;
  int failed = 0;
  for (uint64_t seed : seeds) {
    MaintainerSim sim(seed);
    const std::string failure = sim.Run();
    total.Add(sim.stats());
    if (failure.empty()) continue;
    if (++failed <= 5) ADD_FAILURE() << failure << "\n" << sim.Report();
  }
  EXPECT_EQ(failed, 0) << failed << " of " << seeds.size() << " seeds failed (" << spec << ")";
  std::cout << "[ SEEDS    ] " << seeds.size() << " seeds (" << spec << "), " << total.deliveries
            << " deliveries, " << total.lost << " lost, " << total.replacements
            << " trigger takeovers (" << total.replace_refusals
            << " replacing bootstraps refused), " << total.fenced << " generations fenced\n";
  if (seeds.size() >= 100) {
    // The default run must take triggers over, or it proves nothing.
    EXPECT_GT(total.replacements, 0);
  }
}

}  // namespace
}  // namespace sluice::dispatchermanager
