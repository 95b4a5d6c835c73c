// Seeded randomized interleavings of several maintainer generations of one
// changefeed talking to the DispatcherOrchestrator of one node.
//
// Every seed builds a scenario of 3 to 5 generations with increasing epochs.
// A generation on this node names a table-trigger dispatcher (mostly the
// node's stable id, sometimes its own); a generation on another node names
// none. Each generation is a small maintainer: it bootstraps, post-bootstraps
// (when it names a trigger), creates and removes table dispatchers planned
// from its bootstrap snapshot, and may close (pause or remove). A generation
// whose successor names another trigger always closes, as a real handover
// does. Requests are sent in the generation's causal order but delivered after
// random delays, resent until acknowledged, and some responses are lost, so
// duplicates and stale requests arrive at any time. Heartbeats (status
// collections), dispatchers that are slow to close and failed creations are
// mixed in. Everything runs on one thread over a virtual clock (a seeded
// priority queue of (deliver_at, event)); nothing sleeps.
//
// After every delivered event the fake world's ordered effect log is checked:
//  - never two table-trigger dispatchers alive at once, no id alive twice;
//  - owners only move forward: an owner change never goes to a lower epoch,
//    to the same epoch from another node, or to an epoch at or below a closed
//    one, and a new manager is created only by a bootstrap above every closed
//    epoch;
//  - a dispatcher is created (or closed by a request) only by the newest
//    owner: nothing of a stale epoch takes effect after a newer bootstrap was
//    accepted.
// When every message has been delivered, the state equals what the newest
// generation asked for: its owner, its trigger and its table dispatchers, or
// no manager if it closed.
//
// SLUICE_INTERLEAVING_SEEDS selects the seeds, e.g. "1-5000" or "7,12,40-50"
// (default "1-200"). Every failure names its seed, the scenario and the last
// events delivered.
#include <gtest/gtest.h>

#include <algorithm>
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
#include <vector>

#include "common/logging.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "dispatchermanager/interleaving_model.h"
#include "dispatchermanager/interleaving_test_util.h"
#include "dispatchermanager/test_fakes.h"

namespace sluice::dispatchermanager::interleaving {
namespace {

using testing::Boot;
using testing::CloseReq;
using testing::Did;
using testing::FakeEvent;
using testing::FakeProvider;
using testing::FakeWorld;
using testing::PostBoot;
using testing::Sched;

using testing::Rng;

class Simulation {
 public:
  explicit Simulation(uint64_t seed) : seed_(seed), rng_(seed) {
    world_ = provider_.world(kChangefeed);
    BuildScenario();
  }

  // Runs the seed; returns the first violated invariant, or "".
  std::string Run() {
    for (size_t i = 0; i < gens_.size(); ++i) {
      Push(gens_[i].start_at, EventType::kStart, Step{static_cast<int>(i)});
    }
    Push(5, EventType::kHeartbeat, Step{});
    for (int64_t n = rng_.Between(0, 2); n > 0; --n) {
      int64_t from = rng_.Between(0, 300);
      Push(from, EventType::kHoldClose, Step{});
      Push(from + rng_.Between(10, 150), EventType::kReleaseClose, Step{});
    }
    for (int64_t n = rng_.Between(0, 2); n > 0; --n) {
      Push(rng_.Between(0, 400), EventType::kFailCreate, Step{});
    }
    int events = 0;
    while (!queue_.empty() && failure_.empty()) {
      if (++events > kMaxEvents) {
        Fail("did not converge within " + std::to_string(kMaxEvents) + " events");
        break;
      }
      Event e = queue_.top();
      queue_.pop();
      now_ = e.at;
      Dispatch(e);
    }
    if (failure_.empty()) CheckFinal();
    return failure_;
  }

