// Barrier: the maintainer's side of DDL and syncpoint block events (TiCDC
// maintainer/barrier.go). For each event it collects WAITING from every
// involved dispatcher (kNormal: the listed tables, table 0 meaning the table
// trigger; kDb: every replica of the schema plus the table trigger; kAll:
// every replica plus the table trigger; taken from the span controller when
// the event is started), picks one writer (the table trigger when involved,
// else the lowest id), sends it Write, and once the writer reports DONE
// applies the event's dropped and added tables and sends Pass to the others.
// Write and Pass are resent on Tick() until the dispatcher reports DONE (or
// a checkpoint at or past the event, or is removed). Events are started in
// (block ts, is_syncpoint) order where it matters: an event is not started
// while an earlier unfinished event shares a dispatcher with it, nor (for a
// db- or all-level event) while an earlier one changes the table set.
//
// Thread-compatible: owned by the Maintainer and used from its thread only.
// The SpanController is borrowed and must outlive this object.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/clock.h"
#include "common/strong_id.h"
#include "maintainer/messages.h"
#include "maintainer/span_controller.h"

namespace sluice::maintainer {

// A DDL and a syncpoint at the same ts are distinct; the DDL comes first.
struct BlockEventKey {
  Ts block_ts;
  bool is_syncpoint = false;
  auto operator<=>(const BlockEventKey&) const = default;
};

class Barrier {
 public:
  struct Callbacks {
    // Sends `action` for `key` to the listed dispatchers on `to`.
    std::function<void(const NodeId& to, const BlockEventKey& key, dispatcher::BarrierAction action,
                       const std::vector<DispatcherId>& ids)>
        send;
    // Applies the table-set change of an event (drops, then adds at its ts).
    std::function<void(const BlockEventKey& key, const std::vector<int64_t>& drops,
                       const std::vector<event::TableRef>& adds)>
        apply;
  };

  Barrier(const SpanController* spans, Callbacks callbacks, Clock::Duration resend_interval);

  // A WAITING or DONE report (stage NONE is not a barrier report; ignored).
  void OnBlockStatus(const BlockReport& report, Clock::TimePoint now);
  // A dispatcher reported a checkpoint: it is past every event at or below.
  void OnProgress(DispatcherId id, Ts checkpoint, Clock::TimePoint now);
  // Resends unacknowledged actions; retries events blocked by the span set
  // (a replica without a node yet).
  void Tick(Clock::TimePoint now);
  // Forgets finished events below the changefeed checkpoint.
  void Prune(Ts checkpoint);

  // block ts - 1 of the earliest unfinished event, if any.
  std::optional<Ts> MinCheckpoint() const;
  size_t pending() const { return events_.size(); }
  // The writer picked for an unfinished event, if one was picked.
  std::optional<DispatcherId> WriterOf(const BlockEventKey& key) const;

 private:
  struct Event {
    event::BlockedTables blocked;
    std::vector<event::TableRef> adds;
    std::vector<int64_t> drops;
    std::set<DispatcherId> waiting;
    std::set<DispatcherId> involved;  // Fixed when the writer is picked.
    std::optional<DispatcherId> writer;
    bool writer_done = false;
    std::set<DispatcherId> passers;  // Pass sent, DONE not yet seen.
    Clock::TimePoint last_sent;
  };

  std::set<DispatcherId> Involved(const event::BlockedTables& blocked) const;
  bool MustWait(const BlockEventKey& key, const Event& e, const std::set<DispatcherId>& ids) const;
  void TryStartAll(Clock::TimePoint now);
  void WriterDone(const BlockEventKey& key, Event* e, Clock::TimePoint now);
  void PassDone(const BlockEventKey& key, DispatcherId id, Clock::TimePoint now);
  // Sends `action` to `ids`, grouped by node; dispatchers without a node
  // wait for the next resend.
  void SendGrouped(const BlockEventKey& key, dispatcher::BarrierAction action,
                   const std::set<DispatcherId>& ids);
  void DropGone(Event* e);
  void FinishIfDone(const BlockEventKey& key, Clock::TimePoint now);

  const SpanController* const spans_;
  const Callbacks callbacks_;
  const Clock::Duration resend_interval_;
  std::map<BlockEventKey, Event> events_;
  std::map<BlockEventKey, DispatcherId> finished_;  // Event -> its writer.
};

}  // namespace sluice::maintainer
