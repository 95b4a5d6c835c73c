// ConflictDetector: TiCDC's causality module for the MySQL sink. Each added
// transaction carries conflict keys (hashes of the rows it touches). A
// transaction is handed to one worker queue only when every earlier
// transaction sharing a key with it is finished, or is queued on that same
// worker (then the worker's FIFO order keeps them in order). Transactions
// without common keys go to the least loaded worker and run in parallel, or,
// within a slack, to a worker where the batch they land in stays of one
// group (table), so that a worker's batch needs fewer statements.
// The latest ticket per key lives in an open-addressing hash map (no
// allocation per key); TiCDC's fixed array of slots was not taken, because a
// sink holding thousands of queued rows would find false conflicts on most
// transactions and lose its parallelism.
//
// Thread-safe: Add() from any thread (it never blocks); Pop() by worker `w`
// only; Finish() by the worker that popped the ticket, in pop order. One
// mutex guards everything. Tickets are owned by the detector: valid from
// Pop() until Finish(), or until Close() + destruction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/thread_annotations.h"

namespace sluice::sink {

template <typename T>
class ConflictDetector {
 public:
  struct Ticket {
    Ticket(T i, size_t w) : item(std::move(i)), weight(w) {}

    T item;
    size_t weight = 1;   // Rows; Pop() batches up to a weight.
    uint64_t group = 0;  // Affinity (the table): see Add().

   private:
    friend class ConflictDetector;
    uint64_t id = 0;
    uint64_t dep_mark = 0;           // Id of the last ticket that counted this one as a dependency.
    std::vector<uint64_t> keys;      // Unique.
    std::vector<Ticket*> dependers;  // Later tickets waiting on this one.
    Ticket* prev_live = nullptr;     // The detector's list of live tickets.
    Ticket* next_live = nullptr;
    size_t unfinished_deps = 0;
    size_t assigned_deps = 0;  // Of the unfinished deps, those queued somewhere.
    int common_worker = -1;    // Worker of the queued deps; kMixed when they differ.
    int worker = -1;
  };

  // `affinity_slack`: how much more queued weight than the least loaded
  // worker a worker may have and still get a transaction of its group.
  // `batch_weight`: the `max_weight` the workers pass to Pop(), so that a
  // transaction can be placed where it starts a batch rather than joining
  // one of another group (0: unknown).
  explicit ConflictDetector(size_t num_workers, size_t affinity_slack = 0, size_t batch_weight = 0)
      : queues_(num_workers),
        cvs_(num_workers),
        queued_weight_(num_workers, 0),
        open_weight_(num_workers, 0),
        affinity_slack_(affinity_slack),
        batch_weight_(batch_weight) {}
  ~ConflictDetector() {
    while (live_ != nullptr) {
      Ticket* next = live_->next_live;
      delete live_;
      live_ = next;
    }
  }
  ConflictDetector(const ConflictDetector&) = delete;
  ConflictDetector& operator=(const ConflictDetector&) = delete;

  // Adds a transaction; `keys` need not be unique. Ignored after Close().
  // A transaction free to go anywhere goes to the least loaded worker, or,
  // within the affinity slack of it, to one where its batch holds only its
  // `group` (see ChooseWorkerLocked), so that a worker's batch tends to hold
  // one group (the MySQL sink's groups are tables: one statement per table).
  void Add(std::vector<uint64_t> keys, T item, size_t weight, uint64_t group = 0) EXCLUDES(mu_) {
    auto* t = new Ticket(std::move(item), std::max<size_t>(weight, 1));
    t->group = group;
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    t->keys = std::move(keys);
    MutexLock lock(&mu_);
    if (closed_) {
      delete t;
      return;
    }
    t->id = next_id_++;
    LinkLive(t);
    for (uint64_t k : t->keys) {
      Ticket*& slot = slots_[k];
      if (slot != nullptr && slot->dep_mark != t->id) {
        slot->dep_mark = t->id;
        slot->dependers.push_back(t);
        ++t->unfinished_deps;
        if (slot->worker >= 0) NoteAssigned(t, slot->worker);
      }
      slot = t;
    }
    std::vector<Ticket*> work{t};
    ResolveLocked(&work);
  }