  // The scenario and the last events, for failure messages.
  std::string Report() const {
    std::ostringstream out;
    out << "scenario (seed " << seed_ << "):\n";
    for (size_t i = 0; i < gens_.size(); ++i) {
      const Generation& g = gens_[i];
      out << "  g" << i << " node=" << g.node << " epoch=" << g.epoch
          << " trigger=" << (g.trigger.has_value() ? IdString(*g.trigger) : "none")
          << " wanted=" << SetString(g.wanted) << " churn=" << SetString(g.churn)
          << " close=" << (g.closes ? (g.removed ? "remove" : "pause") : "no")
          << (g.ordered ? " ordered" : " unordered") << (g.close_required ? "(handover)" : "")
          << " start=" << g.start_at << " final_phase=" << PhaseName(actors_[i].phase) << "\n";
    }
    out << "last events:\n";
    for (const std::string& line : trace_) out << "  " << line << "\n";
    return out.str();
  }

  const Stats& stats() const { return stats_; }

 private:
  void BuildScenario() {
    const int n = static_cast<int>(rng_.Between(3, 5));
    uint64_t epoch = 0;
    for (int i = 0; i < n; ++i) {
      Generation g;
      epoch += static_cast<uint64_t>(rng_.Between(1, 2));
      g.epoch = epoch;
      if (rng_.Percent(55)) {
        g.node = kThisNode;
        g.trigger = rng_.Percent(75) ? kStableTrigger : Did(kTriggerHigh, 100 + i);
      } else {
        g.node = kOtherNodes[rng_.Below(2)];
      }
      for (int t = 1; t <= kTables; ++t) {
        if (rng_.Percent(50)) {
          g.wanted.insert(t);
        } else if (rng_.Percent(25)) {
          g.churn.insert(t);
        }
      }
      g.closes = rng_.Percent(i == n - 1 ? 30 : 15);
      g.removed = rng_.Percent(50);
      g.ordered = i == n - 1 || rng_.Percent(50);
      g.start_at = i * 40 + rng_.Between(0, 80);
      gens_.push_back(std::move(g));
    }
    for (int i = 0; i + 1 < n; ++i) {
      Generation& g = gens_[i];
      if (g.trigger.has_value() && gens_[i + 1].trigger != g.trigger) {
        g.close_required = true;
        g.closes = true;
      }
    }
    actors_.resize(gens_.size());
    stream_free_at_.resize(gens_.size(), 0);
  }

  void Push(int64_t at, EventType type, Step step) {
    queue_.push(Event{at, next_seq_++, type, step});
  }

  int64_t Delay() { return rng_.Percent(85) ? rng_.Between(1, 15) : rng_.Between(20, 320); }

  void Send(const Step& step) {
    int64_t at = now_ + Delay();
    if (gens_[step.gen].ordered) {
      // Equal times deliver in push order.
      at = std::max(at, stream_free_at_[step.gen]);
      stream_free_at_[step.gen] = at;
    }
    Push(at, EventType::kDeliver, step);
    Push(now_ + rng_.Between(30, 70), EventType::kRetry, step);
  }

  bool Active(const Actor& a) const {
    return a.phase != Phase::kDone && a.phase != Phase::kStopped;
  }

  bool IsPending(const Step& step) const {
    const Actor& a = actors_[step.gen];
    if (a.phase != step.phase) return false;
    if (step.phase != Phase::kSchedule) return true;
    const Lane& lane = a.lanes[step.lane];
    return lane.next == step.op && step.op < lane.ops.size();
  }

  void Dispatch(const Event& e) {
    switch (e.type) {
      case EventType::kStart:
        actors_[e.step.gen].phase = Phase::kBootstrap;
        Send(Step{e.step.gen, Phase::kBootstrap});
        return;
      case EventType::kDeliver:
        Deliver(e.step);
        return;
      case EventType::kRetry:
        if (IsPending(e.step)) {
          ++stats_.resends;
          Send(e.step);
        }
        return;
      case EventType::kHeartbeat:
        if (std::shared_ptr<DispatcherManager> m = orch_.manager(kChangefeed)) {
          m->CollectStatuses();
        }
        Trace("heartbeat");
        CheckEffects(nullptr);
        if (std::any_of(actors_.begin(), actors_.end(),
                        [this](const Actor& a) { return Active(a); })) {
          Push(now_ + rng_.Between(10, 40), EventType::kHeartbeat, Step{});
        }
        return;
      case EventType::kHoldClose:
        world_->HoldClose(true);
        Trace("hold close");
        return;
      case EventType::kReleaseClose:
        world_->HoldClose(false);
        Trace("release close");
        return;
      case EventType::kFailCreate:
        world_->FailNextCreate(IoError("injected create failure"));
        Trace("fail next create");
        return;
    }
  }

