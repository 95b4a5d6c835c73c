// The vocabulary of the model interleaving test (interleaving_test.cc): the
// node and ids it uses, what one maintainer generation is and wants, the
// steps it sends, the events of the virtual clock and the run's counters.
// Test-only; plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/strong_id.h"
#include "dispatchermanager/messages.h"
#include "dispatchermanager/test_fakes.h"

namespace sluice::dispatchermanager::interleaving {

using testing::Did;

constexpr char kChangefeed[] = "cf";
// The node that hosts the orchestrator under test.
constexpr char kThisNode[] = "node-a";
constexpr const char* kOtherNodes[] = {"node-b", "node-c"};
constexpr uint64_t kTriggerHigh = 9;
constexpr uint64_t kTableHigh = 1;
constexpr int kTables = 6;
constexpr int kLossPercent = 15;
constexpr int kMaxEvents = 200000;
constexpr char kDefaultSeeds[] = "1-200";

const DispatcherId kStableTrigger = Did(kTriggerHigh, 1);

inline DispatcherId TableDispatcher(int table) {
  return Did(kTableHigh, static_cast<uint64_t>(table));
}

inline bool IsTrigger(DispatcherId id) { return id.high == kTriggerHigh; }

template <typename T>
std::string SetString(const std::set<T>& values) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (const T& v : values) {
    out << (first ? "" : ",") << v;
    first = false;
  }
  out << "}";
  return out.str();
}

// What one maintainer generation is and wants.
struct Generation {
  std::string node;
  uint64_t epoch = 0;
  std::optional<DispatcherId> trigger;
  std::set<int> wanted;  // Tables it keeps.
  std::set<int> churn;   // Tables it creates and removes again.
  bool closes = false;
  bool close_required = false;  // The next generation names another trigger.
  bool removed = false;         // Its close removes the changefeed.
  // Its requests arrive in the order sent (one stream); otherwise any copy
  // may overtake any other. The newest generation is always ordered, so its
  // own late duplicates cannot undo its later steps.
  bool ordered = true;
  int64_t start_at = 0;
};

enum class Phase { kIdle, kBootstrap, kPostBootstrap, kSchedule, kClose, kDone, kStopped };

inline std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kIdle:
      return "idle";
    case Phase::kBootstrap:
      return "bootstrap";
    case Phase::kPostBootstrap:
      return "post_bootstrap";
    case Phase::kSchedule:
      return "schedule";
    case Phase::kClose:
      return "close";
    case Phase::kDone:
      return "done";
    case Phase::kStopped:
      return "stopped";
  }
  return "unknown";
}

struct Op {
  ScheduleAction action;
  int table;
};

// The operators on one dispatcher, applied one after the other.
struct Lane {
  std::vector<Op> ops;
  size_t next = 0;
};

// One request of one generation. Copies of the same step are duplicates.
struct Step {
  int gen = 0;
  Phase phase = Phase::kIdle;
  int lane = -1;
  size_t op = 0;
};

struct Actor {
  Phase phase = Phase::kIdle;
  std::vector<Lane> lanes;
  size_t open_lanes = 0;
};

enum class EventType {
  kStart,
  kDeliver,
  kRetry,
  kHeartbeat,
  kHoldClose,
  kReleaseClose,
  kFailCreate
};

struct Event {
  int64_t at = 0;
  uint64_t seq = 0;
  EventType type = EventType::kStart;
  Step step;
};

struct LaterFirst {
  bool operator()(const Event& a, const Event& b) const {
    return std::tie(a.at, a.seq) > std::tie(b.at, b.seq);
  }
};

enum class Outcome { kAck, kRetry, kStop };

struct Stats {
  int64_t deliveries = 0;
  int64_t resends = 0;
  int64_t lost_responses = 0;
  int64_t stale_refusals = 0;
  int64_t stale_after_takeover = 0;  // Refused requests of a superseded epoch.
  int64_t tombstone_blocks = 0;      // Bootstraps refused with no manager.
  int64_t trigger_conflicts = 0;
  int64_t superseded_closes = 0;
  int64_t managers_created = 0;
  int64_t newest_closed = 0;

  void Add(const Stats& o) {
    deliveries += o.deliveries;
    resends += o.resends;
    lost_responses += o.lost_responses;
    stale_refusals += o.stale_refusals;
    stale_after_takeover += o.stale_after_takeover;
    tombstone_blocks += o.tombstone_blocks;
    trigger_conflicts += o.trigger_conflicts;
    superseded_closes += o.superseded_closes;
    managers_created += o.managers_created;
    newest_closed += o.newest_closed;
  }
};

}  // namespace sluice::dispatchermanager::interleaving
