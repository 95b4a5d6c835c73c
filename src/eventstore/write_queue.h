// WriteQueue: the write queue of one RocksDB instance. Workers take tasks in
// rounds of up to a number of entries. While some subscription is urgent
// (a resolved ts waits for batches it handed over), a round takes the
// queued tasks of urgent subscriptions first, then fills up with tasks from
// the front: one subscription's backlog is persisted, and its resolved ts
// published, ahead of backlogs nobody waits for yet. Otherwise a round is
// FIFO. At most kMaxBypassRounds rounds in a row pass over the task at the
// front, so every task is written eventually.
//
// Each subscription's tasks leave in the order they came: a round reads each
// subscription's urgency once, and takes the tasks it picks from the front
// onwards.
//
// Thread-safe: any thread may Push() and AddUrgent(); workers call
// PopRound(); the owner calls Close() and TakeAll().
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"

namespace sluice::eventstore {

template <typename T>
class WriteQueue {
 public:
  // How many entries a task holds; which subscription it belongs to; whether
  // that subscription is urgent now. Called with the queue's lock held; they
  // must not block.
  using SizeFn = std::function<size_t(const T&)>;
  using SubFn = std::function<const void*(const T&)>;
  using UrgentFn = std::function<bool(const T&)>;

  static constexpr int kMaxBypassRounds = 8;

  WriteQueue(SizeFn size, SubFn sub, UrgentFn urgent)
      : size_(std::move(size)), sub_(std::move(sub)), urgent_(std::move(urgent)) {}
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

  // The owner of the urgency flags reports each change (+1 when a
  // subscription becomes urgent, -1 when it stops being so): rounds look for
  // urgent tasks only while the count is positive.
  void AddUrgent(int delta) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    urgent_subs_ += delta;
  }

  // Blocks until a task is queued, then moves at least one task and at most
  // `max_entries` entries of tasks (or one larger task) into `*out`
  // (appended). False, with nothing moved, once the queue is closed and
  // empty.
  bool PopRound(size_t max_entries, std::vector<T>* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (tasks_.empty() && !closed_) cv_.Wait(&mu_);
    if (tasks_.empty()) return false;
    size_t entries = 0;
    bool front_taken = true;
    if (urgent_subs_ > 0 && bypass_rounds_ < kMaxBypassRounds) {
      entries = TakeUrgent(max_entries, out, &front_taken);
    }
    if (entries == 0 || entries < max_entries) {
      front_taken = TakeFront(max_entries, entries, out) || front_taken;
    }
    bypass_rounds_ = front_taken ? 0 : bypass_rounds_ + 1;
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
  size_t Entries(const T& task) const { return std::max<size_t>(1, size_(task)); }

  // Moves the tasks of urgent subscriptions (each read once) from the front
  // onwards, up to `max_entries`; returns their entries and whether the
  // front task was among them.
  size_t TakeUrgent(size_t max_entries, std::vector<T>* out, bool* front_taken) REQUIRES(mu_) {
    std::unordered_map<const void*, bool> urgent;
    auto is_urgent = [&](const T& task) {
      auto [it, added] = urgent.try_emplace(sub_(task), false);
      if (added) it->second = urgent_(task);
      return it->second;
    };
    size_t entries = 0;
    *front_taken = is_urgent(tasks_.front());
    for (auto it = tasks_.begin(); it != tasks_.end() && entries < max_entries;) {
      if (!is_urgent(*it)) {
        ++it;
        continue;
      }
      entries += Entries(*it);
      out->push_back(std::move(*it));
      it = tasks_.erase(it);
    }
    return entries;
  }

  // Moves tasks from the front while the round (already holding `entries`)
  // has room, at least one task in all. True if it moved any.
  bool TakeFront(size_t max_entries, size_t entries, std::vector<T>* out) REQUIRES(mu_) {
    bool moved = false;
    while (!tasks_.empty() && (entries == 0 || entries < max_entries)) {
      entries += Entries(tasks_.front());
      out->push_back(std::move(tasks_.front()));
      tasks_.pop_front();
      moved = true;
    }
    return moved;
  }

  const SizeFn size_;
  const SubFn sub_;
  const UrgentFn urgent_;
  mutable Mutex mu_;
  CondVar cv_;
  std::list<T> tasks_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  int urgent_subs_ GUARDED_BY(mu_) = 0;    // Urgent subscriptions (AddUrgent).
  int bypass_rounds_ GUARDED_BY(mu_) = 0;  // Rounds in a row that passed the front.
};

}  // namespace sluice::eventstore