  std::string StepName(const Step& step) const {
    const Generation& g = gens_[step.gen];
    std::ostringstream out;
    out << "g" << step.gen << "(" << g.node << "," << g.epoch << ") " << PhaseName(step.phase);
    if (step.phase == Phase::kSchedule) {
      const Op& op = actors_[step.gen].lanes[step.lane].ops[step.op];
      out << (op.action == ScheduleAction::kCreate ? " create " : " remove ")
          << IdString(TableDispatcher(op.table));
    }
    return out.str();
  }

  void Trace(std::string line) {
    trace_.push_back("t=" + std::to_string(now_) + " " + std::move(line));
    if (trace_.size() > 40) trace_.pop_front();
  }

  void Fail(const std::string& message) {
    if (failure_.empty()) failure_ = "seed " + std::to_string(seed_) + ": " + message;
  }

  // Refusals of a request whose epoch is below the newest accepted one.
  void CountStale(const Step& step) {
    ++stats_.stale_refusals;
    if (gens_[step.gen].epoch < max_owner_epoch_) ++stats_.stale_after_takeover;
  }

  void Deliver(const Step& step) {
    const Generation& g = gens_[step.gen];
    ++stats_.deliveries;
    Outcome outcome = Outcome::kRetry;
    std::optional<BootstrapResponse> snapshot;
    std::string result;
    switch (step.phase) {
      case Phase::kBootstrap: {
        const bool had_manager = orch_.manager(kChangefeed) != nullptr;
        std::optional<BootstrapResponse> r =
            orch_.HandleBootstrap(Boot(g.node, g.epoch, g.trigger));
        if (!r.has_value()) {
          Fail(StepName(step) + ": no response although the node is not fenced");
          return;
        }
        result = r->status.ToString();
        switch (r->status.code()) {
          case Code::kOk:
            if (r->epoch != MaintainerEpoch(g.epoch)) {
              Fail(StepName(step) + ": response epoch " + std::to_string(r->epoch.value()));
            }
            if (std::shared_ptr<DispatcherManager> m = orch_.manager(kChangefeed);
                m == nullptr || m->epoch() != r->epoch || m->owner() != NodeId(g.node)) {
              Fail(StepName(step) + ": accepted but the manager has another owner");
            }
            outcome = Outcome::kAck;
            snapshot = std::move(r);
            break;
          case Code::kStaleOwner:
            CountStale(step);
            if (!had_manager) ++stats_.tombstone_blocks;
            outcome = Outcome::kStop;
            break;
          case Code::kAborted:
            ++stats_.trigger_conflicts;
            outcome = Outcome::kRetry;
            break;
          case Code::kIoError:
            outcome = Outcome::kRetry;
            break;
          default:
            Fail(StepName(step) + ": unexpected status " + result);
            return;
        }
        break;
      }
      case Phase::kPostBootstrap: {
        std::optional<PostBootstrapResponse> r =
            orch_.HandlePostBootstrap(PostBoot(g.node, g.epoch, *g.trigger));
        if (!r.has_value()) {
          Fail(StepName(step) + ": no response although the node is not fenced");
          return;
        }
        result = r->status.ToString();
        switch (r->status.code()) {
          case Code::kOk:
            outcome = Outcome::kAck;
            break;
          case Code::kStaleOwner:
            CountStale(step);
            outcome = Outcome::kStop;
            break;
          case Code::kNotFound:
          case Code::kAborted:
            outcome = Outcome::kStop;
            break;
          default:
            Fail(StepName(step) + ": unexpected status " + result);
            return;
        }
        break;
      }
      case Phase::kSchedule: {
        const Op& op = actors_[step.gen].lanes[step.lane].ops[step.op];
        std::optional<ScheduleResponse> r =
            orch_.HandleSchedule(Sched(g.node, g.epoch, op.action, TableDispatcher(op.table)));
        if (!r.has_value()) {
          Fail(StepName(step) + ": no response although the node is not fenced");
          return;
        }
        result = r->status.ToString();
        switch (r->status.code()) {
          case Code::kOk: {
            result += std::string(" ") + std::string(StateName(r->state));
            const ComponentState done = op.action == ScheduleAction::kCreate
                                            ? ComponentState::kWorking
                                            : ComponentState::kStopped;
            outcome = r->state == done ? Outcome::kAck : Outcome::kRetry;
            break;
          }
          case Code::kStaleOwner:
            CountStale(step);
            outcome = Outcome::kStop;
            break;
          case Code::kNotFound:
            outcome = Outcome::kStop;
            break;
          case Code::kIoError:
            outcome = Outcome::kRetry;
            break;
          default:
            Fail(StepName(step) + ": unexpected status " + result);
            return;
        }
        break;
      }
      case Phase::kClose: {
        std::optional<CloseResponse> r = orch_.HandleClose(CloseReq(g.node, g.epoch, g.removed));
        if (!r.has_value()) {
          Fail(StepName(step) + ": no response although the node is not fenced");
          return;
        }
        result = r->status.ToString();
        if (!r->status.ok()) {
          Fail(StepName(step) + ": unexpected status " + result);
          return;
        }
        if (r->superseded) {
          result += " superseded";
          CountStale(step);
          ++stats_.superseded_closes;
          outcome = Outcome::kStop;
        } else if (r->success) {
          result += " closed";
          // Checked against the effects first: a manager recreated by this
          // very close would be a bug too.
          CheckEffects(&step);
          closed_max_ = std::max(closed_max_, g.epoch);
          outcome = Outcome::kAck;
        } else {
          result += " closing";
          outcome = Outcome::kRetry;
        }
        break;
      }
      default:
        Fail("delivered a step of phase " + std::string(PhaseName(step.phase)));
        return;
    }
    Trace("deliver " + StepName(step) + " -> " + result);
    CheckEffects(&step);
    if (!failure_.empty()) return;
    if (rng_.Percent(kLossPercent)) {
      ++stats_.lost_responses;
      return;
    }
    OnResponse(step, outcome, snapshot);
  }

