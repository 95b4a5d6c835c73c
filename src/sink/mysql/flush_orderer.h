// FlushOrderer: delivers PostFlush of each dispatcher's DML events in the
// order the dispatcher added them, although the sink's workers write
// non-conflicting events in parallel and finish them in any order. A
// dispatcher's checkpoint is then simply its last flushed commit ts.
//
// Thread-safe. Register() is called in add order per dispatcher; Done() from
// any worker. PostFlush callbacks run without the lock held, on the thread
// whose Done() completed the ready prefix, one dispatcher at a time in order
// (so a callback may call back into the sink).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "event/events.h"

namespace sluice::sink {

class FlushOrderer {
 public:
  // Appends `event` to its dispatcher's lane; returns its sequence number.
  uint64_t Register(const event::DmlEventPtr& event) EXCLUDES(mu_);

  // Marks the event (dispatcher, seq) written and runs PostFlush for the
  // lane's written prefix.
  void Done(DispatcherId dispatcher, uint64_t seq) EXCLUDES(mu_);

  // An event Register() numbered: its dispatcher and sequence number.
  struct Written {
    DispatcherId dispatcher;
    uint64_t seq = 0;
  };
  // Done() for each of `written` (a worker's batch), marking them all under
  // one lock acquisition; then delivers each lane this call has to.
  void Done(const std::vector<Written>& written) EXCLUDES(mu_);

  // Forgets every registered event (they will never be flushed).
  void Abandon() EXCLUDES(mu_);

  // Registered events not delivered yet.
  size_t pending() const EXCLUDES(mu_);

 private:
  // Runs PostFlush for the lane's written prefix until none is left; the
  // caller set the lane's `delivering`.
  void Deliver(DispatcherId dispatcher) EXCLUDES(mu_);

  struct Entry {
    event::DmlEventPtr event;
    bool done = false;
  };
  struct Lane {
    std::deque<Entry> entries;
    uint64_t first_seq = 0;  // Sequence number of entries.front().
    bool delivering = false;
  };

  mutable Mutex mu_;
  std::map<DispatcherId, Lane> lanes_ GUARDED_BY(mu_);
  size_t pending_ GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::sink
