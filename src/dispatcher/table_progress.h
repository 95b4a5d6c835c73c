// TableProgress: what one dispatcher has handed to the sink and not yet seen
// flushed, and the checkpoint that allows (TiCDC
// downstreamadapter/dispatcher/table_progress.go with the dispatcher's
// GetCheckpointTs rule):
//   - something pending: the earliest pending commit ts - 1;
//   - nothing pending:   max(largest commit ts written or passed - 1,
//                            the last resolved ts received);
// and never below a checkpoint already returned.
// Thread-safe: the dispatcher adds, the sink's threads remove (PostFlush).
#pragma once

#include <cstddef>
#include <map>
#include <utility>

#include "common/strong_id.h"
#include "common/thread_annotations.h"

namespace sluice::dispatcher {

class TableProgress {
 public:
  // Before any event the checkpoint is `start_ts`.
  explicit TableProgress(Ts start_ts);

  // An event (a transaction or one piece of it) went to the sink. Pieces of
  // one transaction share (commit ts, start ts) and are counted.
  void Add(Ts commit_ts, Ts start_ts) EXCLUDES(mu_);
  // One Add of that pair was flushed. Unknown pairs are ignored.
  void Remove(Ts commit_ts, Ts start_ts) EXCLUDES(mu_);
  // A block event at commit_ts was written or passed.
  void Pass(Ts commit_ts) EXCLUDES(mu_);
  // Every event with commit ts <= ts has been received. Lower values are
  // ignored.
  void UpdateResolved(Ts ts) EXCLUDES(mu_);

  bool Empty() const EXCLUDES(mu_);
  size_t Pending() const EXCLUDES(mu_);
  Ts resolved_ts() const EXCLUDES(mu_);
  Ts Checkpoint() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<std::pair<Ts, Ts>, size_t> pending_ GUARDED_BY(mu_);  // (commit, start) -> count
  Ts max_commit_ GUARDED_BY(mu_);  // Largest commit ts added or passed; 0 before any.
  Ts resolved_ GUARDED_BY(mu_);
  mutable Ts last_checkpoint_ GUARDED_BY(mu_);
};

}  // namespace sluice::dispatcher