  // Applies the new entries of the effect log and checks the invariants.
  // `step` is the request being delivered, or null for a heartbeat.
  void CheckEffects(const Step* step) {
    const NodeId previous_owner = owner_;
    const uint64_t previous_epoch = max_owner_epoch_;
    bool owner_changed = false;
    std::vector<FakeEvent> events = world_->events();
    for (; seen_ < events.size() && failure_.empty(); ++seen_) {
      const FakeEvent& e = events[seen_];
      const std::string where = step != nullptr ? StepName(*step) : std::string("heartbeat");
      const bool from_owner = step != nullptr && gens_[step->gen].node == owner_.value() &&
                              gens_[step->gen].epoch == max_owner_epoch_;
      switch (e.kind) {
        case FakeEvent::Kind::kOwner:
          if (step == nullptr || step->phase != Phase::kBootstrap) {
            Fail(where + ": owner changed outside a bootstrap");
          } else if (e.epoch.value() < max_owner_epoch_) {
            Fail(where + ": owner moved back from epoch " + std::to_string(max_owner_epoch_) +
                 " to " + std::to_string(e.epoch.value()));
          } else if (e.epoch.value() == max_owner_epoch_ && e.owner != owner_) {
            Fail(where + ": epoch " + std::to_string(max_owner_epoch_) + " taken from " +
                 owner_.value() + " by " + e.owner.value());
          } else if (e.epoch.value() <= closed_max_) {
            Fail(where + ": closed epoch " + std::to_string(closed_max_) +
                 " taken over again by epoch " + std::to_string(e.epoch.value()));
          }
          owner_ = e.owner;
          max_owner_epoch_ = std::max(max_owner_epoch_, e.epoch.value());
          owner_changed = true;
          break;
        case FakeEvent::Kind::kCreate:
          if (++alive_[e.id] > 1) Fail(where + ": " + IdString(e.id) + " created twice");
          if (!from_owner) {
            Fail(where + ": created " + IdString(e.id) + " although epoch " +
                 std::to_string(max_owner_epoch_) + " of " + owner_.value() + " was accepted");
          }
          break;
        case FakeEvent::Kind::kClose:
          if (--alive_[e.id] < 0) Fail(where + ": closed " + IdString(e.id) + " twice");
          if (alive_[e.id] <= 0) alive_.erase(e.id);
          if (step != nullptr && !from_owner) {
            Fail(where + ": closed " + IdString(e.id) + " although epoch " +
                 std::to_string(max_owner_epoch_) + " of " + owner_.value() + " was accepted");
          }
          break;
      }
    }
    std::set<DispatcherId> triggers;
    for (const auto& [id, n] : alive_) {
      if (IsTrigger(id)) triggers.insert(id);
    }
    if (triggers.size() > 1) {
      Fail("two table-trigger dispatchers alive: " + IdsString(triggers));
    }
    std::shared_ptr<DispatcherManager> m = orch_.manager(kChangefeed);
    if (owner_changed && m == nullptr) {
      // The owner of a new manager whose bootstrap failed: it was dropped
      // unpublished, so its epoch was never accepted.
      owner_ = previous_owner;
      max_owner_epoch_ = previous_epoch;
    }
    if (m != nullptr && m != manager_) {
      ++stats_.managers_created;
      if (step == nullptr || step->phase != Phase::kBootstrap) {
        Fail("a manager appeared outside a bootstrap");
      } else if (gens_[step->gen].epoch <= closed_max_) {
        Fail(StepName(*step) + ": recreated the manager closed at epoch " +
             std::to_string(closed_max_));
      }
    }
    manager_ = m;
    if (m != nullptr && (m->epoch().value() != max_owner_epoch_ || m->owner() != owner_)) {
      Fail("manager owner (" + m->owner().value() + "," + std::to_string(m->epoch().value()) +
           ") differs from the last owner change (" + owner_.value() + "," +
           std::to_string(max_owner_epoch_) + ")");
    }
    std::optional<MaintainerEpoch> closed = orch_.closed_epoch(kChangefeed);
    if (closed.value_or(MaintainerEpoch(0)).value() > std::max(closed_max_, max_owner_epoch_)) {
      Fail("tombstone " + std::to_string(closed->value()) + " above every epoch seen");
    }
  }