  // Waits until worker `w` has tickets, then moves tickets into `out` in
  // queue order until their weight reaches `max_weight` (at least one).
  // False once the detector is closed and the queue is empty.
  bool Pop(size_t w, size_t max_weight, std::vector<Ticket*>* out) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (queues_[w].empty() && !closed_) cvs_[w].Wait(&mu_);
    if (queues_[w].empty()) return false;
    size_t weight = 0;
    while (!queues_[w].empty() &&
           (weight == 0 || weight + queues_[w].front()->weight <= max_weight)) {
      Ticket* t = queues_[w].front();
      queues_[w].pop_front();
      queued_weight_[w] -= t->weight;
      weight += t->weight;
      out->push_back(t);
    }
    if (queues_[w].empty()) open_weight_[w] = 0;
    return true;
  }

  // The ticket's transaction is written: later conflicting ones may go.
  // Deletes the ticket. A worker finishes its tickets in the order it popped
  // them (a ticket queued behind a dependency on the same worker is finished
  // after it).
  void Finish(Ticket* t) EXCLUDES(mu_) { Finish(std::vector<Ticket*>{t}); }

  // Finish() for each of `tickets`, in order, under one lock acquisition
  // (a worker's whole batch: the lock is shared with Add() and every worker).
  void Finish(const std::vector<Ticket*>& tickets) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    // The slots sit all over a map of up to max-queued keys: their loads
    // are started for the whole batch before the first is needed.
    for (const Ticket* t : tickets) {
      for (uint64_t k : t->keys) slots_.prefetch(k);
    }
    std::vector<Ticket*> work;
    for (Ticket* t : tickets) {
      FinishLocked(t, &work);
      // Before the next ticket is deleted: it may be one of `work`.
      ResolveLocked(&work);
    }
    if (live_ == nullptr) idle_.SignalAll();
  }

  // Wakes every Pop(); queued tickets are still handed out, waiting ones are
  // abandoned (destroyed with the detector).
  void Close() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    closed_ = true;
    for (CondVar& cv : cvs_) cv.SignalAll();
    idle_.SignalAll();
  }

  // Transactions added and not finished (queued, waiting or being written).
  size_t pending() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return live_count_;
  }

  // Blocks until nothing is pending or the detector is closed.
  void WaitIdle() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (live_ != nullptr && !closed_) idle_.Wait(&mu_);
  }

  // Tickets queued on worker `w` and not popped yet.
  size_t queued(size_t w) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return queues_[w].size();
  }

  size_t num_workers() const { return queues_.size(); }

 private:
  static constexpr int kMixed = -2;

  void LinkLive(Ticket* t) REQUIRES(mu_) {
    t->next_live = live_;
    if (live_ != nullptr) live_->prev_live = t;
    live_ = t;
    ++live_count_;
  }

  void UnlinkLive(Ticket* t) REQUIRES(mu_) {
    if (t->prev_live != nullptr) t->prev_live->next_live = t->next_live;
    if (t->next_live != nullptr) t->next_live->prev_live = t->prev_live;
    if (live_ == t) live_ = t->next_live;
    --live_count_;
  }

  void FinishLocked(Ticket* t, std::vector<Ticket*>* work) REQUIRES(mu_) {
    for (uint64_t k : t->keys) {
      auto it = slots_.find(k);
      if (it != slots_.end() && it->second == t) slots_.erase(it);
    }
    for (Ticket* d : t->dependers) {
      --d->unfinished_deps;
      --d->assigned_deps;
      work->push_back(d);
    }
    UnlinkLive(t);
    delete t;
  }

  static void NoteAssigned(Ticket* t, int worker) {
    ++t->assigned_deps;
    if (t->common_worker == -1) {
      t->common_worker = worker;
    } else if (t->common_worker != worker) {
      t->common_worker = kMixed;
    }
  }

  // Queues every ticket of `work` (and, transitively, their dependers) that
  // can go now.
  void ResolveLocked(std::vector<Ticket*>* work) REQUIRES(mu_) {
    while (!work->empty()) {
      Ticket* t = work->back();
      work->pop_back();
      if (t->worker >= 0) continue;
      int target;
      if (t->unfinished_deps == 0) {
        target = ChooseWorkerLocked(t->group, t->weight);
      } else if (t->assigned_deps == t->unfinished_deps && t->common_worker >= 0) {
        target = t->common_worker;
      } else {
        continue;
      }
      t->worker = target;
      if (StartsBatch(static_cast<size_t>(target), t->weight)) {
        open_weight_[target] = t->weight;
      } else {
        open_weight_[target] += t->weight;
      }
      queues_[target].push_back(t);
      queued_weight_[target] += t->weight;
      cvs_[target].Signal();
      for (Ticket* d : t->dependers) {
        NoteAssigned(d, target);
        work->push_back(d);
      }
    }
  }

  // Whether a ticket of `weight` queued on worker `w` now would start a
  // batch of its own when Pop() cuts the queue into batches of
  // `batch_weight_` (as it does, greedily from the front).
  bool StartsBatch(size_t w, size_t weight) const REQUIRES(mu_) {
    if (queues_[w].empty()) return true;
    return batch_weight_ > 0 && open_weight_[w] + weight > batch_weight_;
  }

  // The least loaded worker, unless one within the affinity slack of it
  // keeps the batch the ticket lands in to one group: first a worker whose
  // last queued ticket has the group and whose last batch has room, then
  // one whose last queued ticket has the group (the ticket starts the next
  // batch behind it), then one where the ticket starts a batch.
  int ChooseWorkerLocked(uint64_t group, size_t weight) REQUIRES(mu_) {
    size_t best = next_rr_++ % queues_.size();
    for (size_t i = 0; i < queues_.size(); ++i) {
      if (queued_weight_[i] < queued_weight_[best]) best = i;
    }
    if (affinity_slack_ == 0) return static_cast<int>(best);
    const size_t limit = queued_weight_[best] + affinity_slack_;
    struct Pick {
      size_t worker = SIZE_MAX;
      size_t queued = 0;
    };
    Pick joins;    // Same group, room in its last batch.
    Pick follows;  // Same group, starts a batch after it.
    Pick starts;   // Starts a batch.
    auto offer = [](Pick* pick, size_t worker, size_t queued) {
      if (pick->worker == SIZE_MAX || queued < pick->queued) *pick = Pick{worker, queued};
    };
    for (size_t i = 0; i < queues_.size(); ++i) {
      const size_t queued = queued_weight_[i];
      if (queued > limit) continue;
      const bool same = !queues_[i].empty() && queues_[i].back()->group == group;
      const bool fresh = StartsBatch(i, weight);
      if (same) {
        offer(fresh ? &follows : &joins, i, queued);
      } else if (fresh) {
        offer(&starts, i, queued);
      }
    }
    for (const Pick* pick : {&joins, &follows, &starts}) {
      if (pick->worker != SIZE_MAX) return static_cast<int>(pick->worker);
    }
    return static_cast<int>(best);
  }

  mutable Mutex mu_;
  std::vector<std::deque<Ticket*>> queues_ GUARDED_BY(mu_);
  std::vector<CondVar> cvs_;
  CondVar idle_;
  std::vector<size_t> queued_weight_ GUARDED_BY(mu_);
  // Weight of the last batch Pop() would cut from each queue.
  std::vector<size_t> open_weight_ GUARDED_BY(mu_);
  const size_t affinity_slack_;
  const size_t batch_weight_;
  absl::flat_hash_map<uint64_t, Ticket*> slots_ GUARDED_BY(mu_);  // Key -> latest ticket.
  Ticket* live_ GUARDED_BY(mu_) = nullptr;  // Owned: every ticket not finished.
  size_t live_count_ GUARDED_BY(mu_) = 0;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  size_t next_rr_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::sink
