#include "dispatcher/table_progress.h"

#include <algorithm>

namespace sluice::dispatcher {

TableProgress::TableProgress(Ts start_ts) : resolved_(start_ts), last_checkpoint_(start_ts) {}

void TableProgress::Add(Ts commit_ts, Ts start_ts) {
  MutexLock lock(&mu_);
  ++pending_[{commit_ts, start_ts}];
  max_commit_ = std::max(max_commit_, commit_ts);
}

void TableProgress::Remove(Ts commit_ts, Ts start_ts) {
  MutexLock lock(&mu_);
  auto it = pending_.find({commit_ts, start_ts});
  if (it == pending_.end()) return;
  if (--it->second == 0) pending_.erase(it);
}

void TableProgress::Pass(Ts commit_ts) {
  MutexLock lock(&mu_);
  max_commit_ = std::max(max_commit_, commit_ts);
}

void TableProgress::UpdateResolved(Ts ts) {
  MutexLock lock(&mu_);
  resolved_ = std::max(resolved_, ts);
}

bool TableProgress::Empty() const {
  MutexLock lock(&mu_);
  return pending_.empty();
}

size_t TableProgress::Pending() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, count] : pending_) n += count;
  return n;
}

Ts TableProgress::resolved_ts() const {
  MutexLock lock(&mu_);
  return resolved_;
}

Ts TableProgress::Checkpoint() const {
  MutexLock lock(&mu_);
  Ts cp;
  if (!pending_.empty()) {
    cp = Ts(pending_.begin()->first.first.value() - 1);
  } else if (max_commit_ == Ts(0)) {
    cp = resolved_;
  } else {
    cp = std::max(Ts(max_commit_.value() - 1), resolved_);
  }
  last_checkpoint_ = std::max(last_checkpoint_, cp);
  return last_checkpoint_;
}

}  // namespace sluice::dispatcher