  static std::string IdsString(const std::set<DispatcherId>& ids) {
    std::set<std::string> names;
    for (DispatcherId id : ids) names.insert(IdString(id));
    return SetString(names);
  }

  void OnResponse(const Step& step, Outcome outcome,
                  const std::optional<BootstrapResponse>& snapshot) {
    if (!IsPending(step)) return;  // A duplicate of a finished step.
    Actor& a = actors_[step.gen];
    switch (outcome) {
      case Outcome::kRetry:
        return;  // The retry timer resends.
      case Outcome::kStop:
        a.phase = Phase::kStopped;  // Superseded: the maintainer goes away.
        return;
      case Outcome::kAck:
        break;
    }
    // An older generation that is not needed for a handover may also just
    // go away (its node died, it was removed) between two steps.
    const bool may_vanish =
        step.gen + 1 < static_cast<int>(gens_.size()) && !gens_[step.gen].close_required;
    if (may_vanish && rng_.Percent(4)) {
      a.phase = Phase::kStopped;
      return;
    }
    switch (step.phase) {
      case Phase::kBootstrap:
        Plan(step.gen, *snapshot);
        if (gens_[step.gen].trigger.has_value()) {
          a.phase = Phase::kPostBootstrap;
          Send(Step{step.gen, Phase::kPostBootstrap});
        } else {
          EnterSchedule(step.gen);
        }
        return;
      case Phase::kPostBootstrap:
        EnterSchedule(step.gen);
        return;
      case Phase::kSchedule: {
        Lane& lane = a.lanes[step.lane];
        if (++lane.next < lane.ops.size()) {
          Send(Step{step.gen, Phase::kSchedule, step.lane, lane.next});
        } else if (--a.open_lanes == 0) {
          EnterClose(step.gen);
        }
        return;
      }
      case Phase::kClose:
        a.phase = Phase::kDone;
        return;
      default:
        return;
    }
  }

