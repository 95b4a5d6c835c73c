// WriteQueue: the write queue of one RocksDB instance. Workers take tasks in
// rounds (up to a number of entries); a round goes first to the tasks of
// urgent subscriptions, those whose resolved ts waits for batches still
// queued here, so that one subscription's backlog is persisted (and its
// resolved ts published) ahead of backlogs nobody waits for yet. Without
// urgent tasks a round is FIFO. At most kMaxBypassRounds rounds in a row pass
// over a non-urgent task at the front, so every task is written eventually.
//
// Each subscription's tasks leave in the order they came: a round takes the
// matching tasks from the front onwards, and a subscription is either urgent
// for the whole round or not.
//
// Thread-safe: any thread may Push(); workers call PopRound(); the owner
// calls Close() and TakeAll().
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <list>
#include <vector>

#include "common/thread_annotations.h"

namespace sluice::eventstore {

template <typename T>
class WriteQueue {
 public:
  // How many entries a task holds, and whether its subscription is urgent
  // now. Both are called with the queue's lock held and must not block.
  using SizeFn = std::function<size_t(const T&)>;
  using UrgentFn = std::function<bool(const T&)>;

  static constexpr int kMaxBypassRounds = 8;

  WriteQueue(SizeFn size, UrgentFn urgent) : size_(std::move(size)), urgent_(std::move(urgent)) {}
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // False (and `*task` untouched) once closed.
  bool Push(T* task) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return false;
    tasks_.push_back(std::move(*task));
    cv_.Signal();
    return true;
  }

  // Blocks until a task is queued, then moves at least one task and at most
  // `max_entries` entries of tasks into `*out` (appended). False, with
  // nothing moved, once the queue is closed and empty.
  bool PopRound(size_t max_entries, std::vector<T>* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (tasks_.empty() && !closed_) cv_.Wait(&mu_);
    if (tasks_.empty()) return false;
    const size_t before = out->size();
    if (bypass_rounds_ < kMaxBypassRounds) TakeUrgent(max_entries, out);
    if (out->size() == before) {
      bypass_rounds_ = 0;
      TakeFront(max_entries, out);
    }
    return true;
  }

  // Wakes the workers; Push() fails from now on. Queued tasks stay for
  // PopRound() and TakeAll().
  void Close() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    closed_ = true;
    cv_.SignalAll();
  }

  // Moves every queued task into `*out` (appended), in queue order.
  void TakeAll(std::vector<T>* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (T& task : tasks_) out->push_back(std::move(task));
    tasks_.clear();
  }

  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return tasks_.size();
  }

 private:
  // The urgent tasks from the front, up to `max_entries`; counts a bypass
  // when the front task is not among them.
  void TakeUrgent(size_t max_entries, std::vector<T>* out) REQUIRES(mu_) {
    size_t entries = 0;
    bool front_taken = false;
    for (auto it = tasks_.begin(); it != tasks_.end() && entries < max_entries;) {
      if (!urgent_(*it)) {
        ++it;
        continue;
      }
      front_taken = front_taken || it == tasks_.begin();
      entries += std::max<size_t>(1, size_(*it));
      out->push_back(std::move(*it));
      it = tasks_.erase(it);
    }
    if (entries == 0) return;
    bypass_rounds_ = front_taken ? 0 : bypass_rounds_ + 1;
  }

  void TakeFront(size_t max_entries, std::vector<T>* out) REQUIRES(mu_) {
    size_t entries = 0;
    while (!tasks_.empty() && (entries == 0 || entries < max_entries)) {
      entries += std::max<size_t>(1, size_(tasks_.front()));
      out->push_back(std::move(tasks_.front()));
      tasks_.pop_front();
    }
  }

  const SizeFn size_;
  const UrgentFn urgent_;
  mutable Mutex mu_;
  CondVar cv_;
  std::list<T> tasks_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  int bypass_rounds_ GUARDED_BY(mu_) = 0;  // Rounds in a row that passed the front.
};

}  // namespace sluice::eventstore