  // The schedule a maintainer derives from its bootstrap snapshot: keep or
  // create its wanted tables, create and remove its churn tables, remove
  // every other reported table dispatcher.
  void Plan(int gen, const BootstrapResponse& snapshot) {
    const Generation& g = gens_[gen];
    std::set<int> reported;
    for (const DispatcherStatus& s : snapshot.spans) {
      if (s.config.id.high == kTableHigh) reported.insert(static_cast<int>(s.config.id.low));
    }
    std::vector<Lane> lanes;
    for (int t = 1; t <= kTables; ++t) {
      Lane lane;
      if (g.wanted.count(t) > 0) {
        lane.ops = {{ScheduleAction::kCreate, t}};
      } else if (g.churn.count(t) > 0) {
        lane.ops = {{ScheduleAction::kCreate, t}, {ScheduleAction::kRemove, t}};
      } else if (reported.count(t) > 0) {
        lane.ops = {{ScheduleAction::kRemove, t}};
      } else {
        continue;
      }
      lanes.push_back(std::move(lane));
    }
    // Random order of first sends.
    for (size_t i = lanes.size(); i > 1; --i) std::swap(lanes[i - 1], lanes[rng_.Below(i)]);
    actors_[gen].lanes = std::move(lanes);
  }

  void EnterSchedule(int gen) {
    Actor& a = actors_[gen];
    a.phase = Phase::kSchedule;
    a.open_lanes = a.lanes.size();
    if (a.open_lanes == 0) {
      EnterClose(gen);
      return;
    }
    for (size_t i = 0; i < a.lanes.size(); ++i) {
      Send(Step{gen, Phase::kSchedule, static_cast<int>(i), 0});
    }
  }

  void EnterClose(int gen) {
    Actor& a = actors_[gen];
    if (!gens_[gen].closes) {
      a.phase = Phase::kDone;
      return;
    }
    a.phase = Phase::kClose;
    Send(Step{gen, Phase::kClose});
  }

  void CheckFinal() {
    const Generation& g = gens_.back();
    const Actor& a = actors_.back();
    Trace("final");
    if (a.phase != Phase::kDone) {
      Fail("the newest generation did not finish: phase " + std::string(PhaseName(a.phase)));
      return;
    }
    std::set<DispatcherId> alive;
    for (const auto& [id, n] : alive_) alive.insert(id);
    std::shared_ptr<DispatcherManager> m = orch_.manager(kChangefeed);
    if (g.closes) {
      ++stats_.newest_closed;
      if (m != nullptr) Fail("a manager is alive after the newest generation closed");
      if (!alive.empty()) Fail("dispatchers alive after the newest close: " + IdsString(alive));
      if (orch_.closed_epoch(kChangefeed) != MaintainerEpoch(g.epoch)) {
        Fail("closed epoch is not the newest epoch " + std::to_string(g.epoch));
      }
      return;
    }
    std::set<DispatcherId> expected;
    for (int t : g.wanted) expected.insert(TableDispatcher(t));
    if (g.trigger.has_value()) expected.insert(*g.trigger);
    if (m == nullptr) {
      Fail("no manager although the newest generation did not close");
      return;
    }
    if (m->owner() != NodeId(g.node) || m->epoch() != MaintainerEpoch(g.epoch)) {
      Fail("final owner (" + m->owner().value() + "," + std::to_string(m->epoch().value()) +
           ") is not the newest generation");
    }
    if (m->trigger_id(DispatcherMode::kDefault) != g.trigger) {
      std::optional<DispatcherId> t = m->trigger_id(DispatcherMode::kDefault);
      Fail("final table trigger " + (t.has_value() ? IdString(*t) : std::string("none")) +
           " is not the newest generation's");
    }
    if (alive != expected) {
      Fail("alive dispatchers " + IdsString(alive) + " != wanted " + IdsString(expected));
    }
    std::set<DispatcherId> reported;
    for (const DispatcherStatus& s : m->CollectStatuses()) {
      reported.insert(s.config.id);
      if (s.state != ComponentState::kWorking) {
        Fail(IdString(s.config.id) + " is " + std::string(StateName(s.state)) + " at the end");
      }
    }
    if (reported != expected) {
      Fail("reported dispatchers " + IdsString(reported) + " != wanted " + IdsString(expected));
    }
    if (!m->operators().empty()) Fail("operators left in flight at the end");
    CheckEffects(nullptr);
  }

  const uint64_t seed_;
  Rng rng_;
  FakeProvider provider_;
  DispatcherOrchestrator orch_{&provider_};
  std::shared_ptr<FakeWorld> world_;
  std::vector<Generation> gens_;
  std::vector<Actor> actors_;
  std::priority_queue<Event, std::vector<Event>, LaterFirst> queue_;
  uint64_t next_seq_ = 0;
  int64_t now_ = 0;
  std::vector<int64_t> stream_free_at_;

  // What the effect log showed so far.
  size_t seen_ = 0;
  std::map<DispatcherId, int> alive_;
  NodeId owner_;
  uint64_t max_owner_epoch_ = 0;
  uint64_t closed_max_ = 0;  // Highest epoch whose close was acknowledged.
  std::shared_ptr<DispatcherManager> manager_;

  std::deque<std::string> trace_;
  std::string failure_;
  Stats stats_;
};

TEST(InterleavingTest, GenerationsConvergeToNewestAndNeverOverlap) {
  const std::string spec = testing::SeedSpec(kDefaultSeeds);
  std::vector<uint64_t> seeds;
  ASSERT_TRUE(testing::ParseSeeds(spec, &seeds)) << "bad SLUICE_INTERLEAVING_SEEDS: " << spec;

  testing::QuietLogs quiet;
  Stats total;
  int failed = 0;
  for (uint64_t seed : seeds) {
    Simulation sim(seed);
    std::string failure = sim.Run();
    total.Add(sim.stats());
    if (failure.empty()) continue;
    if (++failed <= 5) ADD_FAILURE() << failure << "\n" << sim.Report();
  }
  EXPECT_EQ(failed, 0) << failed << " of " << seeds.size() << " seeds failed (" << spec << ")";
  std::cout << "[ SEEDS    ] " << seeds.size() << " seeds (" << spec << "), " << total.deliveries
            << " deliveries, " << total.resends << " resends, " << total.lost_responses
            << " lost responses, " << total.stale_refusals << " stale refusals ("
            << total.stale_after_takeover << " after a takeover, " << total.tombstone_blocks
            << " by a tombstone), " << total.trigger_conflicts << " trigger conflicts, "
            << total.superseded_closes << " superseded closes, " << total.managers_created
            << " managers created, " << total.newest_closed << " newest generations closed\n";
  if (seeds.size() >= 100) {
    // The default run must reach every interesting path, or it proves nothing.
    EXPECT_GT(total.stale_after_takeover, 0);
    EXPECT_GT(total.tombstone_blocks, 0);
    EXPECT_GT(total.trigger_conflicts, 0);
    EXPECT_GT(total.superseded_closes, 0);
    EXPECT_GT(total.newest_closed, 0);
  }
}

}  // namespace
}  // namespace sluice::dispatchermanager::interleaving
